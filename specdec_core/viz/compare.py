"""Figures of the comparison workbench: a heatmap per target of one figure over drafts × categories.

A missing or undefined value is a blank cell with "—", never a NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

import plotly.graph_objects as go

from specdec_core.live.compare import Cell
from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "heatmap": ("draft_axis", "category_axis", "hover", "missing"),
}


@dataclass(frozen=True)
class HeatCell:
    """One cell's figure with its spread over the category's prompts (None: not measured)."""

    draft: str
    category: str
    value: float | None
    low: float | None = None
    high: float | None = None


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


@figure_cache
def heatmap(
    cells: Sequence[HeatCell],
    drafts: Sequence[str],
    categories: Sequence[str],
    names: Mapping[str, str],
    title: str,
    text: Mapping[str, str],
) -> go.Figure:
    """Drafts (rows) × categories (columns) coloured by value; each cell shows its value and, on
    hover, the spread over prompts. `names` maps draft and category keys to shown names."""
    t = pick(text, KEYS, "heatmap")
    by = {(c.draft, c.category): c for c in cells}
    z: list[list[float | None]] = []
    labels: list[list[str]] = []
    spread: list[list[str]] = []
    for d in drafts:
        row, lab, spr = [], [], []
        for cat in categories:
            c = by.get((d, cat))
            v = _finite(c.value) if c else None
            row.append(v)
            lab.append(t["missing"] if v is None else f"{v:.2f}")
            lo, hi = (_finite(c.low), _finite(c.high)) if c else (None, None)
            spr.append("" if lo is None or hi is None else f"{lo:.2f}–{hi:.2f}")
        z.append(row)
        labels.append(lab)
        spread.append(spr)
    x = [escape(names.get(c, c)) for c in categories]
    y = [escape(names.get(d, d)) for d in drafts]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            text=labels,
            texttemplate="%{text}",
            customdata=spread,
            hovertemplate=t["hover"],
            colorscale=[[0.0, palette.PALE], [1.0, palette.ALPHA_DARK]],
            showscale=True,
            xgap=2,
            ygap=2,
            hoverongaps=False,
        )
    )
    fig.update_layout(
        title=escape(title),
        xaxis_title=t["category_axis"],
        yaxis_title=t["draft_axis"],
        yaxis_autorange="reversed",
        height=120 + 42 * max(1, len(drafts)),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        plot_bgcolor=palette.TRANSPARENT,
        paper_bgcolor=palette.TRANSPARENT,
    )
    return fig


#: The figures a heatmap can show.
METRICS: tuple[str, ...] = (
    "tau",
    "acceptance",
    "decode_speedup",
    "wall_speedup",
    "spec_bench_speedup",
    "projected",
)


def heat_cells(cells_: Iterable[Cell], target: str, metric: str, c: float | None = None) -> list[HeatCell]:
    """`target`'s cells reduced to one figure each (``projected`` at draft cost `c`, by default
    each draft's own), with the spread over prompts where the figure has one per prompt."""
    if metric not in METRICS:
        raise ValueError(f"unknown figure {metric!r}; choose one of {', '.join(METRICS)}.")
    out = []
    for cell in cells_:
        if cell.target != target:
            continue
        low = high = None
        if metric == "tau":
            value, low, high = cell.tau, min(cell.taus), max(cell.taus)
        elif metric == "decode_speedup":
            value, sp = cell.decode_speedup, cell.decode_speedups
            low, high = (min(sp), max(sp)) if sp else (None, None)
        elif metric == "projected":
            value = cell.projected(c)
        else:
            value = getattr(cell, metric)
        out.append(HeatCell(cell.draft, cell.category, value, low, high))
    return out
