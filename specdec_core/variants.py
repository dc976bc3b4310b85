"""The exact rule beside plausible-looking broken ones, as exact laws and as Monte Carlo.

* ``exact`` — accept with min(1, p/q), on rejection draw from the residual (p - q)+ / R.
* ``resample_from_p`` — on rejection draw from p itself: tokens the draft already covers
  get counted twice.
* ``argmax_match`` — keep the draft only when it is the target's argmax, otherwise draw
  from p: the argmax gets extra mass.
* ``draft_mismatch`` — the draft samples from ``q_actual`` but reports q (e.g. a greedy
  draft, or q taken before top-k): the acceptance test corrects the wrong law.
* ``accept_all`` — keep every draft token, whatever p says: the output follows q, not p
  (``engine.rules`` runs it on real models).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdec_core.checks import as_distribution, same_length
from specdec_core.verify import Dist, acceptance_probs, decompose, inverse_cdf, output_distribution

VARIANTS: tuple[str, ...] = ("exact", "resample_from_p", "argmax_match", "draft_mismatch", "accept_all")

#: The most trials one Monte Carlo call may run (memory stays under ~100 MB).
MAX_TRIALS = 10**6


@dataclass(frozen=True)
class Simulation:
    """Counts of each emitted token over ``trials`` runs, and how many drafts stood."""

    counts: np.ndarray
    accepted: int
    trials: int

    @property
    def frequencies(self) -> np.ndarray:
        return self.counts / self.trials


def _check_variant(variant: str, q_actual: Dist | None, q: np.ndarray) -> np.ndarray:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}.")
    if variant != "draft_mismatch":
        return q
    if q_actual is None:
        raise ValueError("the draft_mismatch variant needs q_actual, the law the draft really samples.")
    actual = as_distribution(q_actual, "q_actual (what the draft samples)")
    same_length(q, actual, "q and q_actual")
    return actual


def emitted_law(p: Dist, q: Dist, variant: str = "exact", q_actual: Dist | None = None) -> np.ndarray:
    """The exact law of the token each variant emits (equals p only for ``exact``)."""
    d = decompose(p, q)
    proposer = _check_variant(variant, q_actual, d.q)
    if variant == "exact":
        return output_distribution(d.p, d.q)
    if variant == "accept_all":
        return d.q.copy()
    if variant == "argmax_match":
        m = int(np.argmax(d.p))
        out = (1.0 - proposer[m]) * d.p
        out[m] += proposer[m]
        return out
    alpha = acceptance_probs(d.p, d.q)
    accepted = proposer * alpha
    rejected = float(np.sum(proposer - accepted))
    if variant == "resample_from_p":
        return accepted + rejected * d.p
    fallback = d.residual if d.residual is not None else proposer
    return accepted + rejected * fallback


#: Up to this many outcomes, one comparison pass per edge of the CDF into a byte per draw
#: beats numpy's binary search per draw, and twice an index plus one still fits in a byte.
FEW_OUTCOMES = 64


def _draws(dist: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` inverse-CDF draws from `dist`: for the same uniforms, the indices :func:`inverse_cdf`
    picks (never a zero-probability entry, nor one past the last)."""
    u = rng.random(n)
    if dist.size > FEW_OUTCOMES:
        return inverse_cdf(dist, u)
    last = int(np.flatnonzero(dist)[-1])  # the last outcome that can be drawn
    cdf = np.cumsum(dist[: last + 1])
    v = u * cdf[-1]
    picked = np.zeros(n, np.uint8)
    for edge in cdf[:-1]:  # index = how many edges lie at or below the draw
        picked += v >= edge
    return picked


def simulate(
    p: Dist,
    q: Dist,
    trials: int,
    rng: np.random.Generator,
    variant: str = "exact",
    q_actual: Dist | None = None,
) -> Simulation:
    """Run `trials` independent single-position steps of `variant`, vectorised."""
    if isinstance(trials, bool) or not isinstance(trials, int | np.integer) or not 1 <= trials <= MAX_TRIALS:
        raise ValueError(f"trials must be a whole number from 1 to {MAX_TRIALS:,}, got {trials!r}.")
    d = decompose(p, q)
    proposer = _check_variant(variant, q_actual, d.q)
    size = d.p.size
    proposals = _draws(proposer, trials, rng)
    if variant == "accept_all":
        keep = np.ones(trials, dtype=bool)
        fallback = None
    elif variant == "argmax_match":
        keep = proposals == int(np.argmax(d.p))
        fallback = d.p
    else:
        keep = rng.random(trials) < acceptance_probs(d.p, d.q)[proposals]
        fallback = d.p if variant == "resample_from_p" else d.residual
        if fallback is None:  # R = 0: rejection is impossible, every proposal stands
            keep[:] = True
    # one pass counts each token's proposals by outcome: slot 2x + 1 holds the x that stood
    kept = np.bincount(2 * proposals + keep, minlength=2 * size)[1::2]
    accepted = int(kept.sum())
    counts = kept
    if accepted < trials:  # the rest are drawn again from the fallback law
        counts = kept + np.bincount(_draws(fallback, trials - accepted, rng), minlength=size)
    return Simulation(counts=counts.astype(np.int64), accepted=accepted, trials=int(trials))
