"""Figures written as plotly's own JSON: trace dicts and a layout dict, and helpers to lay them out.

Builders write a figure as the dict plotly.js reads (``{"type": "bar", ...}`` traces, a
layout dict with subplot axes from :func:`subplot_axes`), which reads closer to the JSON a
learner sees in the browser than chains of ``update_*`` calls; :func:`figure` hands it to
plotly, whose validators check every property.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specdec_core.viz import palette


def figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A plotly figure of `data` (trace dicts) and `layout`, validated by plotly."""
    return go.Figure({"data": data, "layout": layout})


def axis_names(row: int, col: int = 1, cols: int = 1) -> tuple[str, str]:
    """The x and y axis a trace in subplot (`row`, `col`) refers to: ("x", "y"), ("x2", "y2") …"""
    n = (row - 1) * cols + col
    suffix = "" if n == 1 else str(n)
    return f"x{suffix}", f"y{suffix}"


def layout_axis(ref: str) -> str:
    """The layout key of an axis a trace refers to: "x" → "xaxis", "y3" → "yaxis3"."""
    return f"{ref[0]}axis{ref[1:]}"


@lru_cache(maxsize=64)
def _subplot_axes(rows: int, cols: int, options: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    layout = make_subplots(rows=rows, cols=cols, **dict(options)).to_dict()["layout"]
    return {k: v for k, v in layout.items() if k[1:5] == "axis"}


def subplot_axes(rows: int, cols: int = 1, **options: Any) -> dict[str, Any]:
    """The axes (``xaxis``, ``yaxis``, ``xaxis2`` …, with their domains and anchors) that
    ``make_subplots(rows, cols, **options)`` lays out; a fresh copy the caller may change.

    Options must be hashable (tuples, not lists); subplot titles are left to the caller
    (:func:`subplot_title`), so that a title's text does not change the cached layout."""
    return copy.deepcopy(_subplot_axes(rows, cols, tuple(sorted(options.items()))))


def subplot_title(
    axes: dict[str, Any], row: int, text: str, col: int = 1, cols: int = 1, **style: Any
) -> dict[str, Any]:
    """A subplot title annotation above subplot (`row`, `col`) of a `cols`-column grid, placed
    where ``make_subplots(subplot_titles=...)`` puts it: centred over the subplot unless
    `style` says otherwise (e.g. ``x=0, xanchor="left"``)."""
    x_ref, y_ref = axis_names(row, col, cols)
    x0, x1 = axes[layout_axis(x_ref)]["domain"]
    title = {
        "font": {"size": 16},
        "showarrow": False,
        "text": text,
        "x": (x0 + x1) / 2,
        "xanchor": "center",
        "xref": "paper",
        "y": axes[layout_axis(y_ref)]["domain"][1],
        "yanchor": "bottom",
        "yref": "paper",
    }
    title.update(style)
    return title


def axis(title: str, **options: Any) -> dict[str, Any]:
    """A layout axis titled `title` on the figures' light grid, with plotly axis `options`."""
    return {"title": {"text": title}, "gridcolor": palette.GRID, **options}


def token_axis(ticktext: Sequence[str], **options: Any) -> dict[str, Any]:
    """A layout axis with one tick per position 0 … n − 1 named by `ticktext`, every position in view."""
    n = len(ticktext)
    return {
        "tickmode": "array",
        "tickvals": list(range(n)),
        "ticktext": ticktext,
        "range": [-0.6, n - 0.4],
        **options,
    }


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """`base` updated in place with `update`, nested dicts merged key by key (as plotly's
    ``update_layout`` does for dict values); returns `base`."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def hline(y: float, line: dict[str, Any], text: str, position: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The line across the plot at `y` and its label, as ``add_hline(y, line=…,
    annotation_text=text, annotation_position=position)`` draws them: (shape, annotation)."""
    vertical, _, horizontal = position.partition(" ")
    shape = {
        "line": line,
        "type": "line",
        "x0": 0,
        "x1": 1,
        "xref": "x domain",
        "y0": y,
        "y1": y,
        "yref": "y",
    }
    x = {"left": 0, "right": 1}[horizontal]
    label = {
        "showarrow": False,
        "text": text,
        "x": x,
        "xanchor": horizontal,
        "xref": "x domain",
        "y": y,
        "yanchor": {"top": "bottom", "bottom": "top"}[vertical],
        "yref": "y",
    }
    return shape, label


def scatter(**trace: Any) -> dict[str, Any]:
    """A scatter trace as a dict, as ``go.Scatter(**trace)`` takes it."""
    return {"type": "scatter", **trace}


def bar(**trace: Any) -> dict[str, Any]:
    """A bar trace as a dict, as ``go.Bar(**trace)`` takes it."""
    return {"type": "bar", **trace}


def state_marks(
    marks: Mapping[str, Sequence[tuple[float, float]]],
    names: Mapping[str, str],
    xaxis: str = "x",
    yaxis: str = "y",
    legend: bool = True,
    kinds: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One scatter per token state of `marks` (state → points): the state's colour and symbol
    (palette.state_marker) at each point, so a state drawn as a cell or a box reads without its
    colour too, named ``names[state]`` in the legend. `kinds` lists the states to give a trace
    (in that order) whether or not they have points, so the legend names them all."""
    shown = [k for k in palette.STATE_SYMBOLS if k in marks] if kinds is None else list(kinds)
    return [
        scatter(
            x=[x for x, _ in marks.get(kind, [])] or [None],
            y=[y for _, y in marks.get(kind, [])] or [None],
            mode="markers",
            name=names[kind],
            legendgroup=kind,
            showlegend=legend,
            hoverinfo="skip",
            marker=palette.state_marker(kind),
            xaxis=xaxis,
            yaxis=yaxis,
        )
        for kind in shown
    ]
