"""Figures of the overlap lesson: p and q taken apart, the residual, the emitted law.

Bars are placed by position, so duplicate labels and an "other" bucket work like any label.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.spec import axis, bar, figure, hline, scatter, token_axis
from specdec_core.viz.strings import pick

_HALF = 0.21  # offset of the two bars of a pair from the token's position
_WIDTH = 0.4
_SHOW_VALUES = 8  # print values on the bars up to this many tokens

#: Figure strings each builder reads (``[chart.<name>]`` of lessons/<lang>/overlap.toml;
#: law_comparison's "law" is the page's name for the compared law).
KEYS: dict[str, tuple[str, ...]] = {
    "overlap_bars": ("overlap", "surplus", "deficit", "q_bar", "p_bar", "xaxis", "yaxis"),
    "conservation_bar": ("surplus_row", "deficit_row", "total", "xaxis"),
    "residual_bars": ("residual", "xaxis", "yaxis"),
    "emitted_bars": ("direct", "via_residual", "target", "xaxis", "yaxis"),
    "law_comparison": ("target", "law", "xaxis", "yaxis"),
    "alpha_temperature": ("alpha", "limit_hot", "current", "xaxis", "yaxis"),
}


def _arrays(labels: Sequence[str], **named: Sequence[float] | np.ndarray) -> dict[str, np.ndarray]:
    """float64 copies of the named arrays, each one entry per label, finite and ≥ 0."""
    out = {}
    for name, values in named.items():
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (len(labels),):
            raise ValueError(f"{name} needs one value per label ({len(labels)}), got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{name} must hold finite probabilities of 0 or more.")
        out[name] = arr
    return out


def _ticks(labels: Sequence[str], title: str) -> dict[str, object]:
    """The token axis: one tick per label (escaped)."""
    return token_axis([html.escape(str(t)) for t in labels], title={"text": title})


#: One segment of a column: its values (one per token), legend name, colour and extra bar keys.
Segment = tuple[np.ndarray, str, str, dict[str, object]]


def _column(
    labels: Sequence[str],
    segments: Sequence[Segment],
    offset: float = 0.0,
    width: float = _WIDTH,
    line: dict[str, object] | None = None,
) -> list[dict[str, object]]:
    """One column per token, `offset` right of its tick: `segments` stacked from 0 up, each
    on the one before, every one outlined with `line` when given."""
    x = np.arange(len(labels), dtype=np.float64) + offset
    show = len(labels) <= _SHOW_VALUES
    base = np.zeros(len(labels))
    bars = []
    for values, name, colour, extra in segments:
        extra = dict(extra)
        marker = {"color": colour, **({"line": line} if line else {}), **extra.pop("marker", {})}
        bars.append(
            bar(
                x=x,
                y=values,
                base=base.tolist(),  # a list, as plotly's validator makes of it
                width=width,
                name=name,
                marker=marker,
                customdata=[html.escape(str(t)) for t in labels],
                hovertemplate=f"<b>%{{customdata}}</b><br>{html.escape(name)}: %{{y:.4f}}<extra></extra>",
                text=[f"{v:.2f}" if show and v > 0 else "" for v in values],
                textposition="inside",
                insidetextanchor="middle",
                **extra,
            )
        )
        base = base + values
    return bars


def _figure(
    data: list[dict[str, object]], labels: Sequence[str], xaxis: str, yaxis: str, height: int
) -> go.Figure:
    """Bars over the token axis, overlaid, with the shared layout of this lesson's bar charts."""
    layout = palette.base_layout(
        barmode="overlay",
        height=height,
        margin={"l": 74, "r": 24, "t": 50, "b": 70},
        uniformtext={"minsize": 11, "mode": "hide"},
    )
    layout["xaxis"] = _ticks(labels, xaxis)
    layout["yaxis"] = axis(yaxis, rangemode="tozero")
    return figure(data, layout)


@figure_cache
def overlap_bars(
    labels: Sequence[str],
    overlap: Sequence[float] | np.ndarray,
    deficit: Sequence[float] | np.ndarray,
    surplus: Sequence[float] | np.ndarray,
    text: Mapping[str, str],
    height: int = 420,
) -> go.Figure:
    """Two stacked bars per token: q = min(p, q) + (q − p)₊ on the left, p = min(p, q) + (p − q)₊."""
    t = pick(text, KEYS, "overlap_bars")
    a = _arrays(labels, overlap=overlap, deficit=deficit, surplus=surplus)
    pos = np.arange(len(labels), dtype=np.float64)
    left, right = pos - _HALF, pos + _HALF
    hatch = {"pattern": {"shape": "x", "fgcolor": palette.WHITE, "size": 7}}
    q_column = [
        (a["overlap"], t["overlap"], palette.OVERLAP, {"legendgroup": "overlap"}),
        (a["surplus"], t["surplus"], palette.SURPLUS, {"marker": hatch}),
    ]
    p_column = [
        (a["overlap"], t["overlap"], palette.OVERLAP, {"legendgroup": "overlap", "showlegend": False}),
        (a["deficit"], t["deficit"], palette.DEFICIT, {}),
    ]
    data = [
        *_column(labels, q_column, -_HALF, line={"color": palette.DRAFT, "width": 2}),
        *_column(labels, p_column, _HALF, line={"color": palette.TARGET, "width": 2}),
    ]
    if len(labels) <= _SHOW_VALUES:
        tops = np.concatenate([a["overlap"] + a["surplus"], a["overlap"] + a["deficit"]])
        data.append(
            scatter(
                x=np.concatenate([left, right]),
                y=tops,
                mode="text",
                text=[t["q_bar"]] * len(labels) + [t["p_bar"]] * len(labels),
                textposition="top center",
                textfont={
                    "color": [palette.DRAFT] * len(labels) + [palette.TARGET] * len(labels),
                    "size": 15,
                },
                hoverinfo="skip",
                showlegend=False,
            )
        )
    return _figure(data, labels, t["xaxis"], t["yaxis"], height)


@figure_cache
def conservation_bar(
    labels: Sequence[str],
    surplus: Sequence[float] | np.ndarray,
    deficit: Sequence[float] | np.ndarray,
    text: Mapping[str, str],
    height: int = 300,
) -> go.Figure:
    """All surplus pieces end to end above all deficit pieces: both rows have length R."""
    t = pick(text, KEYS, "conservation_bar")
    a = _arrays(labels, surplus=surplus, deficit=deficit)
    data, notes = [], []
    rows = (
        (t["surplus_row"], a["surplus"], palette.SURPLUS),
        (t["deficit_row"], a["deficit"], palette.DEFICIT),
    )
    for row, values, colour in rows:
        start = 0.0
        for label, value in zip(labels, values, strict=True):
            if value <= 0:
                continue
            name = html.escape(str(label))
            data.append(
                bar(
                    x=[value],
                    y=[row],
                    base=[start],
                    orientation="h",
                    name=name,
                    showlegend=False,
                    marker={"color": colour, "line": {"color": palette.WHITE, "width": 2}},
                    text=[name],
                    textposition="inside",
                    insidetextanchor="middle",
                    hovertemplate=f"<b>{name}</b>: %{{x:.4f}}<extra></extra>",
                )
            )
            start += value
        notes.append(
            {
                "x": start,
                "y": row,
                "text": t["total"].format(value=start),
                "showarrow": False,
                "xanchor": "left",
                "xshift": 8,
                "font": {"size": 15},
            }
        )
    layout = palette.base_layout(
        barmode="overlay",
        height=height,
        showlegend=False,
        margin={"l": 104, "r": 110, "t": 20, "b": 68},
        uniformtext={"minsize": 11, "mode": "hide"},
        annotations=notes,
    )
    layout["xaxis"] = axis(t["xaxis"], rangemode="tozero")
    layout["yaxis"] = {"autorange": "reversed", "automargin": True}
    return figure(data, layout)


@figure_cache
def residual_bars(
    labels: Sequence[str],
    residual: Sequence[float] | np.ndarray,
    text: Mapping[str, str],
    height: int = 300,
) -> go.Figure:
    """The normalised residual: where a rejected proposal's replacement is drawn from."""
    t = pick(text, KEYS, "residual_bars")
    a = _arrays(labels, residual=residual)
    data = _column(labels, [(a["residual"], t["residual"], palette.DEFICIT, {})], width=0.6)
    return _figure(data, labels, t["xaxis"], t["yaxis"], height)


@figure_cache
def emitted_bars(
    labels: Sequence[str],
    direct: Sequence[float] | np.ndarray,
    via_residual: Sequence[float] | np.ndarray,
    target: Sequence[float] | np.ndarray,
    text: Mapping[str, str],
    height: int = 380,
) -> go.Figure:
    """The output law as direct-accept mass plus residual mass, inside an outline of p."""
    t = pick(text, KEYS, "emitted_bars")
    a = _arrays(labels, direct=direct, via_residual=via_residual, target=target)
    emitted = [
        (a["direct"], t["direct"], palette.OVERLAP, {}),
        (a["via_residual"], t["via_residual"], palette.DEFICIT, {}),
    ]
    data = _column(labels, emitted, width=0.6)
    target_outline = [(a["target"], t["target"], palette.TRANSPARENT, {})]
    (outline,) = _column(labels, target_outline, width=0.72, line={"color": palette.TARGET, "width": 3})
    del outline["text"]
    data.append(outline)
    return _figure(data, labels, t["xaxis"], t["yaxis"], height)


@figure_cache
def law_comparison(
    labels: Sequence[str],
    target: Sequence[float] | np.ndarray,
    law: Sequence[float] | np.ndarray,
    text: Mapping[str, str],
    spread: Sequence[float] | np.ndarray | None = None,
    colour: str = palette.REJECTED,
    height: int = 360,
) -> go.Figure:
    """p beside another law (a variant's output, or Monte Carlo frequencies).

    `spread` (optional) draws error bars on p: where a frequency should land if the
    output followed p.
    """
    t = pick(text, KEYS, "law_comparison")
    a = _arrays(labels, target=target, law=law)
    p_extra: dict[str, object] = {}
    if spread is not None:
        band = _arrays(labels, spread=spread)["spread"]
        p_extra["error_y"] = {
            "type": "data",
            "array": band,
            "color": palette.INK,
            "thickness": 1.5,
            "width": 4,
        }
    data = [
        *_column(labels, [(a["target"], t["target"], palette.TARGET, p_extra)], -_HALF),
        *_column(labels, [(a["law"], t["law"], colour, {})], _HALF),
    ]
    return _figure(data, labels, t["xaxis"], t["yaxis"], height)


@figure_cache
def alpha_temperature(
    temperatures: Sequence[float] | np.ndarray,
    alpha: Sequence[float] | np.ndarray,
    limit_hot: float,
    current: tuple[float, float],
    text: Mapping[str, str],
    height: int = 340,
) -> go.Figure:
    """α against T on a log axis, the T → ∞ limit as a dashed line, and `current` = (T, α) marked."""
    t = pick(text, KEYS, "alpha_temperature")
    temps = np.asarray(temperatures, dtype=np.float64)
    values = np.asarray(alpha, dtype=np.float64)
    if (
        temps.shape != values.shape
        or temps.ndim != 1
        or np.any(temps <= 0)
        or not np.all(np.isfinite(values))
    ):
        raise ValueError("temperatures and alpha must be two finite 1-D arrays of one length, T > 0.")
    line, label = hline(
        float(limit_hot),
        {"color": palette.TARGET_ONLY, "dash": "dash"},
        html.escape(t["limit_hot"]),
        "bottom right",
    )
    data = [
        scatter(
            x=temps,
            y=values,
            mode="lines",
            name=html.escape(t["alpha"]),
            line={"color": palette.OVERLAP, "width": 3},
            hovertemplate="T = %{x:.3g}<br>α = %{y:.4f}<extra></extra>",
        ),
        scatter(
            x=[float(current[0])],
            y=[float(current[1])],
            mode="markers",
            name=html.escape(t["current"]),
            marker={"color": palette.TARGET, "size": 12, "symbol": "diamond"},
            hovertemplate="T = %{x:.3g}<br>α = %{y:.4f}<extra></extra>",
        ),
    ]
    layout = palette.base_layout(
        height=height, margin={"l": 74, "r": 26, "t": 50, "b": 72}, shapes=[line], annotations=[label]
    )
    layout["xaxis"] = axis(t["xaxis"], type="log", exponentformat="power")
    layout["yaxis"] = axis(t["yaxis"], range=[0, 1.02])
    return figure(data, layout)
