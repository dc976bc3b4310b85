"""Figures written as plotly's own JSON: dicts of traces and layout, wrapped without re-checking.

Building a figure through plotly's object API (``go.Bar(...)``, ``make_subplots``,
``update_layout``, ``update_xaxes``) walks a validator for every property at every call,
which made building a lesson's figures most of a page's rerun. Builders on this module write
the same figure as a dict (``{"type": "bar", ...}`` traces and a layout dict) and
:func:`figure` wraps it in a ``go.Figure`` without plotly's validation. The specs are
still checked: tests/test_viz_spec.py feeds every such builder's output to a validating
``go.Figure`` (an unknown or malformed property raises there), so an invalid spec fails a
test instead of slowing every rerun.

``st.plotly_chart`` serialises its figure on every rerun through ``to_dict()``, which in
plotly deep-copies the whole figure and then walks it again for arrays to base64-encode;
that was a third of a lesson page's rerun. :class:`SpecFigure` makes that dict once, in
one copying walk, and hands it out again until the figure is changed.
"""

from __future__ import annotations

import base64
import copy
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import is_skipped_key, to_typed_array_spec
from plotly.subplots import make_subplots

_SCALARS = (str, int, float, bool, type(None))


class SpecFigure(go.Figure):
    """A ``go.Figure`` of plotly JSON, built into plotly's objects only when something reads them.

    ``st.plotly_chart`` only asks for ``to_dict()``: that is made from the JSON itself (equal
    to plotly's own, tests/test_viz_spec.py compares them for every builder), once, and
    reused. Plotly's constructor, which walks every property of the layout, each axis and the
    template, runs on the first other use (``fig.data``, ``fig.layout``, ``update_layout`` …),
    and changes made after that are validated and drop the stored dict.

    The dict is shared between calls: treat it as read-only, as ``st.plotly_chart`` and
    ``plotly.io.to_json`` do."""

    def __init__(self, data: list[dict[str, Any]], layout: dict[str, Any]) -> None:
        object.__setattr__(self, "_spec", {"data": data, "layout": layout})
        object.__setattr__(self, "_spec_dict", None)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the instance lacks: plotly's state, before it is built.
        spec = self.__dict__.get("_spec")
        if spec is None or name.startswith("__"):
            raise AttributeError(name)
        object.__setattr__(self, "_spec", None)
        go.Figure.__init__(self, spec, _validate=False)
        for part in (self, self._layout_obj, *self._data_objs):
            part._validate = True  # unvalidated, plotly writes changes into its dicts unannounced
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        if self._spec_dict is None:
            spec = self.__dict__.get("_spec")
            if spec is not None:
                res = {"data": _copied(spec["data"]), "layout": _copied(spec["layout"])}
            else:
                res = {"data": _copied(self._data), "layout": _copied(self._layout)}
                if self._frame_objs:
                    res["frames"] = _copied([frame._props for frame in self._frame_objs])
            object.__setattr__(self, "_spec_dict", res)
        return dict(self._spec_dict)

    def _changed(self) -> None:
        object.__setattr__(self, "_spec_dict", None)

    def __setattr__(self, name: str, value: Any) -> None:
        self._changed()
        super().__setattr__(name, value)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._changed()
        super().__setitem__(key, value)


def _dropping_the_dict(name: str) -> Any:
    """SpecFigure's version of go.Figure's method `name`: drop the stored dict, then do it."""

    def method(self: SpecFigure, *args: Any, **kwargs: Any) -> Any:
        self._changed()
        return getattr(super(SpecFigure, self), name)(*args, **kwargs)

    method.__name__ = name
    return method


# every change to a built figure's traces or layout goes through one of these
for _name in (
    "_restyle_child",
    "_relayout_child",
    "_perform_plotly_update",
    "_perform_plotly_restyle",
    "_perform_plotly_relayout",
    "add_traces",
    "update",
):
    setattr(SpecFigure, _name, _dropping_the_dict(_name))


def _copied(obj: Any) -> Any:
    """`obj` copied as plotly's ``to_dict`` copies and converts it: arrays under a dict key
    (except plotly's skipped keys) become its base64 typed-array specs, the rest deep copies."""
    if isinstance(obj, _SCALARS):
        return obj
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if isinstance(value, _SCALARS):
                out[key] = value
            elif is_skipped_key(key):
                out[key] = copy.deepcopy(value)
            elif isinstance(value, np.ndarray):
                out[key] = _typed_array(value)
            elif isinstance(value, (dict, list, tuple)):
                out[key] = _copied(value)
            elif is_homogeneous_array(value):
                out[key] = to_typed_array_spec(value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(obj, list):
        if all(isinstance(v, _SCALARS) for v in obj):
            return list(obj)
        return [_copied(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_copied(v) for v in obj)
    return copy.deepcopy(obj)


#: plotly.js typed-array names of the dtypes plotly encodes, and plotly's downcasts of 64-bit ints
_SHORT = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4"}
_SHORT |= {"float32": "f4", "float64": "f8"}
_NARROW = {
    "int64": [np.int8, np.int16, np.int32],
    "uint64": [np.uint8, np.uint16, np.uint32],
}


def _typed_array(v: np.ndarray) -> Any:
    """Plotly's ``to_typed_array_spec`` of a numeric array without its generic checks (which
    cost more than the encoding); any other array goes to plotly's own function."""
    name = v.dtype.name
    if v.size == 0 or not v.dtype.isnative or (name not in _SHORT and name not in _NARROW):
        return to_typed_array_spec(v)
    if name in _NARROW:
        lo, hi = v.min(), v.max()
        fits = [t for t in _NARROW[name] if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max]
        if not fits:
            return to_typed_array_spec(v)
        v = v.astype(fits[0])
    out = {"dtype": _SHORT[v.dtype.name], "bdata": base64.b64encode(np.ascontiguousarray(v)).decode("ascii")}
    if v.ndim > 1:
        out["shape"] = str(v.shape)[1:-1]
    return out


def figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> SpecFigure:
    """A figure holding `data` and `layout` as given (plotly's validators are not run).

    A template named in `layout` (or plotly's default one when none is) is put in as its
    content, as a validating figure does: plotly.js knows no template by name."""
    name = layout.get("template", pio.templates.default)
    if isinstance(name, str):
        layout = {**layout, "template": _template(name)}
    return SpecFigure(data, _titles(layout))


def _titles(layout: dict[str, Any]) -> dict[str, Any]:
    """`layout` with every title given as text (the figure's, an axis's) written as
    ``{"text": …}``, as plotly's validator writes it (plotly.js reads only that form)."""
    out = dict(layout)
    for key, value in layout.items():
        if key == "title" and isinstance(value, str):
            out[key] = {"text": value}
        elif key[1:5] == "axis" and isinstance(value, dict) and isinstance(value.get("title"), str):
            out[key] = {**value, "title": {"text": value["title"]}}
    return out


@lru_cache(maxsize=8)
def _template(name: str) -> dict[str, Any]:
    return pio.templates[name].to_plotly_json()


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
    (:func:`subplot_title`) so that a title's text does not change the cached layout.
    ``column_widths`` and ``row_heights`` only move the domains: the layout is made (and
    kept) without them and the domains computed as ``make_subplots`` computes them, so a
    figure whose widths follow a slider does not build a plotly figure per value."""
    plain_grid = set(options) <= _PLAIN_GRID_OPTIONS  # no spans, insets or other start cell
    widths = options.pop("column_widths", None) if plain_grid else None
    heights = options.pop("row_heights", None) if plain_grid else None
    axes = copy.deepcopy(_subplot_axes(rows, cols, tuple(sorted(options.items()))))
    if widths is not None or heights is not None:
        h = options.get("horizontal_spacing", 0.2 / cols)
        v = options.get("vertical_spacing", 0.3 / rows)
        for (row, col), (x_domain, y_domain) in _grid_domains(rows, cols, widths, heights, h, v).items():
            x_ref, y_ref = axis_names(row, col, cols)
            axes[layout_axis(x_ref)]["domain"] = x_domain
            axes[layout_axis(y_ref)]["domain"] = y_domain
    return axes


#: Options under which :func:`_grid_domains` lays the grid out as make_subplots does.
_PLAIN_GRID_OPTIONS = {
    "shared_xaxes", "shared_yaxes", "horizontal_spacing", "vertical_spacing", "column_widths", "row_heights",
}  # fmt: skip


def _grid_domains(
    rows: int, cols: int, widths: Any, heights: Any, h: float, v: float
) -> dict[tuple[int, int], tuple[list[float], list[float]]]:
    """(row, col) → (x domain, y domain) of a plain grid started top-left: plotly's own
    arithmetic (plotly/_subplots.py), operation for operation, so the floats are the same."""
    if widths is None:
        w = [(1.0 - h * (cols - 1)) / cols] * cols
    else:
        total = float(sum(widths))
        w = [(1.0 - h * (cols - 1)) * (x / total) for x in widths]
    if heights is None:
        ht = [(1.0 - v * (rows - 1)) / rows] * rows
    else:
        total = float(sum(heights))
        ht = list(reversed([(1.0 - v * (rows - 1)) * (x / total) for x in heights]))

    def snapped(y: float) -> float:
        return 0.0 if -0.01 < y < 0.0 else 1.0 if 1.0 < y < 1.01 else y

    out = {}
    for r in range(rows):  # top to bottom; plotly's grid counts rows from the bottom
        up = rows - 1 - r
        y_s = sum(ht[:up]) + up * v
        y_e = y_s + ht[-1 - r]
        for c in range(cols):
            x_s = sum(w[:c]) + c * h
            x_e = x_s + w[c]
            out[(r + 1, c + 1)] = (
                [max(0.0, x_s), min(1.0, x_e)],
                [max(0.0, snapped(y_s)), min(1.0, snapped(y_e))],
            )
    return out


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
    """A scatter trace as a dict (``go.Scatter(**trace)`` without the checks)."""
    return {"type": "scatter", **trace}


def bar(**trace: Any) -> dict[str, Any]:
    """A bar trace as a dict (``go.Bar(**trace)`` without the checks)."""
    return {"type": "bar", **trace}
