"""Expected progress and speedup of speculative decoding (i.i.d. acceptance model).

With acceptance rate α per draft token and γ drafts per round, a round commits
1 + α + … + α^γ = (1 - α^(γ+1)) / (1 - α) tokens on average (γ + 1 at α = 1). A round
costs γ draft steps of `cost_ratio` target steps each, plus one verification forward of
γ + 1 tokens that costs `verify_cost` target steps (≈ 1 when decode is memory-bound).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

VerifyCost = float | Callable[[int], float]


def _check_alpha(alpha: float | np.ndarray) -> np.ndarray:
    a = np.asarray(alpha, dtype=np.float64)
    if np.any(np.isnan(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValueError(f"alpha is an acceptance rate and must lie in [0, 1], got {alpha!r}.")
    return a


def _check_gamma(gamma: int) -> int:
    if isinstance(gamma, bool) or not isinstance(gamma, int | np.integer) or gamma < 0:
        raise ValueError(f"gamma (drafts per round) must be a whole number ≥ 0, got {gamma!r}.")
    return int(gamma)


def expected_tokens(alpha: float | np.ndarray, gamma: int) -> float | np.ndarray:
    """(1 - α^(γ+1)) / (1 - α): mean tokens committed per round, bonus included.

    Summed as the geometric series 1 + α + … + α^γ, so α = 1 gives exactly γ + 1 and
    values near 1 lose no precision.
    """
    a = _check_alpha(alpha)
    g = _check_gamma(gamma)
    total = np.ones_like(a)
    for _ in range(g):
        total = 1.0 + a * total
    return float(total) if total.ndim == 0 else total


def expected_tokens_curve(alpha: float | np.ndarray, max_gamma: int) -> np.ndarray:
    """:func:`expected_tokens` for γ = 0 … max_gamma at once (row γ), bit for bit: the same
    series 1 + α·(…) is summed, each γ one step further than the last."""
    a = _check_alpha(alpha)
    g = _check_gamma(max_gamma)
    rows = np.empty((g + 1, *a.shape))
    rows[0] = 1.0
    for i in range(1, g + 1):
        rows[i] = 1.0 + a * rows[i - 1]
    return rows


def mean_expected_tokens(alpha: float | np.ndarray, drafted: Sequence[int]) -> np.floating | np.ndarray:
    """Mean of :func:`expected_tokens` over rounds that drafted `drafted` tokens each.

    Rounds may draft different numbers of tokens (an n-gram draft finds shorter matches,
    adaptive γ changes γ); a fixed γ gives exactly ``expected_tokens(alpha, γ)``.
    """
    if not drafted:
        raise ValueError("mean_expected_tokens needs at least one round.")
    return np.mean([expected_tokens(alpha, int(k)) for k in drafted], axis=0)


def _verify(verify_cost: VerifyCost, gamma: int) -> float:
    cost = float(verify_cost(gamma)) if callable(verify_cost) else float(verify_cost)
    if not np.isfinite(cost) or cost <= 0:
        raise ValueError(f"verify_cost must be a positive number of target steps, got {cost!r}.")
    return cost


def speedup(
    alpha: float | np.ndarray,
    gamma: int,
    cost_ratio: float,
    verify_cost: VerifyCost = 1.0,
) -> float | np.ndarray:
    """Tokens per unit time relative to target-only decoding.

    `cost_ratio` is one draft step as a fraction of one target step; `verify_cost` is the
    (γ+1)-token verification forward in target steps (a number, or a function of γ).
    """
    g = _check_gamma(gamma)
    return expected_tokens(alpha, g) / round_costs([g], cost_ratio, verify_cost)[0]


def round_costs(
    gammas: Sequence[int] | np.ndarray, cost_ratio: float, verify_cost: VerifyCost = 1.0
) -> np.ndarray:
    """γ·c + verify(γ) for each γ: what a round of γ drafts costs, in target steps."""
    if not np.isfinite(cost_ratio) or cost_ratio < 0:
        raise ValueError(f"cost_ratio must be 0 or more (draft step / target step), got {cost_ratio!r}.")
    return np.array([g * cost_ratio + _verify(verify_cost, int(g)) for g in gammas], dtype=np.float64)


def speedup_by_gamma(
    alpha: float | np.ndarray,
    gammas: Sequence[int] | np.ndarray,
    cost_ratio: float,
    verify_cost: VerifyCost = 1.0,
) -> np.ndarray:
    """``speedup(α, γ, …)`` for every γ in `gammas` (≥ 0) at once: row i is γ = gammas[i]
    (an array of α adds its own axes after it)."""
    gammas = np.asarray(gammas, dtype=np.int64)
    for g in gammas:
        _check_gamma(int(g))
    tokens = expected_tokens_curve(alpha, int(gammas.max(initial=0)))[gammas]
    costs = round_costs(gammas, cost_ratio, verify_cost)
    return tokens / costs.reshape(-1, *([1] * (tokens.ndim - 1)))


def best_gamma(
    alpha: float | np.ndarray,
    cost_ratio: float,
    verify_cost: VerifyCost = 1.0,
    max_gamma: int = 32,
    min_gamma: int = 1,
) -> int | np.ndarray:
    """The γ in min_gamma … max_gamma with the highest predicted speedup: the smallest γ
    whose speedup is within 1e-12 of the best (so rounding never lengthens the draft).

    An array of α gives the best γ of each.
    """
    low = max(_check_gamma(min_gamma), 1)
    gammas = np.arange(low, _check_gamma(max_gamma) + 1)
    if gammas.size == 0:
        raise ValueError(f"max_gamma must be at least {low}.")
    values = speedup_by_gamma(alpha, gammas, cost_ratio, verify_cost)
    best = gammas[np.argmax(values >= values.max(axis=0) - 1e-12, axis=0)]
    return int(best) if np.ndim(alpha) == 0 else best


def measured_alpha(accepted: float, examined: float) -> float | None:
    """The per-draft acceptance estimate α = accepted / examined (None before any draft was
    examined): an examined draft was either accepted or the round's one rejection."""
    return accepted / examined if examined > 0 else None


def linear_verify_cost(per_token: float) -> Callable[[int], float]:
    """Verification cost model 1 + per_token·γ target steps (0 = perfectly memory-bound)."""
    if not np.isfinite(per_token) or per_token < 0:
        raise ValueError(f"the extra verification cost per token must be ≥ 0, got {per_token!r}.")
    return lambda gamma: 1.0 + per_token * gamma


def tokens_per_round_law(alpha: float, k: int) -> np.ndarray:
    """P(a round commits n tokens), n = 1 … K+1, when each draft stands with probability α.

    P(n) = α^(n-1)·(1 - α) for n ≤ K (the n-th position is the first rejection) and α^K
    for n = K+1 (all K accepted, plus the bonus). Its mean is theory.expected_tokens(α, K).
    """
    if not 0.0 <= alpha <= 1.0:  # also rejects NaN
        raise ValueError(f"alpha is an acceptance rate and must lie in [0, 1], got {alpha!r}.")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"K (drafts per round) must be a whole number of at least 1, got {k!r}.")
    powers = alpha ** np.arange(k + 1, dtype=np.float64)
    law = powers * (1.0 - alpha)
    law[k] = powers[k]
    return law
