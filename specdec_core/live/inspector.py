"""One position of a live run, turned into the inputs of the lessons' figures.

An event keeps each distribution in brief: the top N ids of p and of q with their exact
probabilities, and the rest as one ``other`` mass. A token's p (or q) is *known* when it is
listed, or when its row has no other mass (an unlisted token then has probability 0).
The figures get one bar per token whose p and q are both known (at most ``max_tokens``,
the largest first; the draft token and the emitted token are always among them when
known). Everything else is *pooled*, and the pool is shown honestly:

* its totals p(pool) and q(pool) are exact;
* the part of min(p, q) inside it that is known (from known tokens that did not get a bar)
  is drawn as one shared bucket, "other: both" (p = q = that part);
* the rest of the pool is drawn as "other: p only" and "other: q only", i.e. as if the
  unknown tokens did not overlap. That is a lower bound: an unlisted token's probability
  is at most the smallest listed one of its row, so how much more they *could* share is
  bounded, and :attr:`PositionView.alpha` gives the exact interval for the acceptance
  rate Σ min(p, q) at this position (one value when nothing is unknown).

The decision (draft token, q(x), p(x), min(1, p/q), verdict, emitted token) is exact: the
engine records it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdec_core.engine import RoundEvent, TopTokens

#: Row mass below this counts as none (float rounding of 1 - sum of the listed probabilities).
ZERO_MASS = 1e-12
#: Pool buckets, in drawing order: the known shared part, then p's and q's remaining mass.
POOL_BOTH, POOL_P, POOL_Q = "pool_both", "pool_p", "pool_q"


def slot_kind(event: RoundEvent, index: int) -> str:
    """The kind shown for committed position `index`: the engine's, except that the one token
    of a round without drafts (which the engine calls "bonus") is a plain target step."""
    kind = event.kinds[index]
    return "target" if kind == "bonus" and not event.draft_tokens else kind


def short_chain(event: RoundEvent) -> str | None:
    """Why a chain round drafted fewer tokens than its γ, or None (it drafted γ, or none, or a tree).

    "confidence": a draft with a confidence floor (the trained head) ended its chain. Its
    drafter runs one forward more than it keeps only then: the pass that priced the token left
    out (``engine.drafters.ModelDrafter``). "lookup": a draft that runs no forward (n-gram
    prompt lookup) found a shorter continuation of its match.
    """
    kept = len(event.draft_tokens)
    if event.tree is not None or kept == 0 or kept >= event.gamma:
        return None
    if event.draft_forwards > kept:
        return "confidence"
    return "lookup" if event.draft_forwards == 0 else None


@dataclass(frozen=True)
class PositionView:
    """p and q at one position, pooled for display, with the decision taken there.

    ``ids[i]`` is the token id of bar i, or one of :data:`POOL_BOTH`, :data:`POOL_P`,
    :data:`POOL_Q` for the pool's buckets (last, only those with mass). ``p`` / ``q`` are
    distributions over these bars (sum 1; ``q`` is None where no draft was examined: a
    bonus or target-only token). ``pool_size`` counts the vocabulary tokens without a bar.
    ``alpha`` = (low, high): exact bounds of Σ min(p, q) at this position; the figures
    draw ``low``. Decision: ``draft_token``, ``q_x``, ``p_x``, ``accept_prob`` =
    min(1, p/q), ``accepted`` (None without a draft), ``emitted`` (the committed token).
    """

    index: int
    kind: str
    ids: list[int | str]
    p: np.ndarray
    q: np.ndarray | None
    pool_size: int
    alpha: tuple[float, float] | None
    draft_token: int | None
    q_x: float | None
    p_x: float | None
    accept_prob: float | None
    accepted: bool | None
    emitted: int
    one_hot: bool

    @property
    def has_pool(self) -> bool:
        return any(isinstance(t, str) for t in self.ids)

    @property
    def exact(self) -> bool:
        """True when the acceptance rate here is known exactly (or there is no draft)."""
        return self.alpha is None or self.alpha[1] - self.alpha[0] <= ZERO_MASS

    def bar(self, token: int) -> int | None:
        """The bar of `token`, or None when it is pooled."""
        return self.ids.index(token) if token in self.ids else None

    @property
    def emitted_bar(self) -> int:
        """The bar of the emitted token at a drafted position; a pooled replacement is drawn
        from the pool's deficit, so it is the :data:`POOL_P` bar."""
        bar = self.bar(self.emitted)
        return self.ids.index(POOL_P) if bar is None else bar


def _known(row: TopTokens, token: int) -> float | None:
    prob = row.prob(token)
    if prob is None and row.other <= ZERO_MASS:
        return 0.0
    return prob


def _cap(row: TopTokens) -> float:
    """Largest probability an unlisted token of `row` can have."""
    if row.other <= ZERO_MASS:
        return 0.0
    return min(row.other, min(row.probs)) if row.probs else row.other


def _unknown_overlap(
    p_row: TopTokens, q_row: TopTokens, known: set[int], p_rest: float, q_rest: float
) -> float:
    """Upper bound of Σ min(p, q) over the tokens whose p or q is not known."""
    q_cap, p_cap = _cap(q_row), _cap(p_row)
    only_p = sum(min(p, q_cap) for t, p in zip(p_row.ids, p_row.probs, strict=True) if t not in known)
    only_q = sum(min(q, p_cap) for t, q in zip(q_row.ids, q_row.probs, strict=True) if t not in known)
    neither = min(p_row.other, q_row.other)
    return max(0.0, min(only_p + only_q + neither, p_rest, q_rest))


def position_view(event: RoundEvent, index: int, vocab_size: int, max_tokens: int = 10) -> PositionView:
    """The figures' inputs at committed position `index` of `event` (see the module docstring)."""
    if not 0 <= index < len(event.committed):
        raise ValueError(
            f"round {event.index} has {len(event.committed)} committed tokens; no position {index}."
        )
    if index >= len(event.p_rows):
        raise ValueError("this run kept no probability rows (top_n = 0), so there is nothing to inspect.")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
    kind = slot_kind(event, index)
    emitted = int(event.committed[index])
    p_row = event.p_rows[index]
    drafted = kind in ("accepted", "corrected") and index < len(event.q_rows)
    q_row = event.q_rows[index] if drafted else None
    draft = int(event.draft_tokens[index]) if drafted else None

    known: dict[int, tuple[float, float]] = {}
    for t in {*p_row.ids, *(q_row.ids if q_row else [])}:
        p_t = _known(p_row, t)
        q_t = _known(q_row, t) if q_row else 0.0
        if p_t is not None and q_t is not None:
            known[t] = (p_t, q_t)
    if draft is not None:  # the engine records q(x) and p(x) of the draft exactly
        known[draft] = (float(event.draft_p[index]), float(event.draft_q[index]))

    order = sorted(known, key=lambda t: (-max(known[t]), t))
    forced = list(dict.fromkeys(t for t in (draft, emitted) if t is not None and t in known))
    shown = [*forced, *[t for t in order if t not in forced]][: max(max_tokens, len(forced))]
    shown.sort(key=order.index)
    pooled = [t for t in known if t not in shown]

    p = [known[t][0] for t in shown]
    p_pool = max(0.0, 1.0 - sum(p))
    ids: list[int | str] = list(shown)
    alpha = None
    if q_row is None:
        if p_pool > ZERO_MASS:
            ids.append(POOL_P)
            p.append(p_pool)
        q_arr = None
    else:
        q = [known[t][1] for t in shown]
        q_pool = max(0.0, 1.0 - sum(q))
        shared = sum(min(known[t]) for t in pooled)
        p_rest = max(0.0, p_pool - sum(known[t][0] for t in pooled))
        q_rest = max(0.0, q_pool - sum(known[t][1] for t in pooled))
        unknown = _unknown_overlap(p_row, q_row, set(known), p_rest, q_rest)
        for bucket, p_b, q_b in (
            (POOL_BOTH, shared, shared),
            (POOL_P, p_pool - shared, 0.0),
            (POOL_Q, 0.0, q_pool - shared),
        ):
            if max(p_b, q_b) > ZERO_MASS:
                ids.append(bucket)
                p.append(max(0.0, p_b))
                q.append(max(0.0, q_b))
        q_arr = np.array(q) / sum(q)
        low = float(np.minimum(np.array(p) / sum(p), q_arr).sum())
        alpha = (low, low + unknown)
    p_arr = np.array(p) / sum(p)
    rows = [p_row] + ([q_row] if q_row else [])
    return PositionView(
        index=index,
        kind=kind,
        ids=ids,
        p=p_arr,
        q=q_arr,
        pool_size=max(0, vocab_size - len(shown)) if len(ids) > len(shown) else 0,
        alpha=alpha,
        draft_token=draft,
        q_x=float(event.draft_q[index]) if drafted else None,
        p_x=float(event.draft_p[index]) if drafted else _known(p_row, emitted),
        accept_prob=float(event.acceptance_probs[index]) if drafted else None,
        accepted=(kind == "accepted") if drafted else None,
        emitted=emitted,
        one_hot=all(len(r.ids) == 1 and r.other <= ZERO_MASS for r in rows),
    )
