"""Figures of the probability-tree lesson: the tree, its leaf sums, the rejected-mass Sankey
and the tally of sampled paths.

Every builder takes data from :mod:`specdec_core.tree_paths` and an optional ``text``
mapping (English defaults in :data:`TEXT`); token labels are HTML-escaped everywhere,
because plotly renders hover and annotation text as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.tree_paths import MassFlows, Tally, TreeView, layout, leaf_split, mass_flows
from specdec_core.viz import palette

TEXT: dict[str, str] = {
    "col_proposal": "① the draft proposes<br>x ~ q",
    "col_verdict": "② the target keeps x<br>with prob. min(1, p/q)",
    "col_emitted": "③ emitted token<br>and its path mass",
    "col_total": "each token's leaves<br>add up to p(x)",
    "start": "start",
    "other": "other",
    "set_deficit": "D: p > q",
    "set_surplus": "S: q > p",
    "set_equal": "p = q",
    "set_mixed": "merged: both",
    "edge_proposal": "propose (q)",
    "edge_accept": "keep",
    "edge_reject": "reject",
    "edge_resample": "redraw (r)",
    "hover_proposal": "draft proposes {token}<br>q = {prob}",
    "hover_accept": "{token} is kept<br>P(keep | proposed) = {prob}<br>path mass {mass}",
    "hover_reject": "rejected<br>P(reject | proposed) = {prob}<br>path mass {mass}",
    "hover_resample": "redrawn as {token}<br>r = {prob}<br>path mass {mass}",
    "hover_sampled": "sampled {k} of {n} times",
    "hover_total": "{token}: {parts} = {total}<br>p = {p}",
    "direct": "kept when proposed = min(p, q)",
    "via_reject": "redrawn after a rejection = (p − q)₊",
    "target_p": "p(x)",
    "leaf_axis": "probability",
    "sankey_left": "proposed (q)",
    "sankey_right": "emitted (p)",
    "sankey_kept": "{token} proposed and kept: {mass}",
    "sankey_moved": "{src} rejected, redrawn as {dst}<br>(q−p)₊({src}) × r({dst}) = {surplus} × {r} = {mass}",
    "tally_share": "share of sampled paths",
    "tally_band": "p(x) ± 2 standard errors",
    "tally_axis": "share",
}

HIGHLIGHT = "#F2B400"
_MAX_LABEL = 10


def _text(text: Mapping[str, str] | None) -> dict[str, str]:
    return {**TEXT, **(text or {})}


def display_label(label: str, limit: int = _MAX_LABEL) -> str:
    """A token label made safe and short for plotly text: visible whitespace (a token's leading
    space matters), at most `limit` characters, HTML escaped."""
    shown = label.replace("\n", "↵").replace("\t", "⇥").replace(" ", "␣") or "∅"
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return html.escape(shown)


def num(x: float) -> str:
    """A probability for display: three significant digits, never a bare 0 for a positive value."""
    if x == 0:
        return "0"
    if abs(x) < 1e-3:
        return f"{x:.1e}"
    return f"{x:.3g}"


def _labels(view: TreeView, t: Mapping[str, str]) -> list[str]:
    return [t["other"] if g == view.other else display_label(lab) for g, lab in enumerate(view.labels)]


_SET_ORDER = [palette.DEFICIT, palette.SURPLUS, palette.OVERLAP, palette.TARGET_ONLY]


def set_colours(view: TreeView, t: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(colour, legend name) of each label by its set: deficit D, surplus S, both, or neither."""
    t = _text(t)
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


def _edge_points(kind: str, x0: float, y0: float, x1: float, y1: float) -> tuple[list[float], list[float]]:
    """An accept edge bends through the verdict column on its leaf's row; others are straight."""
    if kind == "accept":
        return [x0, _VERDICT_X, x1], [y0, y1, y1]
    return [x0, x1], [y0, y1]


def tree_figure(
    view: TreeView,
    highlight: Sequence[int] = (),
    tally: Tally | None = None,
    text: Mapping[str, str] | None = None,
) -> go.Figure:
    """The proposal → verdict → redraw tree, left to right, with a column of per-token totals.

    Edges are as thick as their path mass and labelled with their conditional probability;
    leaves show their path mass; dotted lines gather each token's leaves into its total,
    which equals p(x). `highlight` (node ids from the start) draws one sampled path on top.
    """
    t = _text(text)
    tree = view.tree
    pos = layout(view)
    names = _labels(view, t)
    colours = set_colours(view, t)
    split = leaf_split(view)
    on_path = set(highlight)
    dim = 0.22 if on_path else 1.0
    fig = go.Figure()
    notes: list[dict] = []

    for node, g in zip(tree.nodes, view.node_group, strict=True):
        if node.parent is None:
            continue
        parent = tree.nodes[node.parent]
        xs, ys = _edge_points(node.kind, pos.x[parent.id], pos.y[parent.id], pos.x[node.id], pos.y[node.id])
        hot = node.id in on_path
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": _EDGE_COLOUR[node.kind], "width": 1.5 + 10 * node.mass + (4 if hot else 0)},
                opacity=1.0 if hot else dim,
                hoverinfo="skip",
                showlegend=False,
            )
        )
        if node.kind == "proposal":
            lx, ly, label = 0.3 * xs[0] + 0.7 * xs[1], 0.3 * ys[0] + 0.7 * ys[1], f"q={num(node.edge_prob)}"
        elif node.kind == "accept":
            lx, ly, label = 2.5, ys[1], f"✓ {num(node.edge_prob)}"
        elif node.kind == "reject":
            lx, ly, label = 0.5 * (xs[0] + xs[1]), 0.5 * (ys[0] + ys[1]), f"✗ {num(node.edge_prob)}"
        else:
            lx, ly, label = (
                0.55 * xs[1] + 0.45 * xs[0],
                0.55 * ys[1] + 0.45 * ys[0],
                f"r={num(node.edge_prob)}",
            )
        notes.append(
            {
                "x": lx,
                "y": ly,
                "text": label,
                "showarrow": False,
                "font": {"size": 12, "color": _EDGE_COLOUR[node.kind]},
                "bgcolor": "rgba(255,255,255,0.85)",
                "opacity": 1.0 if hot or not on_path else 0.45,
            }
        )
        if node.is_leaf:
            fig.add_trace(
                go.Scatter(
                    x=[pos.x[node.id] + 0.12, _TOTAL_X],
                    y=[pos.y[node.id], pos.total_y[g]],
                    mode="lines",
                    line={"color": colours[g][0], "width": 1.2, "dash": "dot"},
                    opacity=0.55 if not on_path else (0.9 if hot else 0.15),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )

    xs, ys, fills, sizes, rings, labels, hovers, text_pos = [], [], [], [], [], [], [], []
    for node, g in zip(tree.nodes, view.node_group, strict=True):
        xs.append(pos.x[node.id])
        ys.append(pos.y[node.id])
        hot = node.id in on_path
        rings.append(HIGHLIGHT if hot else "white")
        sizes.append(26 if hot else 20)
        if node.kind == "root":
            fills.append(palette.TARGET_ONLY)
            labels.append(t["start"])
            hovers.append(t["start"])
            text_pos.append("middle left")
            continue
        if node.kind == "reject":
            fills.append(palette.REJECTED)
            labels.append("✗")
            hovers.append(t["hover_reject"].format(prob=num(node.edge_prob), mass=num(node.mass)))
            text_pos.append("top center")
            continue
        fills.append(colours[g][0])
        key = {"proposal": "hover_proposal", "accept": "hover_accept", "resample": "hover_resample"}[
            node.kind
        ]
        hover = t[key].format(token=names[g], prob=num(node.edge_prob), mass=num(node.mass))
        if node.is_leaf:
            labels.append(f"{names[g]} <b>{num(node.mass)}</b>")
            text_pos.append("middle right")
            if tally is not None and tally.n:
                hover += "<br>" + t["hover_sampled"].format(k=tally.leaf_counts.get(node.id, 0), n=tally.n)
        else:
            labels.append(names[g])
            text_pos.append("top center")
        hovers.append(hover)
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            marker={"color": fills, "size": sizes, "opacity": 1.0, "line": {"color": rings, "width": 3}},
            text=labels,
            textposition=text_pos,
            textfont={"size": 13},
            hovertext=hovers,
            hoverinfo="text",
            showlegend=False,
        )
    )

    ticks = [(pos.y[n.id], pos.x[n.id]) for n in tree.nodes if n.kind == "accept"]
    if ticks:
        fig.add_trace(
            go.Scatter(
                x=[_VERDICT_X] * len(ticks),
                y=[y for y, _ in ticks],
                mode="markers",
                marker={"symbol": "circle", "size": 9, "color": palette.ACCEPTED},
                opacity=dim if on_path else 1.0,
                hoverinfo="skip",
                showlegend=False,
            )
        )

    end_group = view.node_group[highlight[-1]] if highlight and tree.nodes[highlight[-1]].is_leaf else None
    total_hover, total_text = [], []
    for g in range(len(view.labels)):
        parts = " + ".join(num(v) for v in (split.direct[g], split.via_reject[g]) if v > 0) or "0"
        total_hover.append(
            t["hover_total"].format(token=names[g], parts=parts, total=num(split.total[g]), p=num(tree.p[g]))
        )
        total_text.append(f"{names[g]} <b>{num(split.total[g])}</b>")
    fig.add_trace(
        go.Scatter(
            x=[_TOTAL_X] * len(view.labels),
            y=pos.total_y,
            mode="markers+text",
            marker={
                "color": [c for c, _ in colours],
                "size": [30 if g == end_group else 22 for g in range(len(view.labels))],
                "opacity": 1.0,
                "symbol": "square",
                "line": {
                    "color": [HIGHLIGHT if g == end_group else "white" for g in range(len(view.labels))],
                    "width": 3,
                },
            },
            text=total_text,
            textposition="middle right",
            textfont={"size": 14},
            hovertext=total_hover,
            hoverinfo="text",
            showlegend=False,
        )
    )

    for colour, name in sorted(set(colours), key=lambda cn: _SET_ORDER.index(cn[0])):
        fig.add_trace(
            go.Scatter(x=[None], y=[None], mode="markers", marker={"color": colour, "size": 12}, name=name)
        )
    for kind, colour in _EDGE_COLOUR.items():
        if any(n.kind == kind for n in tree.nodes):
            fig.add_trace(
                go.Scatter(
                    x=[None],
                    y=[None],
                    mode="lines",
                    line={"color": colour, "width": 4},
                    name=t[f"edge_{kind}"],
                )
            )

    top = -1.0
    for x, key in (
        (1.0, "col_proposal"),
        (_VERDICT_X, "col_verdict"),
        (3.0, "col_emitted"),
        (_TOTAL_X, "col_total"),
    ):
        notes.append(
            {
                "x": x,
                "y": top,
                "text": f"<b>{t[key]}</b>",
                "showarrow": False,
                "font": {"size": 13},
                "yanchor": "bottom",
            }
        )
    rows = max(pos.rows, len(view.labels))
    fig.update_layout(
        **palette.base_layout(
            height=int(150 + 46 * rows),
            margin={"l": 10, "r": 10, "t": 20, "b": 10},
            legend={"orientation": "h", "yanchor": "top", "y": -0.01, "x": 0},
            annotations=notes,
            hovermode="closest",
        )
    )
    fig.update_xaxes(visible=False, range=[-0.45, 5.1], fixedrange=True)
    fig.update_yaxes(visible=False, range=[rows - 0.4, top - 0.5], fixedrange=True)
    return fig


def leaf_sum_figure(view: TreeView, text: Mapping[str, str] | None = None) -> go.Figure:
    """Per token, its direct leaf stacked on its redrawn leaves, against a marker at p(x)."""
    t = _text(text)
    split = leaf_split(view)
    names = _labels(view, t)
    fig = go.Figure()
    for values, colour, key in (
        (split.direct, palette.OVERLAP, "direct"),
        (split.via_reject, palette.DEFICIT, "via_reject"),
    ):
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=t[key],
                marker_color=colour,
                text=[num(v) if v > 0 else "" for v in values],
                textposition="inside",
                hovertemplate="%{x}: %{y:.6g}<extra>" + t[key] + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
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
    fig.update_layout(**layout)
    fig.update_yaxes(title=t["leaf_axis"], range=[0, top * 1.25], gridcolor=palette.GRID)
    fig.update_xaxes(type="category")
    return fig


def sankey_figure(view: TreeView, text: Mapping[str, str] | None = None) -> go.Figure:
    """All probability from proposals (left, sizes q) to emitted tokens (right, sizes p).

    Green bands are kept proposals, min(p, q); red bands are mass rejected at a surplus token
    and redrawn as a deficit token, surplus(x) · r(y). Both columns add up to 1.
    """
    t = _text(text)
    flows: MassFlows = mass_flows(view)
    names = _labels(view, t)
    colours = [c for c, _ in set_colours(view, t)]
    count = len(names)
    left = [g for g in range(count) if flows.q[g] > 0]
    right = [g for g in range(count) if flows.p[g] > 0]
    index = {("L", g): i for i, g in enumerate(left)} | {("R", g): len(left) + i for i, g in enumerate(right)}
    surplus = flows.rejected.sum(axis=1)
    rejection = float(surplus.sum())
    source, target, value, link_colour, hover = [], [], [], [], []
    for g in range(count):
        if flows.accepted[g] > 0:
            source.append(index["L", g])
            target.append(index["R", g])
            value.append(float(flows.accepted[g]))
            link_colour.append(_rgba(palette.ACCEPTED, 0.45))
            hover.append(t["sankey_kept"].format(token=names[g], mass=num(flows.accepted[g])))
    for x in range(count):
        for y in range(count):
            mass = flows.rejected[x, y]
            if mass > 0:
                source.append(index["L", x])
                target.append(index["R", y])
                value.append(float(mass))
                link_colour.append(_rgba(palette.REJECTED, 0.45))
                hover.append(
                    t["sankey_moved"].format(
                        src=names[x],
                        dst=names[y],
                        mass=num(mass),
                        surplus=num(surplus[x]),
                        r=num(flows.rejected[:, y].sum() / rejection),
                    )
                )
    node_labels = [f"{names[g]} · q {num(flows.q[g])}" for g in left] + [
        f"{names[g]} · p {num(flows.p[g])}" for g in right
    ]
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": node_labels,
                "color": [colours[g] for g in left] + [colours[g] for g in right],
                "pad": 14,
                "thickness": 18,
                "x": [0.001] * len(left) + [0.999] * len(right),
                "y": _spread(flows.q[left]) + _spread(flows.p[right]),
                "hovertemplate": "%{label}<extra></extra>",
            },
            link={
                "source": source,
                "target": target,
                "value": value,
                "color": link_colour,
                "customdata": hover,
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    notes = [
        {"x": 0, "y": 1.08, "xref": "paper", "yref": "paper", "text": f"<b>{t['sankey_left']}</b>",
         "showarrow": False, "xanchor": "left"},
        {"x": 1, "y": 1.08, "xref": "paper", "yref": "paper", "text": f"<b>{t['sankey_right']}</b>",
         "showarrow": False, "xanchor": "right"},
    ]  # fmt: skip
    fig.update_layout(
        **palette.base_layout(height=int(220 + 34 * max(len(left), len(right))), annotations=notes)
    )
    return fig


def _spread(sizes: np.ndarray) -> list[float]:
    """Sankey node centres (0 = top) stacked in order, each as tall as its share."""
    pad = 0.02
    total = float(sizes.sum()) + pad * (len(sizes) - 1)
    tops = np.concatenate([[0.0], np.cumsum(sizes + pad)[:-1]])
    return [float(v) for v in np.clip((tops + sizes / 2) / total, 0.001, 0.999)]


def _rgba(colour: str, alpha: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def tally_figure(view: TreeView, tally: Tally, text: Mapping[str, str] | None = None) -> go.Figure:
    """Shares of sampled paths per token, next to p(x) with a ±2 standard-error whisker."""
    t = _text(text)
    names = _labels(view, t)
    fig = go.Figure(
        [
            go.Bar(
                x=names,
                y=tally.share,
                name=t["tally_share"],
                marker_color=palette.TARGET_ONLY,
                customdata=tally.counts,
                hovertemplate="%{x}: %{y:.3f} (%{customdata})<extra></extra>",
            ),
            go.Scatter(
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
    )
    top = float(max(tally.p.max(), tally.share.max(), (tally.p + tally.band).max()))
    fig.update_layout(**palette.base_layout(height=320, bargap=0.35))
    fig.update_yaxes(title=t["tally_axis"], range=[0, min(1.05, top * 1.15)], gridcolor=palette.GRID)
    fig.update_xaxes(type="category")
    return fig
