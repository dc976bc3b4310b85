"""What the engine reports: one ``RoundEvent`` per round, JSON-ready, plus a run summary.

Distributions over a 49k-token vocabulary are kept compactly as ``TopTokens``: the N most
likely token ids with their exact float64 probabilities (taken from the processed
distributions the accept/reject decision used) and the remaining mass as ``other``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from specdec_core import theory

#: Token kinds: the three of speculative decoding, and "target" for a target-only step.
KINDS: tuple[str, ...] = ("accepted", "corrected", "bonus", "target")


@dataclass(frozen=True)
class TopTokens:
    """A distribution in brief: ``ids`` and ``probs`` (most likely first), ``other`` = the rest."""

    ids: list[int]
    probs: list[float]
    other: float

    @classmethod
    def from_probs(cls, probs: np.ndarray, n: int) -> TopTokens:
        """The `n` most likely tokens of a float64 distribution (zeros left out)."""
        if n <= 0:
            return cls([], [], float(probs.sum()))
        k = min(n, probs.size)
        top = np.argpartition(-probs, k - 1)[:k] if k < probs.size else np.arange(probs.size)
        top = top[np.lexsort((top, -probs[top]))]
        top = top[probs[top] > 0]
        kept = probs[top]
        return cls([int(i) for i in top], [float(p) for p in kept], max(0.0, float(1.0 - kept.sum())))

    @classmethod
    def one_hot(cls, token: int) -> TopTokens:
        return cls([int(token)], [1.0], 0.0)

    def prob(self, token: int) -> float | None:
        """The probability of `token` if it is listed, else None (it is then ≤ ``other``)."""
        try:
            return self.probs[self.ids.index(int(token))]
        except ValueError:
            return None

    def to_dict(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "probs": list(self.probs), "other": self.other}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TopTokens:
        return cls([int(i) for i in data["ids"]], [float(p) for p in data["probs"]], float(data["other"]))


@dataclass(frozen=True)
class RoundEvent:
    """One round of speculative decoding (or one target-only step).

    Tokens: ``draft_tokens`` (proposed this round, may be fewer than ``gamma`` for an n-gram
    draft), ``accepted_count``, ``committed`` (the 1 … gamma+1 ids this round adds; cut
    after EOS) and ``kinds`` (one per committed token: "accepted", "corrected", "bonus", or
    "target" in ``autoregressive`` runs). A round with no drafts (an n-gram without a match,
    or γ = 0 chosen by the adaptive controller) commits one "bonus" token: the target's own
    choice, as in a plain decoding step.

    Distributions (after the sampling transforms, exactly the ones verified): ``q_rows[i]``
    is the draft's law for ``draft_tokens[i]``; ``p_rows[i]`` the target's law at the same
    position, for each position the verification used: the examined drafts', then the
    bonus position's when every draft was accepted (one row per token the round produced,
    so ``len(p_rows) == len(committed)`` unless the round was cut after EOS). Rows past the
    first rejection are never computed (the target's logits are read on demand), so they
    are not reported. ``draft_q[i]`` is the exact q(x) of every draft token; ``draft_p[i]``
    the exact p(x) and ``acceptance_probs[i]`` = min(1, p/q) of each examined draft (the
    first ``accepted_count + rejected`` ones). Rows are empty when the run keeps none
    (``top_n=0``).

    Timings in seconds: ``draft_s`` (drafting, including the draft's sampling), ``verify_s``
    (the target's forward pass; in autoregressive runs its decode step), ``overhead_s``
    (everything else in the round: transforms, accept/reject, cache rollback), and
    ``prefill_s`` (the prompt's forward passes of both models, first event only);
    ``draft_step_s[i]`` the seconds of the draft's i-th step (its forward pass and draw; empty
    for a proposer, which runs none, and in tree rounds).
    ``draft_forwards`` / ``target_forwards`` count forward passes this round (prefill not
    included; an n-gram draft runs none). ``position`` = tokens generated before this
    round; ``stop_reason`` is "eos" or "max_new_tokens" on the last event, else None;
    ``rejected`` tells whether the target rejected a draft this round. ``extra`` is free
    JSON data (e.g. the adaptive controller's state).

    Inside the round (chain rounds; empty in tree rounds and target-only steps):
    ``draft_u[i]`` is the uniform draw u the accept test compared with
    ``acceptance_probs[i]`` (accepted when u < min(1, p/q)), one per examined draft; ``cache``
    gives, per model ("target", and "draft" when the draft is a model with a session), the
    positions its session held before the round, after its forward passes, and after the
    rollback: ``[before, peak, after]``. The committed token after the last accepted draft
    (corrected or bonus) is not in either cache yet: it is fed next round.
    """

    index: int
    mode: str
    gamma: int
    draft_tokens: list[int]
    accepted_count: int
    committed: list[int]
    kinds: list[str]
    acceptance_probs: list[float]
    draft_q: list[float]
    draft_p: list[float]
    q_rows: list[TopTokens]
    p_rows: list[TopTokens]
    draft_s: float
    verify_s: float
    overhead_s: float
    prefill_s: float
    draft_forwards: int
    target_forwards: int
    position: int
    stop_reason: str | None = None
    rejected: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    #: a tree round's tree (``engine.verification.tree_record``): tokens, parents, depths, status of
    #: every node, the accepted ``path`` and each node's q / p top-N; None in a chain round
    tree: dict[str, Any] | None = None
    draft_u: list[float] = field(default_factory=list)
    draft_step_s: list[float] = field(default_factory=list)
    cache: dict[str, list[int]] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        """Compute time of this round (prefill included on the first event)."""
        return self.draft_s + self.verify_s + self.overhead_s + self.prefill_s

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        """Plain JSON-serialisable data; ``timings=False`` drops the (run-dependent) seconds."""
        out = asdict(self)
        if not timings:
            for key in (*_TIMING_FIELDS, "draft_step_s"):
                out.pop(key)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundEvent:
        """Rebuild an event from :meth:`to_dict` output (missing timings read as 0)."""
        kwargs = dict(data)
        for key in _ROW_FIELDS:
            kwargs[key] = [TopTokens.from_dict(r) for r in data.get(key, [])]
        for key in _TIMING_FIELDS:
            kwargs.setdefault(key, 0.0)
        kwargs.setdefault("extra", {})
        kwargs.setdefault("draft_step_s", [])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in kwargs.items() if k in known})


_ROW_FIELDS = ("q_rows", "p_rows")
_TIMING_FIELDS = ("draft_s", "verify_s", "overhead_s", "prefill_s")


@dataclass(frozen=True)
class RunSummary:
    """Totals of a run: tokens, rounds, acceptance, time and forward passes."""

    tokens: int
    rounds: int
    drafted: int
    accepted: int
    rejections: int
    seconds: float
    draft_s: float
    verify_s: float
    overhead_s: float
    prefill_s: float
    draft_forwards: int
    target_forwards: int

    @property
    def alpha(self) -> float | None:
        """Per-draft acceptance estimate: accepted / (accepted + rejections); None if none examined."""
        return theory.measured_alpha(self.accepted, self.accepted + self.rejections)

    @property
    def acceptance_rate(self) -> float:
        """:attr:`alpha`, NaN instead of None when no draft was examined."""
        alpha = self.alpha
        return float("nan") if alpha is None else alpha

    @property
    def tokens_per_round(self) -> float:
        return self.tokens / self.rounds if self.rounds else 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def decode_s(self) -> float:
        """Generation time without the prompt's prefill (what the theory describes)."""
        return self.seconds - self.prefill_s


def summarize(events: Iterable[RoundEvent]) -> RunSummary:
    """Add up a run's events."""
    evs = list(events)
    return RunSummary(
        tokens=sum(len(e.committed) for e in evs),
        rounds=len(evs),
        drafted=sum(len(e.draft_tokens) for e in evs),
        accepted=sum(e.accepted_count for e in evs),
        rejections=sum(1 for e in evs if e.rejected),
        seconds=sum(e.total_s for e in evs),
        draft_s=sum(e.draft_s for e in evs),
        verify_s=sum(e.verify_s for e in evs),
        overhead_s=sum(e.overhead_s for e in evs),
        prefill_s=sum(e.prefill_s for e in evs),
        draft_forwards=sum(e.draft_forwards for e in evs),
        target_forwards=sum(e.target_forwards for e in evs),
    )
