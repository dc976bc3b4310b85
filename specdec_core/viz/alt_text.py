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


def _get(node: Any, *path: str) -> Any:
    """`node[path[0]][path[1]]…`, or None where a key is missing."""
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _spec(fig: go.Figure | Mapping[str, Any]) -> dict[str, Any]:
    """`fig` as plotly's JSON (a dict of plain traces and layout): read at once, where each
    property of a ``go.Figure`` read goes through plotly's validators."""
    spec = dict(fig.to_dict() if isinstance(fig, go.Figure) else fig)
    spec["data"] = [{"type": "scatter", **t} for t in spec.get("data", ())]
    spec.setdefault("layout", {})
    return spec


def _drawing(trace: Mapping[str, Any]) -> bool:
    """Whether `trace` only draws (no name, no hover): edges, in-chart labels."""
    return trace["type"] in ("bar", "scatter") and not trace.get("name") and trace.get("hoverinfo") == "skip"


def _ticks(spec: Mapping[str, Any], trace: Mapping[str, Any]) -> dict[str, dict[Any, str]]:
    """The tick labels `trace`'s x and y axes write for their values (a token under its bar)."""
    found = {}
    for axis in ("x", "y"):
        ref = trace.get(f"{axis}axis") or axis
        layout = spec["layout"].get(f"{axis}axis{ref[1:]}") or {}
        found[axis] = dict(
            zip(_list(layout.get("tickvals")), map(plain, _list(layout.get("ticktext"))), strict=False)
        )
    return found


class _XY:
    """A bar's or a scatter's points: x and y as drawn, the indices of the points drawn (gaps
    between line pieces left out), and each point's token when the trace names one
    (``customdata`` or a scatter's ``text``), else its tick label."""

    def __init__(self, spec: Mapping[str, Any], trace: Mapping[str, Any]) -> None:
        y = _array(trace.get("y"))
        self.y = np.asarray([] if y is None else y, dtype=object if _numbers(y) is None else np.float64)
        x = _array(trace.get("x"))
        self.x = np.arange(len(self.y)) if x is None else np.asarray(x)
        self.kept = np.flatnonzero(_drawn(self.x[: len(self.y)]) & _drawn(self.y[: len(self.x)]))
        self.spec, self.trace, self._ticks = spec, trace, None
        custom = _array(trace.get("customdata"))
        self.names = [custom] if np.ndim(custom) == 1 else []
        if trace["type"] == "scatter" and np.ndim(trace.get("text")) == 1:
            self.names.append(trace["text"])

    def cell(self, axis: str, i: int) -> str:
        value = (self.x if axis == "x" else self.y)[i]
        if self._ticks is None:
            self._ticks = _ticks(self.spec, self.trace)
        tick = self._ticks[axis].get(value) if isinstance(value, int | float | np.number) else None
        return tick or _cell(value)

    def label(self, i: int) -> str:
        return next((plain(n[i]) for n in self.names if i < len(n) and isinstance(n[i], str) and n[i]), "")

    def at(self, i: int, axis: str = "x") -> str:
        """Where point `i` is, in words: its token, else its tick label or value on `axis`."""
        return self.label(i) or self.cell(axis, i)


def _drawn(values: np.ndarray) -> np.ndarray:
    """Which of `values` are drawn coordinates (None and NaN mark gaps between line pieces)."""
    numbers = _numbers(values)
    return (
        np.isfinite(numbers) if numbers is not None else np.array([_present(v) for v in values], dtype=bool)
    )


def _present(value: Any) -> bool:
    """Whether `value` is a drawn coordinate (None and NaN mark gaps between line pieces)."""
    return value is not None and not (isinstance(value, float) and not math.isfinite(value))


def _grid(trace: Mapping[str, Any]) -> tuple[np.ndarray, list[Any], list[Any]]:
    """A heatmap's or a contour's z (float64) and its x and y labels."""
    z = np.asarray(_array(trace.get("z")), dtype=np.float64)
    if z.ndim != 2:
        return np.zeros((0, 0)), [], []
    xs, ys = (
        _list(trace.get("x")) or list(range(z.shape[1])),
        _list(trace.get("y")) or list(range(z.shape[0])),
    )
    return z, xs, ys


def _cells(trace: Mapping[str, Any]) -> Iterator[tuple[Any, Any, float]]:
    """A heatmap's or a contour's (x, y, z) per finite cell."""
    z, xs, ys = _grid(trace)
    for r, c in zip(*np.nonzero(np.isfinite(z)), strict=True):
        yield xs[c], ys[r], float(z[r, c])


def _parts(trace: Mapping[str, Any]) -> Iterator[tuple[str, str, float]]:
    """A sunburst's (or pie's) (label, parent label, value) per part with a value."""
    labels, values = [plain(x) for x in _list(trace.get("labels"))], _list(trace.get("values"))
    ids, parents = _list(trace.get("ids")) or labels, _list(trace.get("parents"))
    names = dict(zip(ids, labels, strict=False))
    for i, (label, value) in enumerate(zip(labels, values, strict=False)):
        if _is_number(value) and value > 0:
            yield label, names.get(parents[i], "") if i < len(parents) else "", float(value)


def _flows(trace: Mapping[str, Any]) -> Iterator[tuple[str, str, float]]:
    """A sankey's (from, to, value) per flow."""
    nodes = [plain(x) for x in _list(_get(trace, "node", "label"))]
    link = trace.get("link") or {}
    for s, t, v in zip(*(_list(link.get(k)) for k in ("source", "target", "value")), strict=False):
        if _is_number(v):
            yield nodes[s], nodes[t], float(v)


def _axis_title(spec: Mapping[str, Any], axis: str, fallback: str) -> str:
    """The title of the figure's only `axis` ("x" or "y"), else `fallback` (several subplots)."""
    if f"{axis}axis2" in spec["layout"]:
        return fallback
    return plain(_get(spec["layout"], f"{axis}axis", "title", "text") or "") or fallback


def _data(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [t for t in spec["data"] if not _drawing(t)]


def _name(trace: Mapping[str, Any], words: Mapping[str, str]) -> str:
    named = trace.get("name") or _get(trace, "colorbar", "title", "text")
    return plain(named or "") or words["unnamed"]


Figure = go.Figure | Mapping[str, Any]


def _notes(spec: Mapping[str, Any]) -> list[str]:
    return [plain(a["text"]) for a in spec["layout"].get("annotations", ()) if a.get("text")]


def table(fig: Figure, words: Mapping[str, str]) -> list[dict[str, str]]:
    """`fig`'s numbers (a figure or its JSON), one row per point (or cell, part, flow), every
    cell text; the columns are the ``col_*`` words (x and y named by the axes' titles when the
    figure has one pair of axes)."""
    spec = _spec(fig)
    name, label, value = words["col_series"], words["col_label"], words["col_value"]
    x, y = (_axis_title(spec, a, words[f"col_{a}"]) for a in ("x", "y"))
    x = words["col_x"] if x in (name, label, value) else x
    y = words["col_y"] if y in (name, label, value, x) else y
    rows: list[dict[str, str]] = []
    for trace in _data(spec):
        series, kind = plain(trace.get("name") or ""), trace["type"]
        if kind in ("bar", "scatter"):
            xy = _XY(spec, trace)
            for i in xy.kept:
                at, token = xy.cell("x", i), xy.label(i)
                rows.append({name: series, label: "" if token == at else token, x: at, y: xy.cell("y", i)})
        elif kind in ("heatmap", "contour"):
            rows += [{name: series, x: _cell(a), y: _cell(b), value: number(c)} for a, b, c in _cells(trace)]
        elif kind in _PARTS:
            parent = words["col_parent"]
            rows += [{name: series, label: t, parent: p, value: number(v)} for t, p, v in _parts(trace)]
        elif kind == "sankey":
            start, end = words["col_from"], words["col_to"]
            rows += [{name: series, start: a, end: b, value: number(v)} for a, b, v in _flows(trace)]
    rows = rows or [{label: note} for note in _notes(spec)]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    drop = {k for k in columns if not any(row.get(k) for row in rows)}  # e.g. no trace names its tokens
    return [{k: row.get(k, "") for k in columns if k not in drop} for row in rows]


def _numbers(values: Any) -> np.ndarray | None:
    """`values` as float64 (None as NaN), or None when they are not numbers (categories)."""
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _points_sentence(
    spec: Mapping[str, Any], trace: Mapping[str, Any], words: Mapping[str, str]
) -> str | None:
    xy = _XY(spec, trace)
    flip = trace["type"] == "bar" and trace.get("orientation") == "h"  # the value runs along x
    values = _numbers(xy.x if flip else xy.y)
    kept = xy.kept[np.isfinite(values[xy.kept])] if values is not None else xy.kept[:0]
    if not kept.size:
        return None
    where = "y" if flip else "x"
    if trace["type"] == "scatter" and not trace.get("name") and all(xy.label(i) for i in kept):
        return words["notes"].format(
            notes=words["list_sep"].join(xy.label(i) for i in kept[:MOST_NOTES])
        )  # labelled places
    top = int(kept[np.argmax(values[kept])])
    name, high, at = _name(trace, words), number(values[top]), xy.at(top, where)
    if kept.size == 1:
        return words["point"].format(name=name, y=high, at=at)
    if trace["type"] == "bar":
        return words["bars"].format(name=name, total=number(values[kept].sum()), top=high, at=at)
    first, last = int(kept[0]), int(kept[-1])
    return words["line"].format(
        name=name, first=number(values[first]), x0=xy.at(first, where), last=number(values[last]),
        x1=xy.at(last, where), top=high, at=at,
    )  # fmt: skip


def _sentence(spec: Mapping[str, Any], trace: Mapping[str, Any], words: Mapping[str, str]) -> str | None:
    """One sentence on `trace`'s numbers, or None when it has none."""
    kind = trace["type"]
    if kind in ("bar", "scatter"):
        return _points_sentence(spec, trace, words)
    if kind in ("heatmap", "contour"):
        z, xs, ys = _grid(trace)
        finite = np.isfinite(z)
        if not finite.any():
            return None
        low = np.unravel_index(np.argmin(np.where(finite, z, np.inf)), z.shape)
        high = np.unravel_index(np.argmax(np.where(finite, z, -np.inf)), z.shape)
        return words["grid"].format(
            name=_name(trace, words), rows=z.shape[0], cols=z.shape[1],
            low=number(z[low]), low_at=f"{_cell(xs[low[1]])}, {_cell(ys[low[0]])}",
            high=number(z[high]), high_at=f"{_cell(xs[high[1]])}, {_cell(ys[high[0]])}",
        )  # fmt: skip
    found = list(_parts(trace)) if kind in _PARTS else list(_flows(trace)) if kind == "sankey" else []
    if not found:
        return None
    a, b, v = max(found, key=lambda f: f[2])
    key = "parts" if kind in _PARTS else "flows"
    return words[key].format(n=len(found), label=a, source=a, target=b, value=number(v))


def describe(fig: Figure, words: Mapping[str, str]) -> str:
    """A few sentences on what `fig` (a figure or its JSON) shows, from its numbers: its title
    and axes, then per named series (once per name) its total or range and highest point; a
    figure without named series is told by its annotations as well."""
    spec = _spec(fig)
    said: list[str] = []
    title = plain(_get(spec["layout"], "title", "text") or "")
    if title:
        said.append(f"{title}.")
    x, y = _axis_title(spec, "x", ""), _axis_title(spec, "y", "")
    if x and y:
        said.append(words["axes"].format(x=x, y=y))
    seen: set[str] = set()
    sentences = []
    for trace in _data(spec):
        name = trace.get("name") or ""
        if name and name in seen:
            continue
        seen.add(name)
        sentence = _sentence(spec, trace, words)
        if sentence:
            sentences.append(sentence)
    said += sentences[:MOST_SERIES]
    if len(sentences) > MOST_SERIES:
        said.append(words["more"].format(n=len(sentences) - MOST_SERIES))
    if not any(t.get("name") for t in _data(spec)):
        notes = _notes(spec)
        if notes:
            said.append(words["notes"].format(notes=words["list_sep"].join(notes[:MOST_NOTES])))
    return words["sentence_sep"].join(said) or words["empty"]
