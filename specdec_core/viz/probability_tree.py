"""Figures of the probability-tree lesson: the tree, its leaf sums and the tally of sampled
paths (the rejected-mass Sankey is in :mod:`specdec_core.viz.probability_tree_sankey`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from specdec_core.course.probability_tree import Tally, TreeLayout, TreeView, layout, leaf_split
from specdec_core.verify import TreeNode
from specdec_core.viz import palette
from specdec_core.viz.labels import display_label
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.spec import axis, bar, figure, scatter
from specdec_core.viz.strings import pick

_SETS = ("set_deficit", "set_surplus", "set_equal", "set_mixed")

#: Figure strings each builder reads (``[chart]`` of lessons/<lang>/tree.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "set_colours": _SETS,
    "tree_figure": (
        *_SETS,
        "col_proposal",
        "col_verdict",
        "col_emitted",
        "col_total",
        "start",
        "other",
        "edge_proposal",
        "edge_accept",
        "edge_reject",
        "edge_resample",
        "hover_proposal",
        "hover_accept",
        "hover_reject",
        "hover_resample",
        "hover_sampled",
        "hover_total",
    ),
    "leaf_sum_figure": ("other", "direct", "via_reject", "target_p", "leaf_axis"),
    "tally_figure": ("other", "tally_share", "tally_band", "tally_axis"),
}

HIGHLIGHT = palette.HIGHLIGHT


def num(x: float) -> str:
    """A probability for display: three significant digits, never a bare 0 for a positive value."""
    if x == 0:
        return "0"
    if abs(x) < 1e-3:
        return f"{x:.1e}"
    return f"{x:.3g}"


def group_names(view: TreeView, t: Mapping[str, str]) -> list[str]:
    """Each label group's name for a figure: its token label escaped, or ``t["other"]``."""
    return [t["other"] if g == view.other else display_label(lab) for g, lab in enumerate(view.labels)]


_SET_ORDER = [palette.DEFICIT, palette.SURPLUS, palette.OVERLAP, palette.TARGET_ONLY]


def set_colours(view: TreeView, text: Mapping[str, str]) -> list[tuple[str, str]]:
    """(colour, legend name) of each label by its set: deficit D, surplus S, both, or neither."""
    t = pick(text, KEYS, "set_colours")
    d, s = set(view.tree.deficit_set), set(view.tree.surplus_set)
    out = []
    for g in range(len(view.labels)):
        if g in d and g in s:
            out.append((palette.TARGET_ONLY, t["set_mixed"]))
        elif g in d:
            out.append((palette.DEFICIT, t["set_deficit"]))
        elif g in s:
            out.append((palette.SURPLUS, t["set_surplus"]))
        else:
            out.append((palette.OVERLAP, t["set_equal"]))
    return out


_EDGE_COLOUR = {
    "proposal": palette.DRAFT,
    "accept": palette.ACCEPTED,
    "reject": palette.REJECTED,
    "resample": palette.DEFICIT,
}
_VERDICT_X = 2.0
_TOTAL_X = 4.25
_HEADER_Y = -1.0
_HEADERS = ((1.0, "col_proposal"), (_VERDICT_X, "col_verdict"), (3.0, "col_emitted"), (_TOTAL_X, "col_total"))
_HOVER = {"proposal": "hover_proposal", "accept": "hover_accept", "resample": "hover_resample"}


@dataclass(frozen=True)
class _Drawing:
    """Everything the parts of one tree figure share."""

    view: TreeView
    pos: TreeLayout
    names: list[str]
    colours: list[tuple[str, str]]
    on_path: frozenset[int]
    t: dict[str, str]

    def dim(self, hot: bool, faded: float) -> float:
        """Opacity: full without a highlighted path, else full on it and `faded` off it."""
        return 1.0 if hot or not self.on_path else faded


def _edge_points(kind: str, x0: float, y0: float, x1: float, y1: float) -> tuple[list[float], list[float]]:
    """An accept edge bends through the verdict column on its leaf's row; others are straight."""
    if kind == "accept":
        return [x0, _VERDICT_X, x1], [y0, y1, y1]
    return [x0, x1], [y0, y1]


def _edge_label(node: TreeNode, xs: list[float], ys: list[float]) -> tuple[float, float, str]:
    """Where an edge's conditional probability is written, and how."""
    if node.kind == "proposal":
        return 0.3 * xs[0] + 0.7 * xs[1], 0.3 * ys[0] + 0.7 * ys[1], f"q={num(node.edge_prob)}"
    if node.kind == "accept":
        return (_VERDICT_X + xs[2]) / 2, ys[2], f"✓ {num(node.edge_prob)}"
    if node.kind == "reject":
        return (xs[0] + xs[1]) / 2, (ys[0] + ys[1]) / 2, f"✗ {num(node.edge_prob)}"
    return 0.45 * xs[0] + 0.55 * xs[1], 0.45 * ys[0] + 0.55 * ys[1], f"r={num(node.edge_prob)}"


class _Lines:
    """Line segments gathered into one trace per look (colour, width, dash, opacity): plotly
    draws each trace as a whole, so a big tree draws as a few traces, not one per edge. Widths are
    rounded to half a pixel; traces that stand out (`top`: the highlighted path) are drawn
    after the rest, so on top."""

    def __init__(self) -> None:
        self._traces: dict[tuple, dict] = {}
        self._top: set[tuple] = set()

    def add(self, xs: list[float], ys: list[float], line: dict, opacity: float, top: bool = False) -> None:
        line = {**line, "width": round(2 * line["width"]) / 2}
        key = (line["color"], line["width"], line.get("dash"), opacity)
        trace = self._traces.get(key)
        if trace is None:
            self._traces[key] = scatter(
                x=list(xs),
                y=list(ys),
                mode="lines",
                line=line,
                opacity=opacity,
                hoverinfo="skip",
                showlegend=False,
            )
        else:
            trace["x"] += [None, *xs]
            trace["y"] += [None, *ys]
        if top:
            self._top.add(key)

    def traces(self) -> list[dict]:
        return [t for k, t in self._traces.items() if k not in self._top] + [
            t for k, t in self._traces.items() if k in self._top
        ]


def _add_edges(data: list[dict], dr: _Drawing) -> list[dict]:
    """Edges as thick as their mass, the verdict ticks, and dotted lines from leaves to totals;
    returns the edge-label annotations."""
    tree, pos = dr.view.tree, dr.pos
    notes = []
    lines = _Lines()
    for node, g in zip(tree.nodes, dr.view.node_group, strict=True):
        if node.parent is None:
            continue
        xs, ys = _edge_points(
            node.kind, pos.x[node.parent], pos.y[node.parent], pos.x[node.id], pos.y[node.id]
        )
        hot = node.id in dr.on_path
        colour = _EDGE_COLOUR[node.kind]
        width = 1.5 + 10 * node.mass + (4 if hot else 0)
        lines.add(xs, ys, {"color": colour, "width": width}, dr.dim(hot, 0.22), top=hot)
        x, y, label = _edge_label(node, xs, ys)
        notes.append(
            {
                "x": x,
                "y": y,
                "text": label,
                "showarrow": False,
                "font": {"size": 12, "color": colour},
                "bgcolor": palette.rgba(palette.WHITE, 0.85),
                "opacity": dr.dim(hot, 0.45),
            }
        )
        if node.is_leaf:
            lines.add(
                [pos.x[node.id] + 0.12, _TOTAL_X],
                [pos.y[node.id], pos.total_y[g]],
                {"color": dr.colours[g][0], "width": 1.2, "dash": "dot"},
                0.55 if not dr.on_path else (0.9 if hot else 0.15),
                top=hot,
            )
    data += lines.traces()
    ticks = [pos.y[n.id] for n in tree.nodes if n.kind == "accept"]
    data.append(
        scatter(
            x=[_VERDICT_X] * len(ticks),
            y=ticks,
            mode="markers",
            marker={"size": 9, "color": palette.ACCEPTED},
            opacity=dr.dim(False, 0.22),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    return notes


def _node_face(node: TreeNode, g: int | None, dr: _Drawing, tally: Tally | None) -> tuple[str, str, str, str]:
    """(fill colour, text, text position, hover text) of one node."""
    t = dr.t
    if node.kind == "root":
        return palette.TARGET_ONLY, t["start"], "middle left", t["start"]
    if node.kind == "reject":
        return (
            palette.REJECTED,
            "✗",
            "top center",
            t["hover_reject"].format(prob=num(node.edge_prob), mass=num(node.mass)),
        )
    hover = t[_HOVER[node.kind]].format(token=dr.names[g], prob=num(node.edge_prob), mass=num(node.mass))
    if not node.is_leaf:
        return dr.colours[g][0], dr.names[g], "top center", hover
    if tally is not None and tally.n:
        hover += "<br>" + t["hover_sampled"].format(k=tally.leaf_counts.get(node.id, 0), n=tally.n)
    return dr.colours[g][0], f"{dr.names[g]} <b>{num(node.mass)}</b>", "middle right", hover


def _add_nodes(data: list[dict], dr: _Drawing, tally: Tally | None) -> None:
    tree = dr.view.tree
    faces = [_node_face(n, g, dr, tally) for n, g in zip(tree.nodes, dr.view.node_group, strict=True)]
    hot = [n.id in dr.on_path for n in tree.nodes]
    data.append(
        scatter(
            x=dr.pos.x,
            y=dr.pos.y,
            mode="markers+text",
            marker={
                "color": [f[0] for f in faces],
                "size": [26 if h else 20 for h in hot],
                "opacity": 1.0,
                "line": {"color": [HIGHLIGHT if h else palette.WHITE for h in hot], "width": 3},
            },
            text=[f[1] for f in faces],
            textposition=[f[2] for f in faces],
            textfont={"size": 13},
            hovertext=[f[3] for f in faces],
            hoverinfo="text",
            showlegend=False,
        )
    )


def _add_totals(data: list[dict], dr: _Drawing, end_group: int | None) -> None:
    """The Σ column: one square per label with the sum of its leaves (= p)."""
    split = leaf_split(dr.view)
    count = len(dr.names)
    hovers = []
    for g in range(count):
        parts = " + ".join(num(v) for v in (split.direct[g], split.via_reject[g]) if v > 0) or "0"
        hovers.append(
            dr.t["hover_total"].format(
                token=dr.names[g], parts=parts, total=num(split.total[g]), p=num(split.p[g])
            )
        )
    data.append(
        scatter(
            x=[_TOTAL_X] * count,
            y=dr.pos.total_y,
            mode="markers+text",
            marker={
                "color": [c for c, _ in dr.colours],
                "size": [30 if g == end_group else 22 for g in range(count)],
                "opacity": 1.0,
                "symbol": "square",
                "line": {
                    "color": [HIGHLIGHT if g == end_group else palette.WHITE for g in range(count)],
                    "width": 3,
                },
            },
            text=[f"{dr.names[g]} <b>{num(split.total[g])}</b>" for g in range(count)],
            textposition="middle right",
            textfont={"size": 14},
            hovertext=hovers,
            hoverinfo="text",
            showlegend=False,
        )
    )


def _add_legend(data: list[dict], dr: _Drawing) -> None:
    for colour, name in sorted(set(dr.colours), key=lambda cn: _SET_ORDER.index(cn[0])):
        data.append(
            scatter(x=[None], y=[None], mode="markers", marker={"color": colour, "size": 12}, name=name)
        )
    kinds = {n.kind for n in dr.view.tree.nodes}
    for kind, colour in _EDGE_COLOUR.items():
        if kind in kinds:
            line = {"color": colour, "width": 4}
            data.append(scatter(x=[None], y=[None], mode="lines", line=line, name=dr.t[f"edge_{kind}"]))


@figure_cache
def tree_figure(
    view: TreeView,
    highlight: Sequence[int] = (),
    tally: Tally | None = None,
    *,
    text: Mapping[str, str],
) -> go.Figure:
    """The proposal → verdict → redraw tree, left to right, with a column of per-token totals.

    Edges are as thick as their path mass and labelled with their conditional probability;
    leaves show their path mass; dotted lines gather each token's leaves into its total,
    which equals p(x). `highlight` (node ids from the start) draws one sampled path on top;
    with a `tally`, each leaf's hover says how often sampled paths ended there.
    """
    t = pick(text, KEYS, "tree_figure")
    dr = _Drawing(view, layout(view), group_names(view, t), set_colours(view, t), frozenset(highlight), t)
    data: list[dict] = []
    notes = _add_edges(data, dr)
    _add_nodes(data, dr, tally)
    leaf_end = bool(highlight) and view.tree.nodes[highlight[-1]].is_leaf
    _add_totals(data, dr, view.node_group[highlight[-1]] if leaf_end else None)
    _add_legend(data, dr)
    notes += [
        {
            "x": x,
            "y": _HEADER_Y,
            "text": f"<b>{t[key]}</b>",
            "showarrow": False,
            "font": {"size": 13},
            "yanchor": "bottom",
        }
        for x, key in _HEADERS
    ]
    rows = max(dr.pos.rows, len(view.labels))
    fig_layout = palette.base_layout(
        height=int(150 + rows * (46 if rows <= 16 else 34)),  # big trees get tighter rows
        margin={"l": 10, "r": 10, "t": 20, "b": 50},
        legend={"orientation": "h", "yanchor": "top", "y": -0.01, "x": 0},
        annotations=notes,
        hovermode="closest",
    )
    fig_layout["xaxis"] = {"visible": False, "range": [-0.45, 5.1], "fixedrange": True}
    fig_layout["yaxis"] = {"visible": False, "range": [rows - 0.4, _HEADER_Y - 0.5], "fixedrange": True}
    return figure(data, fig_layout)


@figure_cache
def leaf_sum_figure(view: TreeView, text: Mapping[str, str]) -> go.Figure:
    """Per token, its direct leaf stacked on its redrawn leaves, against a marker at p(x)."""
    t = pick(text, KEYS, "leaf_sum_figure")
    split = leaf_split(view)
    names = group_names(view, t)
    data = [
        bar(
            x=names,
            y=values,
            name=t[key],
            marker={"color": colour},
            text=[num(v) if v > 0 else "" for v in values],
            textposition="inside",
            hovertemplate="%{x}: %{y:.6g}<extra>" + t[key] + "</extra>",
        )
        for values, colour, key in (
            (split.direct, palette.OVERLAP, "direct"),
            (split.via_reject, palette.DEFICIT, "via_reject"),
        )
    ]
    data.append(
        scatter(
            x=names,
            y=view.tree.p,
            mode="markers+text",
            name=t["target_p"],
            marker={
                "symbol": "line-ew-open",
                "size": 44,
                "color": palette.TARGET,
                "line": {"width": 4, "color": palette.TARGET},
            },
            text=[f"<b>{num(v)}</b>" for v in view.tree.p],
            textposition="top center",
            hovertemplate="%{x}: p = %{y:.6g}<extra></extra>",
        )
    )
    top = float(max(view.tree.p.max(), split.total.max()))
    layout = palette.base_layout(barmode="stack", height=360, bargap=0.35)
    layout["legend"] = {**layout["legend"], "traceorder": "normal"}
    layout["yaxis"] = axis(t["leaf_axis"], range=[0, top * 1.25])
    layout["xaxis"] = {"type": "category"}
    return figure(data, layout)


@figure_cache
def tally_figure(view: TreeView, tally: Tally, text: Mapping[str, str]) -> go.Figure:
    """Shares of sampled paths per token, next to p(x) with a ±2 standard-error whisker."""
    t = pick(text, KEYS, "tally_figure")
    names = group_names(view, t)
    data = [
        bar(
            x=names,
            y=tally.share,
            name=t["tally_share"],
            marker={"color": palette.TARGET_ONLY},
            customdata=tally.counts,
            hovertemplate="%{x}: %{y:.3f} (%{customdata})<extra></extra>",
        ),
        scatter(
            x=names,
            y=tally.p,
            mode="markers",
            name=t["tally_band"],
            marker={"symbol": "diamond", "size": 11, "color": palette.TARGET},
            error_y={
                "type": "data",
                "array": tally.band,
                "visible": bool(tally.n),
                "color": palette.TARGET,
            },
            hovertemplate="%{x}: p = %{y:.6g}<extra></extra>",
        ),
    ]
    top = float(max(tally.p.max(), tally.share.max(), (tally.p + tally.band).max()))
    layout = palette.base_layout(height=320, bargap=0.35)
    layout["yaxis"] = axis(t["tally_axis"], range=[0, min(1.05, top * 1.15)])
    layout["xaxis"] = {"type": "category"}
    return figure(data, layout)
