"""Goodness of fit for Monte Carlo checks: chi-square with its p-value, total variation."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from specdec_core.checks import as_distribution, as_vector


@dataclass(frozen=True)
class ChiSquare:
    """Pearson's chi-square of observed counts against a law; ``p_value`` is P(X² ≥ stat)."""

    statistic: float
    dof: int
    p_value: float


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) (series below a+1, continued fraction above)."""
    if x <= 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-16:
            break
    return min(1.0, math.exp(log_front) * h)


def chi2_sf(statistic: float, dof: int) -> float:
    """Survival function of the chi-square law with `dof` degrees of freedom."""
    if dof < 1:
        raise ValueError(f"chi-square needs at least 1 degree of freedom, got {dof}.")
    return _gamma_q(dof / 2.0, statistic / 2.0)


def chisquare(observed: np.ndarray, probs: np.ndarray, min_expected: float = 5.0) -> ChiSquare:
    """Test counts against a law; bins expected below `min_expected` are pooled into one.

    A count in a bin of probability 0 is impossible under the law: the p-value is then 0.
    """
    obs = as_vector(observed, "observed counts")
    law = as_distribution(probs, "expected law")
    if obs.shape != law.shape:
        raise ValueError("observed counts and the law must have one entry per outcome.")
    n = float(obs.sum())
    if n <= 0:
        raise ValueError("no trials were observed.")
    if np.any(obs[law == 0] > 0):
        return ChiSquare(statistic=math.inf, dof=max(1, int(np.count_nonzero(law)) - 1), p_value=0.0)
    expected = law * n
    big = expected >= min_expected
    e = list(expected[big])
    o = list(obs[big])
    small = ~big & (law > 0)
    if small.any():
        e.append(float(expected[small].sum()))
        o.append(float(obs[small].sum()))
    e_arr, o_arr = np.array(e), np.array(o)
    if e_arr.size < 2:
        return ChiSquare(statistic=0.0, dof=1, p_value=1.0)
    stat = float(np.sum((o_arr - e_arr) ** 2 / e_arr))
    dof = int(e_arr.size - 1)
    return ChiSquare(statistic=stat, dof=dof, p_value=chi2_sf(stat, dof))


def total_variation(a: np.ndarray, b: np.ndarray) -> float:
    """½ Σ |a - b|: the largest difference in probability the two laws give any event."""
    a_arr = as_distribution(a, "first law")
    b_arr = as_distribution(b, "second law")
    if a_arr.shape != b_arr.shape:
        raise ValueError("both laws must cover the same outcomes.")
    return 0.5 * float(np.abs(a_arr - b_arr).sum())


def tv_noise_band(
    law: np.ndarray, n: int, rng: np.random.Generator, draws: int = 2000, level: float = 0.95
) -> float:
    """How far the shares of `n` draws from `law` stray from it by chance alone: the `level`
    quantile of their total variation distance to `law`, over `draws` simulated samples.

    A measured distance above this band is unlikely (1 − `level`) for a sampler that follows `law`.
    """
    p = as_distribution(law, "law")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a whole number ≥ 1, got {n!r}.")
    if not 0.0 < level < 1.0 or draws < 1:
        raise ValueError("level lies strictly between 0 and 1, and draws is at least 1.")
    counts = rng.multinomial(int(n), p / p.sum(), size=int(draws))
    tv = 0.5 * np.abs(counts / float(n) - p).sum(axis=1)
    return float(np.quantile(tv, level))
