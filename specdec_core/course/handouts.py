"""The numbers of the printable one-page handouts (pages/handouts.py), each computed by the
course's own maths; the proof handout's text is the block lesson's own (no numbers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdec_core.course.overlap import breakdown
from specdec_core.course.pairs import preset_rows, to_pair
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, speedup

#: Every handout, in the order the page offers them.
HANDOUTS: tuple[str, ...] = ("rule", "speedup", "proof")
#: The pair of the rule handout: the overlap lesson's classroom example.
RULE_PAIR = "abc"
#: The speedup handout's grid.
ALPHAS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)
GAMMAS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8)
#: The draft cost of its speedup tables (a small head or a 1/20-size draft, as on the cost page).
COST_RATIO = 0.05
#: The best γ is searched up to here, as on the cost page.
MAX_GAMMA = 16
#: The worked example: the notation page's α, γ and c.
EXAMPLE_ALPHA, EXAMPLE_GAMMA = 0.8, 4


@dataclass(frozen=True)
class RuleSheet:
    """One position, token by token: ``residual`` is None when R = 0 (no rejection happens)."""

    tokens: tuple[str, ...]
    p: np.ndarray
    q: np.ndarray
    overlap: np.ndarray
    deficit: np.ndarray
    surplus: np.ndarray
    accept: np.ndarray
    residual: np.ndarray | None
    emitted: np.ndarray
    alpha: float
    rejection: float


def rule_sheet(name: str = RULE_PAIR) -> RuleSheet:
    """The rule handout's pair taken apart (course.overlap.breakdown of a preset pair)."""
    pair = to_pair(preset_rows(name))
    b = breakdown(pair.p, pair.q)
    d = b.decomposition
    return RuleSheet(
        tokens=tuple(pair.tokens),
        p=d.p,
        q=d.q,
        overlap=d.overlap,
        deficit=d.deficit,
        surplus=d.surplus,
        accept=b.alpha,
        residual=d.residual,
        emitted=b.emitted,
        alpha=float(d.acceptance_rate),
        rejection=float(d.rejection_mass),
    )


@dataclass(frozen=True)
class SpeedupSheet:
    """``tokens[i][j]`` = E[tokens per round] at ALPHAS[i], GAMMAS[j]; ``ideal`` the speedup
    with verification at 1 step (memory-bound), ``linear`` at 1 + βγ (the profile's β);
    ``best_*`` the best γ ≤ MAX_GAMMA per α and its speedup under each model."""

    alphas: tuple[float, ...]
    gammas: tuple[int, ...]
    c: float
    beta: float
    tokens: np.ndarray
    ideal: np.ndarray
    linear: np.ndarray
    best_ideal: tuple[int, ...]
    best_ideal_speedup: tuple[float, ...]
    best_linear: tuple[int, ...]
    best_linear_speedup: tuple[float, ...]
    example: dict[str, float]


def speedup_sheet(beta: float) -> SpeedupSheet:
    """The speedup handout's tables and its worked example (α = 0.8, γ = 4, c = 0.05), the
    second table and the example's linear price with verification 1 + `beta`·γ."""
    verify, alphas, gammas, c = linear_verify_cost(beta), ALPHAS, GAMMAS, COST_RATIO
    tokens = np.array([[expected_tokens(a, g) for g in gammas] for a in alphas], dtype=np.float64)
    ideal = np.array([[speedup(a, g, c) for g in gammas] for a in alphas], dtype=np.float64)
    linear = np.array([[speedup(a, g, c, verify) for g in gammas] for a in alphas], dtype=np.float64)
    best_i = tuple(int(best_gamma(a, c, 1.0, MAX_GAMMA)) for a in alphas)
    best_l = tuple(int(best_gamma(a, c, verify, MAX_GAMMA)) for a in alphas)
    a, g = EXAMPLE_ALPHA, EXAMPLE_GAMMA
    example = {
        "alpha": a,
        "gamma": g,
        "c": c,
        "beta": beta,
        "tokens": float(expected_tokens(a, g)),
        "verify": float(verify(g)),
        "round_ideal": g * c + 1.0,
        "round_linear": g * c + float(verify(g)),
        "ideal": float(speedup(a, g, c)),
        "linear": float(speedup(a, g, c, verify)),
    }
    return SpeedupSheet(
        alphas=tuple(alphas),
        gammas=tuple(gammas),
        c=c,
        beta=beta,
        tokens=tokens,
        ideal=ideal,
        linear=linear,
        best_ideal=best_i,
        best_ideal_speedup=tuple(float(speedup(a, b, c)) for a, b in zip(alphas, best_i, strict=True)),
        best_linear=best_l,
        best_linear_speedup=tuple(
            float(speedup(a, b, c, verify)) for a, b in zip(alphas, best_l, strict=True)
        ),
        example=example,
    )
