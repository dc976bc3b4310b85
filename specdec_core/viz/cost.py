"""Figures of the cost-and-speedup lesson; every number comes from :mod:`specdec_core.theory` (the
speedup maps are in :mod:`specdec_core.viz.speedup_maps`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.course.cost import ClaimCheck
from specdec_core.theory import (
    VerifyCost,
    best_gamma,
    expected_tokens,
    expected_tokens_curve,
    round_costs,
    speedup,
    speedup_by_gamma,
)
from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import (
    ACCEPTED,
    BONUS,
    CORRECTED,
    DRAFT,
    REJECTED,
    TARGET,
    TARGET_ONLY,
    base_layout,
)
from specdec_core.viz.spec import axis, figure, hline, scatter
from specdec_core.viz.strings import pick

#: Figure strings each builder reads (``[fig]`` of lessons/<lang>/cost.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "verify_cost_figure": (
        "compute_bound",
        "linear",
        "memory_bound",
        "measured",
        "tokens_in_forward",
        "cost_in_steps",
    ),
    "expected_tokens_figure": (
        "ceiling",
        "alpha_line",
        "claim_ok",
        "claim_wrong",
        "you",
        "gamma_axis",
        "tokens_axis",
    ),
    "speedup_gamma_figure": (
        "break_even",
        "speedup_line",
        "hover_speedup",
        "hover_tokens",
        "hover_cost",
        "best",
        "current",
        "gamma_axis",
        "speedup_axis",
    ),
    "speedup_alpha_figure": (
        "break_even",
        "envelope",
        "alpha_curve",
        "you_marker",
        "alpha_axis",
        "speedup_axis",
    ),
}


@figure_cache
def verify_cost_figure(
    beta: float,
    max_gamma: int,
    measured: tuple[int, float] | None,
    text: Mapping[str, str],
) -> go.Figure:
    """Cost of one forward over γ+1 tokens, in decode steps: three models and a measurement.

    `measured` is (tokens in the forward, cost in single steps).
    """
    t = pick(text, KEYS, "verify_cost_figure")
    tokens = np.arange(1, max_gamma + 2)
    data = [
        scatter(
            x=tokens,
            y=tokens.astype(float),
            name=t["compute_bound"],
            mode="lines",
            line={"color": TARGET_ONLY, "dash": "dot", "width": 2},
        ),
        scatter(
            x=tokens,
            y=1.0 + beta * (tokens - 1),
            name=t["linear"].format(beta=beta),
            mode="lines+markers",
            line={"color": TARGET, "width": 3},
        ),
        scatter(
            x=tokens,
            y=np.ones(tokens.size),
            name=t["memory_bound"],
            mode="lines",
            line={"color": ACCEPTED, "width": 3},
        ),
    ]
    if measured is not None:
        data.append(
            scatter(
                x=[measured[0]],
                y=[measured[1]],
                name=t["measured"],
                mode="markers",
                marker={
                    "color": CORRECTED,
                    "size": 16,
                    "symbol": "star",
                    "line": {"color": palette.INK, "width": 1},
                },
            )
        )
    layout = base_layout(height=360, margin={"l": 64, "r": 24, "t": 74, "b": 60})
    layout["xaxis"] = axis(t["tokens_in_forward"], dtick=1)
    layout["yaxis"] = axis(t["cost_in_steps"], range=[0, min(max_gamma + 2, 6)])
    return figure(data, layout)


def _blues(n: int) -> list[str]:
    """`n` shades from light to dark blue (one per α line)."""
    return palette.shades(palette.ALPHA_LIGHT, palette.ALPHA_DARK, n)


@figure_cache
def expected_tokens_figure(
    alphas: Sequence[float],
    max_gamma: int,
    alpha: float,
    gamma: int,
    claims: Sequence[ClaimCheck],
    text: Mapping[str, str],
) -> go.Figure:
    """E[tokens per round] over γ = 0 … max_gamma for each α, the γ+1 ceiling, your point
    and a text's claims (a wrong claim sits off its curve)."""
    t = pick(text, KEYS, "expected_tokens_figure")
    gammas = np.arange(0, max_gamma + 1)
    data = [
        scatter(
            x=gammas,
            y=gammas + 1.0,
            name=t["ceiling"],
            mode="lines",
            line={"color": TARGET_ONLY, "dash": "dot"},
        )
    ]
    for a, colour in zip(sorted(alphas), _blues(len(alphas)), strict=True):
        values = expected_tokens_curve(a, max_gamma)
        data.append(
            scatter(
                x=gammas,
                y=values,
                name=t["alpha_line"].format(alpha=a),
                mode="lines",
                line={"color": colour, "width": 2.5},
            )
        )
    for ok in (True, False):
        group = [c for c in claims if c.matches == ok]
        shape = palette.STATE_SYMBOLS["accepted" if ok else "rejected"]  # not by colour alone
        if group:
            data.append(
                scatter(
                    x=[c.gamma for c in group],
                    y=[c.claimed for c in group],
                    mode="markers",
                    name=t["claim_ok" if ok else "claim_wrong"],
                    marker={
                        "symbol": shape,
                        "size": 13,
                        "color": ACCEPTED if ok else REJECTED,
                        "line": {"width": 1, "color": palette.INK},
                    },
                    customdata=[[c.alpha, c.computed] for c in group],
                    hovertemplate="α = %{customdata[0]}, γ = %{x}: %{y} ("
                    + ("" if ok else "≠ ")
                    + "%{customdata[1]:.2f})<extra></extra>",
                )
            )
    data.append(
        scatter(
            x=[gamma],
            y=[expected_tokens(alpha, gamma)],
            name=t["you"],
            mode="markers",
            marker={"color": DRAFT, "size": 15, "line": {"color": palette.INK, "width": 1.5}},
        )
    )
    layout = base_layout(height=430, margin={"l": 64, "r": 24, "t": 96, "b": 60})
    layout["xaxis"] = axis(t["gamma_axis"], dtick=1 if max_gamma <= 16 else 2)
    top = max(
        float(expected_tokens(max(alphas), max_gamma)),
        float(expected_tokens(alpha, gamma)),
        *(c.claimed for c in claims),
    )
    layout["yaxis"] = axis(t["tokens_axis"], range=[0, top * 1.15])
    return figure(data, layout)


def _round_data(alpha: float, gammas: np.ndarray, cost_ratio: float, verify_cost: VerifyCost) -> np.ndarray:
    """(E[tokens], round cost in target steps) for each γ."""
    tokens = expected_tokens_curve(alpha, int(gammas.max()))[gammas]
    return np.column_stack([tokens, round_costs(gammas, cost_ratio, verify_cost)])


@figure_cache
def speedup_gamma_figure(
    alpha: float,
    cost_ratio: float,
    verify_cost: VerifyCost,
    gamma: int,
    max_gamma: int,
    text: Mapping[str, str],
) -> go.Figure:
    """Speedup against γ = 1 … max_gamma, with the best γ starred and yours circled."""
    t = pick(text, KEYS, "speedup_gamma_figure")
    gammas = np.arange(1, max_gamma + 1)
    values = speedup_by_gamma(alpha, gammas, cost_ratio, verify_cost)
    best = best_gamma(alpha, cost_ratio, verify_cost, max_gamma)
    line, label = hline(
        1.0, {"color": REJECTED, "dash": "dash", "width": 1.5}, t["break_even"], "bottom right"
    )
    data = [
        scatter(
            x=gammas,
            y=values,
            mode="lines+markers",
            name=t["speedup_line"].format(alpha=alpha, c=cost_ratio),
            line={"color": TARGET, "width": 3},
            marker={"size": 7},
            customdata=_round_data(alpha, gammas, cost_ratio, verify_cost),
            hovertemplate=f"γ = %{{x}}<br>{t['hover_speedup']} %{{y:.3f}}×"
            f"<br>{t['hover_tokens']} %{{customdata[0]:.3f}}"
            f"<br>{t['hover_cost']} %{{customdata[1]:.3f}}<extra></extra>",
        ),
        scatter(
            x=[best],
            y=[values[best - 1]],
            mode="markers",
            name=t["best"].format(gamma=best, value=values[best - 1]),
            marker={
                "symbol": "star",
                "size": 20,
                "color": CORRECTED,
                "line": {"color": palette.INK, "width": 1},
            },
        ),
        scatter(
            x=[gamma],
            y=[values[gamma - 1]],
            mode="markers",
            name=t["current"].format(gamma=gamma, value=values[gamma - 1]),
            marker={"size": 15, "color": DRAFT, "line": {"color": palette.INK, "width": 1.5}},
        ),
    ]
    layout = base_layout(
        height=400, margin={"l": 64, "r": 24, "t": 94, "b": 60}, shapes=[line], annotations=[label]
    )
    layout["xaxis"] = axis(t["gamma_axis"], dtick=1 if max_gamma <= 16 else 2, range=[0.5, max_gamma + 0.5])
    layout["yaxis"] = axis(t["speedup_axis"], rangemode="tozero")
    return figure(data, layout)


@figure_cache
def speedup_alpha_figure(
    gamma: int,
    cost_ratio: float,
    verify_cost: VerifyCost,
    alpha: float,
    max_gamma: int,
    text: Mapping[str, str],
) -> go.Figure:
    """Speedup against α at your γ, and the envelope when γ is re-chosen for each α."""
    t = pick(text, KEYS, "speedup_alpha_figure")
    alphas = np.linspace(0.0, 1.0, 101)
    yours = np.asarray(speedup(alphas, gamma, cost_ratio, verify_cost))
    per_gamma = speedup_by_gamma(alphas, np.arange(1, max_gamma + 1), cost_ratio, verify_cost)  # row γ − 1
    line, label = hline(1.0, {"color": REJECTED, "dash": "dash", "width": 1.5}, t["break_even"], "top left")
    data = [
        scatter(
            x=alphas,
            y=per_gamma.max(axis=0),
            name=t["envelope"],
            mode="lines",
            line={"color": BONUS, "dash": "dot", "width": 2},
        ),
        scatter(
            x=alphas,
            y=yours,
            name=t["alpha_curve"].format(gamma=gamma),
            mode="lines",
            line={"color": TARGET, "width": 3},
        ),
        scatter(
            x=[alpha],
            y=[float(speedup(alpha, gamma, cost_ratio, verify_cost))],
            name=t["you_marker"],
            mode="markers",
            marker={"size": 15, "color": DRAFT, "line": {"color": palette.INK, "width": 1.5}},
        ),
    ]
    layout = base_layout(
        height=400, margin={"l": 64, "r": 24, "t": 94, "b": 60}, shapes=[line], annotations=[label]
    )
    layout["xaxis"] = axis(t["alpha_axis"], range=[0, 1])
    # the envelope can climb far above your curve near α = 1; keep your curve readable
    top = 1.3 * max(float(yours.max()), 1.0)
    layout["yaxis"] = axis(t["speedup_axis"], range=[0, top])
    return figure(data, layout)
