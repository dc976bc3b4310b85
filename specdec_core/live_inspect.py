"""One position of a live run, turned into the inputs of the lessons' figures.

An event keeps each distribution in brief: the top N ids of p and of q with their exact
probabilities, and the rest as one ``other`` mass. A token's p (or q) is *known* when it is
listed, or when that row has no other mass (then an unlisted token has probability 0).
The figures get one bar per token whose p and q are both known (at most ``max_tokens``,
the largest first, the draft token and the emitted token always among them) and one
pooled "other" bar holding all the remaining mass of p and of q.

The pool is shown honestly: its two totals are exact, but how much of it p and q share
(its part of min(p, q)) is not recorded. The figures treat the pool as one token, which
gives an upper bound; :attr:`PositionView.pool_overlap` gives the bounds, and
:attr:`PositionView.alpha` the resulting exact bounds on the acceptance rate Σ min(p, q)
at this position. The decision (draft token, q(x), p(x), min(1, p/q), verdict, emitted
token) is exact: the engine records it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdec_core.engine import RoundEvent, TopTokens

#: Row mass below this counts as none (float rounding of 1 - sum of the listed probabilities).
ZERO_MASS = 1e-12


@dataclass(frozen=True)
class Slot:
    """A position of a round a UI can inspect: ``index`` in the round and its ``kind``."""

    index: int
    kind: str  # "accepted", "corrected", "bonus" or "target"


def slots(event: RoundEvent) -> list[Slot]:
    """The inspectable positions of a round: one per committed token."""
    return [Slot(i, kind) for i, kind in enumerate(event.kinds)]


@dataclass(frozen=True)
class PositionView:
    """p and q at one position, pooled for display, with the decision taken there.

    ``ids[i]`` is the token of bar i (None for the pool, always last when present);
    ``p`` / ``q`` are the pooled distributions (sum 1; ``q`` is None where no draft was
    examined: a bonus or target-only token). ``pool_size`` counts the vocabulary tokens in
    the pool. ``pool_overlap`` = (low, high) bounds of the pool's real Σ min(p, q);
    ``alpha`` = (low, high) bounds of the acceptance rate Σ min(p, q) at this position
    (equal when exact). Decision: ``draft_token``, ``q_x``, ``p_x``, ``accept_prob`` =
    min(1, p/q), ``accepted`` (None without a draft), ``emitted`` (the committed token).
    """

    round_index: int
    index: int
    kind: str
    ids: list[int | None]
    p: np.ndarray
    q: np.ndarray | None
    pool_size: int
    pool_overlap: tuple[float, float]
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
        return self.ids[-1] is None

    @property
    def exact(self) -> bool:
        """True when the pooled picture loses nothing (the pool's overlap is known)."""
        low, high = self.pool_overlap
        return high - low <= ZERO_MASS


def _known(row: TopTokens, token: int) -> float | None:
    prob = row.prob(token)
    if prob is None and row.other <= ZERO_MASS:
        return 0.0
    return prob


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
    kind = event.kinds[index]
    emitted = int(event.committed[index])
    p_row = event.p_rows[index]
    drafted = kind in ("accepted", "corrected") and index < len(event.q_rows)
    q_row = event.q_rows[index] if drafted else None
    draft = int(event.draft_tokens[index]) if drafted else None

    known: dict[int, tuple[float, float | None]] = {}
    for t in {*p_row.ids, *(q_row.ids if q_row else [])}:
        p_t = _known(p_row, t)
        q_t = _known(q_row, t) if q_row else None
        if p_t is not None and (q_row is None or q_t is not None):
            known[t] = (p_t, q_t)
    if draft is not None:  # the engine records q(x) and p(x) of the draft exactly
        known[draft] = (float(event.draft_p[index]), float(event.draft_q[index]))

    order = sorted(known, key=lambda t: (-max(known[t][0], known[t][1] or 0.0), t))
    forced = list(dict.fromkeys(t for t in (draft, emitted) if t is not None and t in known))
    shown = [*forced, *[t for t in order if t not in forced]][: max(max_tokens, len(forced))]
    shown = sorted(shown, key=order.index)
    p = np.array([known[t][0] for t in shown])
    q = np.array([known[t][1] for t in shown]) if q_row is not None else None

    pool_p = max(0.0, 1.0 - float(p.sum()))
    pool_q = max(0.0, 1.0 - float(q.sum())) if q is not None else 0.0
    pooled_known = [t for t in known if t not in shown]
    low = sum(min(known[t][0], known[t][1] or 0.0) for t in pooled_known) if q is not None else 0.0
    unknown_p = max(0.0, pool_p - sum(known[t][0] for t in pooled_known))
    unknown_q = max(0.0, pool_q - sum(known[t][1] or 0.0 for t in pooled_known))
    high = low + min(unknown_p, unknown_q) if q is not None else 0.0
    has_pool = pool_p > ZERO_MASS or pool_q > ZERO_MASS
    ids: list[int | None] = list(shown)
    if has_pool:
        ids.append(None)
        p = np.append(p, pool_p)
        q = np.append(q, pool_q) if q is not None else None
    p = p / p.sum()
    q = q / q.sum() if q is not None else None
    alpha = None
    if q is not None:
        shown_overlap = float(np.minimum(p[: len(shown)], q[: len(shown)]).sum())
        alpha = (shown_overlap + low, shown_overlap + high)
    pool_size = max(0, vocab_size - len(shown)) if has_pool else 0
    rows = [p_row] + ([q_row] if q_row else [])
    return PositionView(
        round_index=event.index,
        index=index,
        kind=kind,
        ids=ids,
        p=p,
        q=q,
        pool_size=pool_size,
        pool_overlap=(low, high),
        alpha=alpha,
        draft_token=draft,
        q_x=float(event.draft_q[index]) if drafted else None,
        p_x=float(event.draft_p[index]) if drafted else _known(p_row, emitted),
        accept_prob=float(event.acceptance_probs[index]) if drafted else None,
        accepted=(kind == "accepted") if drafted else None,
        emitted=emitted,
        one_hot=all(len(r.ids) == 1 and r.other <= ZERO_MASS for r in rows),
    )
