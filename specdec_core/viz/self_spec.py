"""Figures of the self-speculation lesson, from :mod:`specdec_core.course.self_spec` data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import ACCEPTED, BONUS, DRAFT, INK, REJECTED, STATE_SYMBOLS, TARGET, base_layout
from specdec_core.viz.spec import bar, figure, hline, scatter
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "early_exit_figure": ("greedy", "alpha_t1", "alpha_t07", "head_line", "depth_axis", "alpha_axis"),
    "head_depth_figure": ("head_greedy", "head_alpha", "drafting_depth_axis", "alpha_axis"),
    "medusa_figure": (
        "medusa_alone",
        "medusa_chain",
        "medusa_top3",
        "eagle_depth",
        "ahead_axis",
        "alpha_axis",
    ),
    "drafts_figure": ("cost_axis", "alpha_axis", "predicted", "hover_draft"),
    "calibration_figure": (
        "depth_line",
        "diagonal",
        "confidence_axis",
        "agreement_axis",
        "hover_calibration",
    ),
}
CALIBRATION_COLOURS = (ACCEPTED, BONUS, DRAFT)


@figure_cache
def early_exit_figure(
    depths: Sequence[int],
    greedy: Sequence[float],
    alpha_t1: Sequence[float],
    alpha_t07: Sequence[float],
    head_alpha: float | None,
    text: Mapping[str, str],
) -> go.Figure:
    """Acceptance of an exit after k layers (no training) for k = 1 … L."""
    t = pick(text, KEYS, "early_exit_figure")
    data = [
        scatter(
            x=list(depths),
            y=list(values),
            name=name,
            mode="lines+markers",
            line={"color": color, "width": 3, "dash": dash},
        )
        for values, name, color, dash in (
            (greedy, t["greedy"], TARGET, "solid"),
            (alpha_t1, t["alpha_t1"], DRAFT, "dot"),
            (alpha_t07, t["alpha_t07"], BONUS, "dash"),
        )
    ]
    layout = base_layout(height=380)
    if head_alpha is not None:
        line = {"color": ACCEPTED, "width": 2, "dash": "dash"}
        shape, label = hline(head_alpha, line, t["head_line"].format(alpha=head_alpha), "top left")
        layout |= {"shapes": [shape], "annotations": [label]}
    layout["xaxis"] = {
        "title": {"text": t["depth_axis"]},
        "range": [0.5, max(depths) + 0.5] if depths else None,
    }
    layout["yaxis"] = {"title": {"text": t["alpha_axis"]}, "range": [0, 1.02]}
    return figure(data, layout)


@figure_cache
def head_depth_figure(greedy: Sequence[float], alpha: Sequence[float], text: Mapping[str, str]) -> go.Figure:
    """The trained head's acceptance by drafting depth (1 = the token after the target's)."""
    t = pick(text, KEYS, "head_depth_figure")
    series = ((greedy, t["head_greedy"], ACCEPTED), (alpha, t["head_alpha"], BONUS))
    return _bars_by_depth(series, t["drafting_depth_axis"], t["alpha_axis"], 340)


def _bars_by_depth(
    series: Sequence[tuple[Sequence[float], str, str]], x_title: str, y_title: str, height: int
) -> go.Figure:
    """Grouped, labelled bars at x = 1, 2, … for each (values, name, colour); empty ones left out."""
    data = [
        bar(
            x=list(range(1, len(values) + 1)),
            y=list(values),
            name=name,
            marker={"color": color},
            text=[f"{v:.2f}" for v in values],
            textposition="outside",
        )
        for values, name, color in series
        if values
    ]
    layout = base_layout(height=height, barmode="group")
    layout["xaxis"] = {"title": {"text": x_title}, "dtick": 1}
    layout["yaxis"] = {"title": {"text": y_title}, "range": [0, 1.05]}
    return figure(data, layout)


@figure_cache
def calibration_figure(
    confidence_by_depth: Sequence[Sequence[float]],
    agreement_by_depth: Sequence[Sequence[float]],
    text: Mapping[str, str],
) -> go.Figure:
    """A reliability diagram: for the first drafting depths, each fifth of the positions (by
    the head's confidence) at x = its mean confidence, y = the share the target agreed with."""
    t = pick(text, KEYS, "calibration_figure")
    data = [
        scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name=t["diagonal"],
            line={"color": INK, "dash": "dot", "width": 1},
        )
    ]
    if len(confidence_by_depth) > len(CALIBRATION_COLOURS):
        raise ValueError(
            f"at most {len(CALIBRATION_COLOURS)} depths are drawn, got {len(confidence_by_depth)}."
        )
    for depth, (conf, agree) in enumerate(zip(confidence_by_depth, agreement_by_depth, strict=True), start=1):
        colour = CALIBRATION_COLOURS[depth - 1]
        data.append(
            scatter(
                x=list(conf),
                y=list(agree),
                mode="lines+markers",
                name=t["depth_line"].format(depth=depth),
                marker={"color": colour, "size": 9},
                line={"color": colour},
                hovertemplate=t["hover_calibration"] + "<extra></extra>",
            )
        )
    layout = base_layout(height=360)
    layout["xaxis"] = {"title": {"text": t["confidence_axis"]}, "range": [0, 1]}
    layout["yaxis"] = {"title": {"text": t["agreement_axis"]}, "range": [0, 1.02]}
    return figure(data, layout)


@figure_cache
def medusa_figure(
    alone: Sequence[float],
    chained: Sequence[float],
    top3: Sequence[float],
    eagle: Sequence[float],
    text: Mapping[str, str],
) -> go.Figure:
    """Grouped bars by tokens drafted ahead (1 … K): Medusa head k's greedy acceptance alone,
    given the heads before it matched, its top-3 hit rate, and the EAGLE head at depth k."""
    t = pick(text, KEYS, "medusa_figure")
    series = (
        (alone, t["medusa_alone"], DRAFT),
        (chained, t["medusa_chain"], TARGET),
        (top3, t["medusa_top3"], BONUS),
        (eagle[: len(alone)], t["eagle_depth"], ACCEPTED),
    )
    return _bars_by_depth(series, t["ahead_axis"], t["alpha_axis"], 360)


@figure_cache
def drafts_figure(
    names: Sequence[str],
    alphas: Sequence[float],
    costs: Sequence[float],
    predicted: Sequence[float],
    highlight: str | None,
    text: Mapping[str, str],
) -> go.Figure:
    """α against step cost per draft; marker colour: predicted speedup at the best γ (red < 1×)."""
    t = pick(text, KEYS, "drafts_figure")
    colors = [ACCEPTED if p >= 1.0 else REJECTED for p in predicted]
    symbols = [
        STATE_SYMBOLS["accepted" if p >= 1.0 else "rejected"] for p in predicted
    ]  # not by colour alone
    sizes = [22 if n == highlight else 14 for n in names]
    point = scatter(
        x=list(costs),
        y=list(alphas),
        mode="markers+text",
        text=list(names),
        textposition="top center",
        marker={"color": colors, "symbol": symbols, "size": sizes, "line": {"color": INK, "width": 1}},
        customdata=[[f"{p:.2f}"] for p in predicted],
        hovertemplate=t["hover_draft"] + "<extra></extra>",
        name=t["predicted"],
    )
    layout = base_layout(height=400, showlegend=False)
    layout["xaxis"] = {"title": {"text": t["cost_axis"]}, "range": [-0.05, 1.0]}
    layout["yaxis"] = {"title": {"text": t["alpha_axis"]}, "range": [-0.05, 1.08]}
    return figure([point], layout)
