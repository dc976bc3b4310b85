"""Figures of the draft race: each draft's measured speedup on its own theory curve, and bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specdec_core.live.race import predicted_speedup
from specdec_core.viz import palette
from specdec_core.viz.spec import axis, figure, hline, scatter
from specdec_core.viz.strings import pick

#: Figure strings each builder reads (``[fig]`` of lessons/<lang>/race.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "theory_figure": (
        "curve",
        "measured",
        "break_even",
        "hover_curve",
        "hover_point",
        "alpha_axis",
        "speedup_axis",
    ),
    "bars_figure": ("alpha_panel", "speedup_panel", "wall_panel"),
}

#: One colour per draft, in race order.
COLOURS: tuple[str, ...] = palette.SERIES


@dataclass(frozen=True)
class RacePoint:
    """One draft's measured figures for the charts."""

    name: str
    alpha: float | None
    speedup: float
    wall_speedup: float
    drafted: tuple[int, ...]
    cost_ratio: float
    verify_cost: float


def theory_figure(points: Sequence[RacePoint], text: Mapping[str, str]) -> go.Figure:
    """Speedup against α: per draft the theory curve for its measured cost and rounds (line)
    and its measured (α, decode speedup) (marker); a dashed line marks break-even."""
    t = pick(text, KEYS, "theory_figure")
    alphas = np.linspace(0.0, 1.0, 101)
    data = []
    top = 1.5
    for i, pt in enumerate(points):
        if pt.alpha is None:
            continue
        colour = COLOURS[i % len(COLOURS)]
        name = escape(pt.name)
        curve = np.asarray(predicted_speedup(alphas, pt.drafted, pt.cost_ratio, pt.verify_cost))
        data += [
            scatter(
                x=alphas,
                y=curve,
                mode="lines",
                name=t["curve"].format(name=name),
                legendgroup=name,
                line={"color": colour, "width": 2, "dash": "dot"},
                hovertemplate=t["hover_curve"] + "<extra></extra>",
            ),
            scatter(
                x=[pt.alpha],
                y=[pt.speedup],
                mode="markers",
                name=t["measured"].format(name=name),
                legendgroup=name,
                marker={"color": colour, "size": 14, "line": {"color": palette.INK, "width": 1.5}},
                hovertemplate=t["hover_point"] + "<extra></extra>",
            ),
        ]
        top = max(top, float(curve.max()), pt.speedup)
    line, label = hline(
        1.0, {"color": palette.INK, "dash": "dash", "width": 1.5}, t["break_even"], "top left"
    )
    layout = palette.base_layout(
        height=460, legend={"orientation": "v", "x": 1.02, "y": 1}, shapes=[line], annotations=[label]
    )
    layout["xaxis"] = axis(t["alpha_axis"], range=[0, 1.02])
    layout["yaxis"] = axis(t["speedup_axis"], range=[0, top * 1.1])
    return figure(data, layout)


def bars_figure(points: Sequence[RacePoint], text: Mapping[str, str]) -> go.Figure:
    """Three panels, one bar per draft: acceptance rate, decode speedup, wall-clock speedup."""
    t = pick(text, KEYS, "bars_figure")
    names = [escape(p.name) for p in points]
    colours = [COLOURS[i % len(COLOURS)] for i in range(len(points))]
    fig = make_subplots(
        rows=1, cols=3, subplot_titles=(t["alpha_panel"], t["speedup_panel"], t["wall_panel"])
    )
    columns = (
        [p.alpha if p.alpha is not None else 0.0 for p in points],
        [p.speedup for p in points],
        [p.wall_speedup for p in points],
    )
    for col, values in enumerate(columns, start=1):
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                marker={"color": colours},
                showlegend=False,
                text=[f"{v:.2f}" for v in values],
                textposition="outside",
                hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        if col > 1:
            fig.add_hline(y=1.0, line={"color": palette.INK, "dash": "dash", "width": 1}, row=1, col=col)
    fig.update_layout(**palette.base_layout(height=380, margin={"l": 40, "r": 20, "t": 60, "b": 90}))
    fig.update_yaxes(rangemode="tozero", gridcolor=palette.GRID)
    fig.update_yaxes(range=[0, 1.1], row=1, col=1)
    return fig
