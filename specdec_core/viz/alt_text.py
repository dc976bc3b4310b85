"""A figure in words and as a table, read from its own traces: the text alternative every chart
carries for assistive technology (:func:`describe`) and its data view (:func:`table`).

Both read only the figure (the numbers its traces draw), so they say what the chart shows
and nothing else. Bars and scatters give one row per point (its token when the trace
names one in ``customdata`` or ``text``), heatmaps and contours one per cell, sunbursts one per
part, sankeys one per flow. A trace with neither a name nor a hover (tree edges, in-chart
labels) is drawing, not data; a figure made only of such traces is told by its annotations.
Every word comes from the caller (``figure`` in lessons/<lang>/common.toml). Text comes back
plain (plotly's tags dropped, its entities decoded): the caller escapes it for where it goes.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

#: How many series the description names before it points to the data view.
MOST_SERIES = 6
#: How many annotations a figure without data traces is told by.
MOST_NOTES = 12
_TAG = re.compile(r"<[^>]*>")
_PARTS = ("sunburst", "treemap", "icicle", "pie", "funnelarea")


def plain(text: object) -> str:
    """Plotly's label `text` as plain text: line breaks as spaces, tags dropped, entities decoded."""
    flat = _TAG.sub("", re.sub(r"<br\s*/?>", " ", str(text)))
    return " ".join(html.unescape(flat).split())


def number(value: float) -> str:
    """`value` to three significant digits (whole numbers in full, with thousands separators)."""
    v = float(value)
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) < 1e-3:
        return f"{v:.3g}"
    return f"{v:,.{max(0, 2 - math.floor(math.log10(abs(v))))}f}"


def _cell(value: Any) -> str:
    return number(value) if isinstance(value, int | float | np.number) else plain(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool) and math.isfinite(value)


def _array(values: Any) -> Any:
    """`values`, with plotly's typed-array form (``{"dtype", "bdata", "shape"}``, what a figure
    holds once serialised) decoded to the numpy array it stands for."""
    if isinstance(values, Mapping) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        shape = values.get("shape")
        return array.reshape([int(n) for n in str(shape).split(",")]) if shape else array
    return values


def _list(values: Any) -> list[Any]:
    values = _array(values)
    if values is None:
        return []
    return np.asarray(values, dtype=object).ravel().tolist() if np.ndim(values) else [values]


def _drawing(trace: Any) -> bool:
    """Whether `trace` only draws (no name, no hover): edges, in-chart labels."""
    return trace.type in ("bar", "scatter") and not trace.name and trace.hoverinfo == "skip"


def _ticks(fig: go.Figure, trace: Any) -> dict[str, dict[Any, str]]:
    """The tick labels `trace`'s x and y axes write for their values (a token under its bar)."""
    found = {}
    for axis in ("x", "y"):
        ref = getattr(trace, f"{axis}axis", None) or axis
        layout = fig.layout[f"{axis}axis{ref[1:]}"]
        found[axis] = dict(zip(_list(layout.tickvals), map(plain, _list(layout.ticktext)), strict=False))
    return found


class _XY:
    """A bar's or a scatter's points: x and y as drawn, and each point's token when the trace
    names one (``customdata`` or a scatter's ``text``), else its tick label."""

    def __init__(self, fig: go.Figure, trace: Any) -> None:
        self.y = _list(trace.y)
        self.x = _list(trace.x) or list(range(len(self.y)))
        self.ticks = _ticks(fig, trace)
        custom = _list(trace.customdata) if np.ndim(_array(trace.customdata)) == 1 else []
        text = _list(trace.text) if trace.type == "scatter" else []
        self.names = [next((c for c in (custom[i : i + 1] + text[i : i + 1]) if isinstance(c, str) and c), "")
                      for i in range(len(self.y))]  # fmt: skip
        self.kept = [
            i for i, (a, b) in enumerate(zip(self.x, self.y, strict=False)) if _present(a) and _present(b)
        ]

    def cell(self, axis: str, i: int) -> str:
        value = (self.x if axis == "x" else self.y)[i]
        tick = self.ticks[axis].get(value) if isinstance(value, int | float | np.number) else None
        return tick or _cell(value)

    def label(self, i: int) -> str:
        return plain(self.names[i])

    def at(self, i: int, axis: str = "x") -> str:
        """Where point `i` is, in words: its token, else its tick label or value on `axis`."""
        return self.label(i) or self.cell(axis, i)


def _present(value: Any) -> bool:
    """Whether `value` is a drawn coordinate (None and NaN mark gaps between line pieces)."""
    return value is not None and not (isinstance(value, float) and not math.isfinite(value))


def _cells(trace: Any) -> Iterator[tuple[Any, Any, float]]:
    """A heatmap's or a contour's (x, y, z) per finite cell."""
    z = np.asarray(_array(trace.z), dtype=float)
    if z.ndim != 2:
        return
    xs, ys = _list(trace.x) or list(range(z.shape[1])), _list(trace.y) or list(range(z.shape[0]))
    for r, c in zip(*np.nonzero(np.isfinite(z)), strict=True):
        yield xs[c], ys[r], float(z[r, c])


def _parts(trace: Any) -> Iterator[tuple[str, str, float]]:
    """A sunburst's (or pie's) (label, parent label, value) per part with a value."""
    labels, values = [plain(x) for x in _list(trace.labels)], _list(trace.values)
    ids, parents = _list(trace.ids) or labels, _list(trace.parents)
    names = dict(zip(ids, labels, strict=False))
    for i, (label, value) in enumerate(zip(labels, values, strict=False)):
        if _is_number(value) and value > 0:
            yield label, names.get(parents[i], "") if i < len(parents) else "", float(value)


def _flows(trace: Any) -> Iterator[tuple[str, str, float]]:
    """A sankey's (from, to, value) per flow."""
    nodes = [plain(x) for x in _list(trace.node.label)]
    link = trace.link
    for s, t, v in zip(_list(link.source), _list(link.target), _list(link.value), strict=False):
        if _is_number(v):
            yield nodes[s], nodes[t], float(v)


def _axis_title(fig: go.Figure, axis: str, fallback: str) -> str:
    """The title of the figure's only `axis` ("x" or "y"), else `fallback` (several subplots)."""
    if any(k.startswith(f"{axis}axis") and k != f"{axis}axis" for k in fig.layout.to_plotly_json()):
        return fallback
    return plain(fig.layout[f"{axis}axis"].title.text or "") or fallback


def _data(fig: go.Figure) -> list[Any]:
    return [t for t in fig.data if not _drawing(t)]


def _name(trace: Any, words: Mapping[str, str]) -> str:
    colorbar = getattr(trace, "colorbar", None)
    named = trace.name or (colorbar.title.text if colorbar is not None else None)
    return plain(named or "") or words["unnamed"]


def table(fig: go.Figure, words: Mapping[str, str]) -> list[dict[str, str]]:
    """`fig`'s numbers, one row per point (or cell, part, flow), every cell text; the columns
    are the ``col_*`` words (x and y named by the axes' titles when the figure has one pair)."""
    name, label, value = words["col_series"], words["col_label"], words["col_value"]
    x, y = (_axis_title(fig, a, words[f"col_{a}"]) for a in ("x", "y"))
    x, y = (
        (words["col_x"] if x in (name, label, value) else x),
        (words["col_y"] if y in (name, label, value, x) else y),
    )
    rows: list[dict[str, str]] = []
    for trace in _data(fig):
        series = plain(trace.name or "")
        if trace.type in ("bar", "scatter"):
            xy = _XY(fig, trace)
            for i in xy.kept:
                at = xy.cell("x", i)
                rows.append(
                    {name: series, label: "" if xy.label(i) == at else xy.label(i), x: at, y: xy.cell("y", i)}
                )
        elif trace.type in ("heatmap", "contour"):
            rows += [{name: series, x: _cell(a), y: _cell(b), value: number(c)} for a, b, c in _cells(trace)]
        elif trace.type in _PARTS:
            rows += [
                {name: series, label: t, words["col_parent"]: p, value: number(v)}
                for t, p, v in _parts(trace)
            ]
        elif trace.type == "sankey":
            rows += [
                {name: series, words["col_from"]: a, words["col_to"]: b, value: number(v)}
                for a, b, v in _flows(trace)
            ]
    if not rows:
        rows = [{label: plain(a.text)} for a in fig.layout.annotations if a.text]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    drop = {k for k in columns if not any(row.get(k) for row in rows)}  # e.g. no trace names its tokens
    return [{k: row.get(k, "") for k in columns if k not in drop} for row in rows]


def _numbers(values: list[Any]) -> np.ndarray | None:
    """`values` as float64 (None as NaN), or None when they are not numbers (categories)."""
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _points_sentence(fig: go.Figure, trace: Any, words: Mapping[str, str]) -> str | None:
    xy = _XY(fig, trace)
    flip = trace.type == "bar" and trace.orientation == "h"  # the value runs along x
    values = _numbers(xy.x if flip else xy.y)
    if values is None or not xy.kept:
        return None
    where = "y" if flip else "x"
    kept = np.array(xy.kept)
    kept = kept[np.isfinite(values[kept])]
    if not kept.size:
        return None
    if all(xy.label(i) for i in kept) and not trace.name and trace.type == "scatter":
        return words["notes"].format(
            notes="; ".join(xy.label(i) for i in kept[:MOST_NOTES])
        )  # labelled places
    top = int(kept[np.argmax(values[kept])])
    name, high, at = _name(trace, words), number(values[top]), xy.at(top, where)
    if kept.size == 1:
        return words["point"].format(name=name, y=high, at=at)
    if trace.type == "bar":
        return words["bars"].format(name=name, total=number(values[kept].sum()), top=high, at=at)
    first, last = int(kept[0]), int(kept[-1])
    return words["line"].format(
        name=name, first=number(values[first]), x0=xy.at(first, where), last=number(values[last]),
        x1=xy.at(last, where), top=high, at=at,
    )  # fmt: skip


def _sentence(fig: go.Figure, trace: Any, words: Mapping[str, str]) -> str | None:
    """One sentence on `trace`'s numbers, or None when it has none."""
    if trace.type in ("bar", "scatter"):
        return _points_sentence(fig, trace, words)
    if trace.type in ("heatmap", "contour"):
        z = np.asarray(_array(trace.z), dtype=np.float64)
        if z.ndim != 2 or not np.isfinite(z).any():
            return None
        xs, ys = _list(trace.x) or list(range(z.shape[1])), _list(trace.y) or list(range(z.shape[0]))
        low, high = (np.unravel_index(f(np.where(np.isfinite(z), z, s)), z.shape) for f, s in
                     ((np.argmin, np.inf), (np.argmax, -np.inf)))  # fmt: skip
        return words["grid"].format(
            name=_name(trace, words), rows=z.shape[0], cols=z.shape[1],
            low=number(z[low]), low_at=f"{_cell(xs[low[1]])}, {_cell(ys[low[0]])}",
            high=number(z[high]), high_at=f"{_cell(xs[high[1]])}, {_cell(ys[high[0]])}",
        )  # fmt: skip
    found = (
        list(_parts(trace)) if trace.type in _PARTS else list(_flows(trace)) if trace.type == "sankey" else []
    )
    if not found:
        return None
    a, b, v = max(found, key=lambda f: f[2])
    key = "parts" if trace.type in _PARTS else "flows"
    return words[key].format(n=len(found), label=a, source=a, target=b, value=number(v))


def describe(fig: go.Figure, words: Mapping[str, str]) -> str:
    """A few sentences on what `fig` shows, from its numbers: its title and axes, then per named
    series (once per name) its total or range and highest point; a figure without named series
    is told by its annotations as well."""
    said: list[str] = []
    title = plain(fig.layout.title.text or "")
    if title:
        said.append(f"{title}.")
    x, y = _axis_title(fig, "x", ""), _axis_title(fig, "y", "")
    if x and y:
        said.append(words["axes"].format(x=x, y=y))
    seen: set[str] = set()
    sentences = []
    for trace in _data(fig):
        if trace.name and trace.name in seen:
            continue
        seen.add(trace.name or "")
        sentence = _sentence(fig, trace, words)
        if sentence:
            sentences.append(sentence)
    said += sentences[:MOST_SERIES]
    if len(sentences) > MOST_SERIES:
        said.append(words["more"].format(n=len(sentences) - MOST_SERIES))
    if not any(t.name for t in _data(fig)):
        notes = [plain(a.text) for a in fig.layout.annotations if a.text]
        if notes:
            said.append(words["notes"].format(notes="; ".join(notes[:MOST_NOTES])))
    return " ".join(said) or words["empty"]
