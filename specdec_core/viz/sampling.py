"""Figures of the sampling lab: every stage of the sampling pipeline, and a temperature sweep.

Token labels are escaped before they reach plotly (whose text understands a little HTML),
and only finite numbers are drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.course.sampling_lab import TemperatureSweep
from specdec_core.sampling import SamplingConfig, SamplingTrace
from specdec_core.viz import spec
from specdec_core.viz.escape import html_all
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import (
    BEFORE,
    FONT,
    GRID,
    KEPT,
    REMOVED,
    TARGET_ONLY,
    TOKEN_LINES,
    TRANSPARENT,
    WHITE,
    base_layout,
    rgba,
)
from specdec_core.viz.strings import pick

_STAGES = (
    "stage_softmax",
    "stage_temperature",
    "stage_top_k",
    "stage_top_k_none",
    "stage_top_k_off",
    "stage_top_p",
    "stage_top_p_none",
    "stage_top_p_off",
    "stage_switch",
)

#: Figure strings each builder reads (``[chart]`` of lessons/<lang>/sampling_lab.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "stages_figure": (
        *_STAGES,
        "legend_prob",
        "legend_before",
        "legend_removed",
        "axis_token",
        "axis_prob",
        "hover_prob",
        "hover_before",
        "almost_one",
    ),
    "sweep_figure": (
        "sweep_t_axis",
        "sweep_prob_axis",
        "sweep_support_axis",
        "sweep_support_name",
        "sweep_current",
        "sweep_switch_note",
    ),
}

ROW_HEIGHT = 150
TOKEN_COLOURS = TOKEN_LINES


def prob_label(p: float, almost_one: str) -> str:
    """A short label for a probability that never rounds a value below 1 up to "1"
    (`almost_one`, the page's ``chart.almost_one``, stands for such a value)."""
    short = f"{p:.3g}"
    return almost_one if short == "1" and p < 1.0 else short


def _stage_title(name: str, step: int, config: SamplingConfig, kept: float, cut: bool, t: dict) -> str:
    if name == "softmax":
        return t["stage_softmax"].format(step=step)
    if name == "temperature":
        return t["stage_temperature"].format(step=step, temperature=config.temperature)
    if (name == "top_k" and config.top_k == 0) or (name == "top_p" and config.top_p == 1.0):
        return t[f"stage_{name}_off"].format(step=step)
    if not cut:
        return t[f"stage_{name}_none"].format(step=step, k=config.top_k, p=config.top_p)
    return t[f"stage_{name}"].format(step=step, k=config.top_k, p=config.top_p, kept=kept, scale=1.0 / kept)


@figure_cache
def stages_figure(
    trace: SamplingTrace,
    config: SamplingConfig,
    labels: Sequence[str],
    text: Mapping[str, str],
) -> go.Figure:
    """One row per stage of `trace`: the probabilities after it (solid), the heights before
    it (outlined), and the tokens it removed (grey, hatched, at their height before the cut).

    With the T = 0 switch the rows after the softmax are all the same one-hot, so a single
    "switch" row is drawn. Each trace carries ``meta = {"stage": i, "role": ...}`` (role
    ``"prob"``, ``"before"`` or ``"removed"``), where ``i`` indexes ``trace.stages``.
    """
    t = pick(text, KEYS, "stages_figure")
    n = len(labels)
    if n != trace.probs.size:
        raise ValueError(f"{n} labels for {trace.probs.size} tokens: give one label per token.")
    switch = config.is_greedy_switch
    rows = [0, len(trace.stages) - 1] if switch else list(range(len(trace.stages)))
    titles = [
        t["stage_switch"].format(step=step)
        if switch and i > 0
        else _stage_title(trace.stages[i][0], step, config, trace.kept_mass[i], trace.removed[i].any(), t)
        for step, i in enumerate(rows, start=1)
    ]
    axes = spec.subplot_axes(len(rows), 1, shared_xaxes=True, vertical_spacing=0.3 / len(rows))
    names = html_all(labels)
    bars: list[dict] = []

    def add(role: str, stage: int, row: int, x: np.ndarray, y: np.ndarray, **style: object) -> None:
        if x.size == 0:
            return
        x_ref, y_ref = spec.axis_names(row)
        bars.append(
            {
                "type": "bar",
                "x": x.tolist(),
                "y": y.tolist(),
                "name": t[f"legend_{role}"],
                "legendgroup": role,
                "showlegend": all(bar["legendgroup"] != role for bar in bars),
                "meta": {"stage": stage, "role": role},
                **style,
                "xaxis": x_ref,
                "yaxis": y_ref,
            }
        )

    before = trace.stages[0][1]
    for row, i in enumerate(rows, start=1):
        probs = trace.stages[i][1]
        removed = trace.removed[i]
        cut = np.flatnonzero(removed)
        add(
            "removed",
            i,
            row,
            cut,
            before[cut],
            marker={"color": REMOVED, "pattern": {"shape": "/", "fgcolor": TARGET_ONLY}},
            text=["✕"] * cut.size,
            textposition="outside",
            customdata=[names[j] for j in cut],
            hovertemplate=f"%{{customdata}}<br>{t['hover_before']} = %{{y:.6g}}<extra></extra>",
        )
        live = np.flatnonzero(probs > 0)
        add(
            "prob",
            i,
            row,
            live,
            probs[live],
            marker={"color": KEPT},
            text=[prob_label(float(probs[j]), t["almost_one"]) for j in live],
            textposition="outside",
            customdata=[[names[j], float(before[j])] for j in live],
            hovertemplate=(
                f"%{{customdata[0]}}<br>{t['hover_prob']} = %{{y:.6g}}"
                + (f"<br>{t['hover_before']} = %{{customdata[1]:.6g}}" if i > 0 else "")
                + "<extra></extra>"
            ),
        )
        if i > 0:
            stay = np.flatnonzero(~removed & (before > 0))
            add(
                "before",
                i,
                row,
                stay,
                before[stay],
                marker={"color": TRANSPARENT, "line": {"color": BEFORE, "width": 2}},
                hoverinfo="skip",
            )
        before = probs
    ticks = {
        "tickvals": list(range(n)),
        "ticktext": [f"{name}<br>#{j}" for j, name in enumerate(names)],
        "range": [-0.6, n - 0.4],
    }
    for row in range(1, len(rows) + 1):
        x_ref, y_ref = spec.axis_names(row)
        axes[spec.layout_axis(x_ref)].update(ticks)
        axes[spec.layout_axis(y_ref)].update(range=[0, 1.25], tickvals=[0, 0.5, 1], gridcolor=GRID)
    x_ref, _ = spec.axis_names(len(rows))
    axes[spec.layout_axis(x_ref)]["title"] = {"text": t["axis_token"]}
    _, y_ref = spec.axis_names((len(rows) + 1) // 2)
    axes[spec.layout_axis(y_ref)]["title"] = {"text": t["axis_prob"]}
    title_style = {"font": {"size": 14, "family": FONT}, "xanchor": "left", "x": 0}
    layout = {
        **axes,
        "annotations": [
            spec.subplot_title(axes, r, title, **title_style) for r, title in enumerate(titles, 1)
        ],
    }
    spec.merge(
        layout,
        base_layout(
            barmode="overlay",
            bargap=0.35,
            height=ROW_HEIGHT * len(rows) + 120,
            margin={"l": 60, "r": 20, "t": 70, "b": 78},
            legend={"orientation": "h", "yanchor": "bottom", "y": 1.03, "x": 0},
            uniformtext={"minsize": 9, "mode": "show"},
        ),
    )
    return spec.figure(bars, layout)


@figure_cache
def sweep_figure(
    sweep: TemperatureSweep,
    labels: Sequence[str],
    current: float | None,
    text: Mapping[str, str],
) -> go.Figure:
    """Each token's final probability against T (log axis) above the number of tokens left.

    `current` marks the chosen temperature; ``None`` means the T = 0 switch is on, which is
    noted instead (0 is not on a log axis, and the switch is not a limit of these curves).
    """
    t = pick(text, KEYS, "sweep_figure")
    names = html_all(labels)
    if len(names) != sweep.probs.shape[1]:
        raise ValueError(f"{len(names)} labels for {sweep.probs.shape[1]} tokens.")
    temps = sweep.temperatures.tolist()
    axes = spec.subplot_axes(2, 1, shared_xaxes=True, row_heights=(0.7, 0.3), vertical_spacing=0.08)
    data: list[dict] = [
        {
            "type": "scatter",
            "x": temps,
            "y": sweep.probs[:, j].tolist(),
            "mode": "lines",
            "name": f"#{j} {name}",
            "line": {"color": TOKEN_COLOURS[j % len(TOKEN_COLOURS)], "width": 2.5},
            "meta": {"token": j},
            "hovertemplate": f"#{j} {name}: %{{y:.4g}}<extra></extra>",
            "xaxis": "x",
            "yaxis": "y",
        }
        for j, name in enumerate(names)
    ]
    data.append(
        {
            "type": "scatter",
            "x": temps,
            "y": sweep.support_size.tolist(),
            "mode": "lines",
            "line": {"shape": "hv", "color": KEPT, "width": 2.5},
            "name": t["sweep_support_name"],
            "showlegend": False,
            "meta": {"role": "support"},
            "hovertemplate": f"{t['sweep_support_axis']}: %{{y}}<extra></extra>",
            "xaxis": "x2",
            "yaxis": "y2",
        }
    )
    layout: dict = {}
    if current is None:
        layout["annotations"] = [
            {
                "text": t["sweep_switch_note"],
                "xref": "x domain",
                "yref": "y domain",
                "x": 0.02,
                "y": 0.98,
                "showarrow": False,
                "xanchor": "left",
                "bgcolor": rgba(WHITE, 0.85),
            }
        ]
    else:
        line = {"color": BEFORE, "dash": "dash", "width": 1.5}
        layout["shapes"] = [
            {"type": "line", "x0": current, "x1": current, "xref": x, "y0": 0, "y1": 1, "yref": f"{y} domain",
             "line": line}
            for x, y in (("x", "y"), ("x2", "y2"))
        ]  # fmt: skip
        layout["annotations"] = [
            {
                "text": f"{t['sweep_current']} = {current:g}",
                "x": float(np.log10(current)),
                "xref": "x",
                "yref": "y domain",
                "y": 1.0,
                "yanchor": "bottom",
                "showarrow": False,
            }
        ]
    for key in ("xaxis", "xaxis2"):
        axes[key].update(type="log", gridcolor=GRID, exponentformat="power")
    axes["xaxis2"]["title"] = {"text": t["sweep_t_axis"]}
    axes["yaxis"].update(title={"text": t["sweep_prob_axis"]}, range=[-0.02, 1.05], gridcolor=GRID)
    top = max(int(sweep.support_size.max()), 1)
    axes["yaxis2"].update(
        title={"text": t["sweep_support_axis"]}, range=[0, top + 0.6], dtick=max(1, top // 4), gridcolor=GRID
    )
    layout.update(axes)
    spec.merge(
        layout,
        base_layout(
            height=480,
            hovermode="x unified",
            margin={"l": 60, "r": 112, "t": 40, "b": 64},
            legend={"orientation": "v", "yanchor": "top", "y": 1.0, "x": 1.02, "font": {"size": 12}},
        ),
    )
    return spec.figure(data, layout)
