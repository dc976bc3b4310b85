"""Speedup maps of the cost lesson, coloured by log₂(speedup) around break-even; every number comes
from :mod:`specdec_core.theory`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from html import escape

import numpy as np
import plotly.graph_objects as go

from specdec_core.theory import VerifyCost, best_gamma, speedup
from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import ACCEPTED, DRAFT, REJECTED, base_layout
from specdec_core.viz.spec import figure, scatter
from specdec_core.viz.strings import pick

#: Figure strings each builder reads (``[fig]`` of lessons/<lang>/cost.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "speedup_heatmap": ("speedup_colour", "best_line", "you_marker", "alpha_axis", "gamma_axis"),
    "drafts_map_figure": ("map_colour", "break_even", "you_marker", "alpha_axis", "cost_axis"),
}

#: Speedup colour scale: red below 1×, white at 1×, green above, symmetric in log₂.
_LOG_RANGE = 4  # ±4 doublings: 1/16× … 16×
_DIVERGING = [[0, REJECTED], [0.5, palette.WHITE], [1, ACCEPTED]]


def _speedup_heatmap(x: np.ndarray, y: np.ndarray, z: np.ndarray, hover: str, title: str) -> dict:
    """A heatmap coloured by log₂(speedup), so 0.5× and 2× are equally far from break-even.

    The real speedup is in ``customdata`` (and the hover text); the colour bar is labelled in ×.
    """
    ticks = np.arange(-_LOG_RANGE, _LOG_RANGE + 1, 2)
    labels = [f"{2.0**v:g}×" if v >= 0 else f"1/{2 ** -int(v)}×" for v in ticks]
    return {
        "type": "heatmap",
        "x": x,
        "y": y,
        "z": np.log2(np.clip(z, 2.0**-_LOG_RANGE, 2.0**_LOG_RANGE)),
        "customdata": z,
        "zmin": -_LOG_RANGE,
        "zmax": _LOG_RANGE,
        "colorscale": _DIVERGING,
        "hovertemplate": hover,
        "colorbar": {"title": {"text": title}, "thickness": 14, "tickvals": ticks, "ticktext": labels},
    }


@figure_cache
def speedup_heatmap(
    cost_ratio: float,
    verify_cost: VerifyCost,
    max_gamma: int,
    alpha: float,
    gamma: int,
    text: Mapping[str, str],
) -> go.Figure:
    """Speedup over α (across) and γ (up); the line marks the best γ of each α."""
    t = pick(text, KEYS, "speedup_heatmap")
    alphas = np.linspace(0.0, 1.0, 101)
    gammas = np.arange(1, max_gamma + 1)
    z = np.array([speedup(alphas, int(g), cost_ratio, verify_cost) for g in gammas])
    best = best_gamma(alphas, cost_ratio, verify_cost, max_gamma)
    hover = "α = %{x:.2f}, γ = %{y}: %{customdata:.2f}×<extra></extra>"
    data = [
        _speedup_heatmap(alphas, gammas, z, hover, t["speedup_colour"]),
        scatter(
            x=alphas,
            y=best,
            name=t["best_line"],
            mode="lines",
            line={"color": palette.INK, "width": 2, "shape": "hv"},
        ),
        scatter(
            x=[alpha],
            y=[gamma],
            name=t["you_marker"],
            mode="markers",
            marker={"size": 14, "color": DRAFT, "line": {"color": palette.INK, "width": 1.5}},
        ),
    ]
    layout = base_layout(height=420, margin={"l": 64, "r": 114, "t": 50, "b": 60})
    layout["xaxis"] = {"title": {"text": t["alpha_axis"]}, "range": [0, 1]}
    layout["yaxis"] = {
        "title": {"text": t["gamma_axis"]},
        "range": [0.5, max_gamma + 0.5],
        "dtick": 1 if max_gamma <= 16 else 2,
    }
    return figure(data, layout)


def _label_positions(points: Sequence[tuple[float, float]]) -> list[str]:
    """Text positions that keep labels inside the plot and off their neighbours' labels."""
    placed: list[tuple[float, float]] = []
    out = []
    for a, c in points:
        crowded = any(abs(a - pa) < 0.3 and abs(c - pc) < 0.1 for pa, pc in placed)
        if not crowded:
            placed.append((a, c))
        side = "right" if a < 0.2 else "left" if a > 0.8 else "center"
        out.append(f"{'bottom' if crowded else 'top'} {side}")
    return out


def _best_speedup_grid(verify_cost: VerifyCost, max_gamma: int) -> np.ndarray:
    """Best-γ speedup on the map's (draft cost, α) grid: one row per cost, one column per α."""
    if isinstance(verify_cost, int | float):
        return _best_speedup_grid_of(float(verify_cost), max_gamma)
    return _best_speedup_grid_of.__wrapped__(verify_cost, max_gamma)


@lru_cache(maxsize=32)
def _best_speedup_grid_of(verify_cost: VerifyCost, max_gamma: int) -> np.ndarray:
    """The grid for a constant verification cost, kept (it does not move with α or c); read-only."""
    z = np.array(
        [
            np.max([speedup(_MAP_ALPHAS, g, float(c), verify_cost) for g in range(1, max_gamma + 1)], axis=0)
            for c in _MAP_COSTS
        ]
    )
    z.flags.writeable = False
    return z


_MAP_ALPHAS = np.linspace(0.0, 1.0, 51)
_MAP_COSTS = np.linspace(0.0, 1.0, 51)


@figure_cache
def drafts_map_figure(
    drafts: Sequence[tuple[str, float, float]],
    verify_cost: VerifyCost,
    max_gamma: int,
    alpha: float,
    cost_ratio: float,
    text: Mapping[str, str],
) -> go.Figure:
    """Best-γ speedup over α (across) and draft cost c (up), with named drafts (name, α, c) on it.

    The dashed contour is the break-even line: below-right of it a draft pays off.
    """
    t = pick(text, KEYS, "drafts_map_figure")
    alphas, costs = _MAP_ALPHAS, _MAP_COSTS
    z = _best_speedup_grid(verify_cost, max_gamma)
    hover = "α = %{x:.2f}, c = %{y:.2f}: %{customdata:.2f}×<extra></extra>"
    data = [
        _speedup_heatmap(alphas, costs, z, hover, t["map_colour"]),
        {
            "type": "contour",
            "x": alphas,
            "y": costs,
            "z": z,
            "showscale": False,
            "hoverinfo": "skip",
            "name": t["break_even"],
            "contours": {"start": 1, "end": 1, "size": 1, "coloring": "none"},
            "line": {"color": palette.INK, "dash": "dash", "width": 2},
        },
        scatter(
            x=[d[1] for d in drafts],
            y=[d[2] for d in drafts],
            mode="markers+text",
            showlegend=False,
            text=[escape(d[0]) for d in drafts],
            textfont={"size": 12},
            textposition=_label_positions([(d[1], d[2]) for d in drafts]),
            marker={"size": 11, "color": palette.INK, "symbol": "diamond"},
            hovertemplate="%{text}: α = %{x:.2f}, c = %{y:.2f}<extra></extra>",
        ),
        scatter(
            x=[alpha],
            y=[cost_ratio],
            name=t["you_marker"],
            mode="markers",
            marker={"size": 15, "color": DRAFT, "line": {"color": palette.INK, "width": 1.5}},
        ),
    ]
    layout = base_layout(height=480, margin={"l": 64, "r": 150, "t": 52, "b": 60})
    layout["xaxis"] = {"title": {"text": t["alpha_axis"]}, "range": [-0.02, 1.02]}
    layout["yaxis"] = {"title": {"text": t["cost_axis"]}, "range": [-0.12, 1.04]}
    return figure(data, layout)
