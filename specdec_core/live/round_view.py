"""One chain round of a live run, as the plain data the "One round, inside the model" page draws.

Everything comes from that round's recorded ``RoundEvent`` and the tokens committed before it:
the timeline of the draft's steps and the target's one verification pass (measured seconds),
the verification pass as rows (what each row saw under the causal mask, q and p of the drafted
token, the accept test's u against min(1, p/q), where the first rejection stops the reading),
and each model's session before and after the round (kept, cut, and the token still to feed).
Nothing is recomputed from a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specdec_core.engine import RoundEvent

#: The page's stages, in the order a round runs them.
STAGES: tuple[str, ...] = ("draft", "verify", "test", "cache")
#: Tokens before the round's first input that the mask and the cache figures show.
CONTEXT_SHOWN = 4


@dataclass(frozen=True)
class Step:
    """One bar of the timeline: ``kind`` "draft" (step ``index``), "lookup", "verify" or "rest"."""

    kind: str
    index: int
    start_s: float
    seconds: float


@dataclass(frozen=True)
class Row:
    """Row ``index`` of the verification pass (0 … number of drafts).

    ``input`` is the token this row read (the last committed token, then the drafts);
    ``checks`` the draft it verifies (None on the last row, the bonus row); ``status`` is
    "accepted", "rejected", "bonus" (the row whose p gave the bonus), or "unread" (computed by
    the pass, never read: past the first rejection); ``emitted`` the token committed at this
    row's position (None when unread); ``slot`` that token's index in the round (the live
    inspector's position).
    """

    index: int
    input: int
    checks: int | None
    q: float | None
    p: float | None
    accept_prob: float | None
    u: float | None
    status: str
    emitted: int | None
    kind: str | None
    slot: int | None


@dataclass(frozen=True)
class Cell:
    """One position of a model's session: its token (None: unknown) and what the round did to
    it: "held" (there before), "kept", "cut" (added, then rolled back), or "next" (committed
    but not in the session yet: it is read first next round)."""

    position: int
    token: int | None
    status: str


@dataclass(frozen=True)
class CacheView:
    """A model's session through the round: ``[before, peak, after]`` positions; ``cells`` at the
    peak (the last :data:`CONTEXT_SHOWN` held ones and every one the round added, kept or cut)
    and ``waiting``, the committed tokens the session has still to read."""

    model: str
    before: int
    peak: int
    after: int
    cells: list[Cell]
    waiting: list[Cell]

    @property
    def cut(self) -> int:
        return self.peak - self.after


@dataclass(frozen=True)
class RoundView:
    """One chain round, ready to draw."""

    index: int
    gamma: int
    drafts: list[int]
    context: list[int]
    rows: list[Row]
    steps: list[Step]
    caches: list[CacheView]
    accepted: int
    committed: int
    rejected_row: int | None
    appended: int
    appended_kind: str
    total_s: float

    @property
    def drafting_s(self) -> float:
        """Seconds of the draft's steps (or its lookup)."""
        return sum(step.seconds for step in self.steps if step.kind in ("draft", "lookup"))

    @property
    def verify_s(self) -> float:
        """Seconds of the target's one verification pass."""
        return sum(step.seconds for step in self.steps if step.kind == "verify")

    def pass_in_steps(self, plain_s: float) -> float:
        """The verification pass in plain target decode steps of `plain_s` seconds (> 0)."""
        return self.verify_s / plain_s

    @property
    def inputs(self) -> list[int]:
        """The tokens of the verification pass: the last committed token, then the drafts."""
        return [row.input for row in self.rows]


def text_before(prompt_ids: Sequence[int], events: Sequence[RoundEvent], index: int) -> list[int]:
    """The prompt and every token committed before round `index`."""
    return [int(t) for t in prompt_ids] + [t for e in events[:index] for t in e.committed]


def timeline(event: RoundEvent) -> list[Step]:
    """The round's measured steps on one time axis: each draft step (or the lookup, or all of
    drafting when steps were not recorded), the verification pass, then the rest of the round."""
    steps: list[Step] = []
    start = 0.0
    if event.draft_step_s:
        for i, seconds in enumerate(event.draft_step_s):
            steps.append(Step("draft", i, start, float(seconds)))
            start += float(seconds)
        start = max(start, float(event.draft_s))
    elif event.draft_s > 0:
        steps.append(Step("lookup" if not event.draft_forwards else "draft", 0, 0.0, float(event.draft_s)))
        start = float(event.draft_s)
    steps.append(Step("verify", 0, start, float(event.verify_s)))
    steps.append(Step("rest", 0, start + float(event.verify_s), float(event.overhead_s)))
    return steps


def _rows(event: RoundEvent, pending: int) -> list[Row]:
    drafts = event.draft_tokens
    examined = len(event.acceptance_probs)
    rows = []
    for i, token in enumerate([pending, *drafts]):
        checks = drafts[i] if i < len(drafts) else None
        read = i < len(event.committed)
        if not read:
            status = "unread"
        elif checks is None:
            status = "bonus"
        else:
            status = "accepted" if event.kinds[i] == "accepted" else "rejected"
        rows.append(
            Row(
                index=i,
                input=int(token),
                checks=checks,
                q=event.draft_q[i] if checks is not None else None,
                p=event.draft_p[i] if i < examined else None,
                accept_prob=event.acceptance_probs[i] if i < examined else None,
                u=event.draft_u[i] if i < len(event.draft_u) else None,
                status=status,
                emitted=event.committed[i] if read else None,
                kind=event.kinds[i] if read else None,
                slot=i if read else None,
            )
        )
    return rows


def _cache(model: str, lengths: Sequence[int], fed: Sequence[int], text: Sequence[int]) -> CacheView:
    """A session's cells: position j held ``fed[j]`` at its peak (the text before the round,
    then the drafts) and is to hold ``text[j]`` (the text after it) from the next round."""
    before, peak, after = (int(n) for n in lengths)
    cells = []
    for j in range(max(0, before - CONTEXT_SHOWN), peak):
        status = "held" if j < before else "kept" if j < after else "cut"
        cells.append(Cell(j, int(fed[j]) if j < len(fed) else None, status))
    waiting = [Cell(j, int(text[j]), "next") for j in range(after, len(text))]
    return CacheView(model, before, peak, after, cells, waiting)


def round_view(prompt_ids: Sequence[int], events: Sequence[RoundEvent], index: int) -> RoundView:
    """The view of chain round `index` of a speculative run (ValueError for a tree round or
    an event without its inside records)."""
    event = events[index]
    if event.tree is not None:
        raise ValueError("a tree round is drawn on the tree drafts page.")
    before = text_before(prompt_ids, events, index)
    pending = before[-1]
    rows = _rows(event, pending)
    rejected = next((r.index for r in rows if r.status == "rejected"), None)
    fed = [*before, *event.draft_tokens]
    text = [*before, *event.committed]
    caches = [
        _cache(model, event.cache[model], fed, text) for model in ("target", "draft") if model in event.cache
    ]
    start = max(0, len(before) - 1 - CONTEXT_SHOWN)
    return RoundView(
        index=event.index,
        gamma=event.gamma,
        drafts=list(event.draft_tokens),
        context=before[start:-1],
        rows=rows,
        steps=timeline(event),
        caches=caches,
        accepted=event.accepted_count,
        committed=len(event.committed),
        rejected_row=rejected,
        appended=event.committed[-1],
        appended_kind=event.kinds[-1],
        total_s=float(event.draft_s + event.verify_s + event.overhead_s),
    )


def plain_step_s(baseline: Sequence[RoundEvent]) -> float | None:
    """The median seconds of a target-only decode step (the baseline's events), None without one."""
    steps = sorted(float(e.verify_s) for e in baseline if e.mode == "autoregressive")
    if not steps:
        return None
    mid = len(steps) // 2
    return steps[mid] if len(steps) % 2 else (steps[mid - 1] + steps[mid]) / 2.0


def chain_rounds(events: Sequence[RoundEvent]) -> list[int]:
    """Indices of the chain rounds a view can draw (tree rounds are drawn elsewhere)."""
    return [i for i, e in enumerate(events) if e.tree is None]
