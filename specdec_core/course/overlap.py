"""Every number of one speculative step on a (p, q) pair, for the overlap lesson."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from specdec_core.checks import as_distribution
from specdec_core.sampling import SamplingConfig, apply, softmax
from specdec_core.stats import ChiSquare, chisquare, total_variation
from specdec_core.variants import VARIANTS, emitted_law, simulate
from specdec_core.verify import Decomposition, Dist, acceptance_probs, decompose, output_distribution

#: What a mismatched draft may really sample while it reports q (see :func:`draft_law`).
DRAFT_LAWS: dict[str, SamplingConfig] = {
    "greedy": SamplingConfig(temperature=0.0),
    "sharpened": SamplingConfig(temperature=0.5),
    "top_k": SamplingConfig(top_k=2),
}


def draft_law(q: Dist, kind: str) -> np.ndarray:
    """What a draft reporting `q` really samples in a known bug (see DRAFT_LAWS).

    ``greedy`` — it always takes q's argmax (lowest index on ties); ``sharpened`` — it
    samples q at temperature 0.5; ``top_k`` — it samples q's top 2 but reports q before
    that filter.
    """
    if kind not in DRAFT_LAWS:
        raise ValueError(f"unknown draft law {kind!r}; choose one of {', '.join(DRAFT_LAWS)}.")
    q_arr = as_distribution(q, "q (draft)")
    log_q = np.full(q_arr.size, -np.inf)
    np.log(q_arr, out=log_q, where=q_arr > 0)
    return apply(log_q, DRAFT_LAWS[kind]).probs


@dataclass(frozen=True)
class Breakdown:
    """One speculative step on (p, q), token by token.

    ``direct`` = q·min(1, p/q) (equal to ``overlap`` = min(p, q)); ``via_residual`` =
    R·residual (equal to the deficit; zeros when R = 0, where no residual exists);
    ``emitted`` = direct + via_residual, the exact law of the output; ``proposed`` marks
    q > 0 (elsewhere the ratio p/q is never formed).
    """

    decomposition: Decomposition
    alpha: np.ndarray
    proposed: np.ndarray
    direct: np.ndarray
    via_residual: np.ndarray
    emitted: np.ndarray
    never_proposed: np.ndarray
    always_rejected: np.ndarray

    @property
    def max_error(self) -> float:
        """The largest |emitted − p| over the tokens (float64 rounding only)."""
        return float(np.max(np.abs(self.emitted - self.decomposition.p)))


def breakdown(p: Dist, q: Dist) -> Breakdown:
    """Every number of the bar-chart proof; raises ValueError on an invalid pair."""
    d = decompose(p, q)
    alpha = acceptance_probs(d.p, d.q)
    via = d.rejection_mass * d.residual if d.residual is not None else np.zeros_like(d.p)
    return Breakdown(
        decomposition=d,
        alpha=alpha,
        proposed=d.q > 0,
        direct=d.q * alpha,
        via_residual=via,
        emitted=output_distribution(d.p, d.q),
        never_proposed=np.flatnonzero((d.q == 0) & (d.p > 0)),
        always_rejected=np.flatnonzero((d.p == 0) & (d.q > 0)),
    )


def variant_laws(p: Dist, q: Dist, q_actual: Dist) -> dict[str, tuple[np.ndarray, float]]:
    """Each variant's exact emitted law and its total-variation distance from p."""
    d = decompose(p, q)
    out = {}
    for name in VARIANTS:
        law = emitted_law(d.p, d.q, name, q_actual if name == "draft_mismatch" else None)
        out[name] = (law, total_variation(law, d.p))
    return out


@dataclass(frozen=True)
class MonteCarlo:
    """A seeded simulation of one variant, compared with the target p.

    ``spread`` is two standard errors of each frequency if the output really followed p;
    ``acceptance`` the share of trials whose draft stood; ``chi`` tests the counts against p.
    """

    variant: str
    trials: int
    seed: int
    counts: np.ndarray
    frequencies: np.ndarray
    acceptance: float
    spread: np.ndarray
    chi: ChiSquare
    tv: float
    seconds: float

    @property
    def verdict(self) -> str:
        """What the run says about "the output follows p": see :func:`mc_verdict`."""
        return mc_verdict(self.chi.p_value)


#: A chi-square p-value of MC_FITS or more reads as consistent with p, one below MC_FAILS as
#: not p; in between the run is borderline (run more trials or another seed).
MC_FITS = 0.01
MC_FAILS = 0.001


def mc_verdict(p_value: float) -> str:
    """``"fits"``, ``"borderline"`` or ``"fails"`` for a Monte Carlo run's chi-square p-value."""
    if not 0.0 <= p_value <= 1.0:
        raise ValueError(f"a p-value lies in [0, 1], got {p_value!r}.")
    if p_value >= MC_FITS:
        return "fits"
    return "fails" if p_value < MC_FAILS else "borderline"


def monte_carlo(
    p: Dist, q: Dist, trials: int, seed: int, variant: str = "exact", q_actual: Dist | None = None
) -> MonteCarlo:
    """Run `trials` independent steps of `variant` with `seed` and test the output against p."""
    d = decompose(p, q)
    start = time.perf_counter()
    sim = simulate(d.p, d.q, trials, np.random.default_rng(seed), variant, q_actual)
    seconds = time.perf_counter() - start
    freq = sim.frequencies
    return MonteCarlo(
        variant=variant,
        trials=sim.trials,
        seed=seed,
        counts=sim.counts,
        frequencies=freq,
        acceptance=sim.accepted / sim.trials,
        spread=2.0 * np.sqrt(d.p * (1.0 - d.p) / sim.trials),
        chi=chisquare(sim.counts, d.p),
        tv=total_variation(freq, d.p),
        seconds=seconds,
    )


@dataclass(frozen=True)
class AlphaSweep:
    """α(T) = Σ min(p_T, q_T) with p_T ∝ p^(1/T) and q_T ∝ q^(1/T), both models at temperature T.

    ``alpha[i]`` belongs to ``temperatures[i]``. The limits are exact: as T → 0⁺ each law
    becomes uniform on its argmax set and as T → ∞ uniform on its support, so
    ``limit_cold`` / ``limit_hot`` = |A ∩ B| / max(|A|, |B|) for those sets (1 at T → ∞ when
    p and q give every token some mass).
    """

    temperatures: np.ndarray
    alpha: np.ndarray
    limit_cold: float
    limit_hot: float


def _uniform_overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.count_nonzero(a & b) / max(np.count_nonzero(a), np.count_nonzero(b)))


def alpha_by_temperature(p: Dist, q: Dist, temperatures: np.ndarray | None = None) -> AlphaSweep:
    """The acceptance rate of the pair re-tempered to each T (default 161 values, 10⁻² … 10²).

    p and q are read as the T = 1 laws, so log p and log q serve as logits (a zero stays 0
    at every T). In float64; a pair outside the domain raises ValueError.
    """
    d = decompose(p, q)
    temps = np.logspace(-2, 2, 161) if temperatures is None else np.asarray(temperatures, dtype=np.float64)
    if temps.ndim != 1 or temps.size == 0 or np.any(~np.isfinite(temps)) or np.any(temps <= 0):
        raise ValueError("temperatures must be a non-empty list of positive finite numbers.")
    log_p = np.full(d.p.size, -np.inf)
    log_q = np.full(d.q.size, -np.inf)
    np.log(d.p, out=log_p, where=d.p > 0)
    np.log(d.q, out=log_q, where=d.q > 0)
    # one row per temperature: the same float64 operations as re-tempering each T alone
    alpha = np.minimum(softmax(log_p / temps[:, None]), softmax(log_q / temps[:, None])).sum(axis=1)
    return AlphaSweep(
        temperatures=temps,
        alpha=np.clip(alpha, 0.0, 1.0),
        limit_cold=_uniform_overlap(d.p == d.p.max(), d.q == d.q.max()),
        limit_hot=_uniform_overlap(d.p > 0, d.q > 0),
    )
