"""Figures of token-tree drafts, from plain data (the Tree drafts lesson and the live round view)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.verify import CandidateTree
from specdec_core.viz import palette
from specdec_core.viz.labels import display_label
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.spec import bar, figure, scatter
from specdec_core.viz.strings import pick

FADED = palette.NEUTRAL

#: Fill of a tree node by its status in the round.
STATUS_COLOURS: dict[str, str] = {
    "root": palette.TARGET_ONLY,
    "accepted": palette.ACCEPTED,
    "rejected": palette.REJECTED,
    "unexamined": palette.VOID,
    "corrected": palette.CORRECTED,
    "bonus": palette.BONUS,
}

#: The token state each node status draws as (its symbol: palette.STATE_SYMBOLS); the root,
#: the last committed token, is a hexagon.
STATUS_STATES: dict[str, str] = {"accepted": "accepted", "rejected": "rejected", "unexamined": "void",
                                 "corrected": "corrected", "bonus": "bonus"}  # fmt: skip

_STATUSES = ("root", "accepted", "rejected", "unexamined", "corrected", "bonus")

KEYS: dict[str, tuple[str, ...]] = {
    "draft_tree_figure": (*_STATUSES, "depth_axis", "tree_title"),
    "mask_figure": ("mask_title", "sees", "blocked", "query_axis", "key_axis", "hover_mask"),
    "cache_figure": ("cache_forward", "cache_compacted", "prefix", "kept", "dropped", "cache_title"),
    "acceptance_figure": ("with_replacement", "without_replacement", "k_axis", "accept_axis"),
    "shapes_figure": ("shape_axis", "tokens_axis", "chain", "tree", "shapes_title"),
    "candidate_tree_figure": ("node_start", "node_proposal", "node_accept", "node_reject", "node_resample",
                              "hover_mass"),
}  # fmt: skip


def _node_marker(status: str) -> dict[str, object]:
    """A tree node's marker: its status's colour and its state's symbol (colour is not its only cue)."""
    if status not in STATUS_STATES:
        return {
            "symbol": "hexagon",
            "size": 30,
            "color": STATUS_COLOURS[status],
            "line": {"color": palette.WHITE},
        }
    marker = palette.state_marker(STATUS_STATES[status], size=26)
    return {**marker, "line": {**marker["line"], "width": 3 if status == "unexamined" else 1.5}}


def _rows_by_leaves(parents: Sequence[int]) -> list[float]:
    """A vertical place per node: leaves one row apart, each parent centred over its children."""
    kids: dict[int, list[int]] = {}
    for i, par in enumerate(parents):
        if par >= 0:
            kids.setdefault(par, []).append(i)
    ys = [0.0] * len(parents)
    row = [0.0]

    def place(node: int) -> float:
        if node not in kids:
            ys[node] = row[0]
            row[0] += 1.0
            return ys[node]
        ys[node] = float(np.mean([place(c) for c in kids[node]]))
        return ys[node]

    place(0)
    return [-y for y in ys]


@figure_cache
def draft_tree_figure(
    labels: Sequence[str],
    parents: Sequence[int],
    status: Sequence[str],
    text: Mapping[str, str],
    final: tuple[str, str] | None = None,
    hover: Sequence[str] | None = None,
    last_path_node: int | None = None,
) -> go.Figure:
    """The round's tree: node i shows ``labels[i]`` (node 0, the root, the last committed token).

    ``status[i]`` is one of root / accepted / rejected / unexamined; `final` = (label, kind)
    is the round's corrected or bonus token, drawn after `last_path_node` (default: the
    deepest accepted node, else the root). `hover` adds a line per node (e.g. its p and q).
    """
    t = pick(text, KEYS, "draft_tree_figure")
    n = len(labels)
    if len(parents) != n or len(status) != n:
        raise ValueError("labels, parents and status need one entry per node.")
    depths = [0] * n
    for i in range(1, n):
        depths[i] = depths[parents[i]] + 1
    ys = _rows_by_leaves(parents)
    data: list[dict] = []
    on_path = {i for i, s in enumerate(status) if s in ("root", "accepted")}
    for i in range(1, n):
        par = parents[i]
        strong = i in on_path
        data.append(
            scatter(
                x=[depths[par], depths[i]],
                y=[ys[par], ys[i]],
                mode="lines",
                line={"color": palette.ACCEPTED if strong else FADED, "width": 4 if strong else 1.5},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    xs, yv, names, kinds, tips = list(depths), list(ys), [display_label(s) for s in labels], list(status), []
    for i in range(n):
        extra = f"<br>{hover[i]}" if hover is not None else ""
        tips.append(f"{names[i]} · {t[status[i]]}{extra}")
    if final is not None:
        if last_path_node is None:
            last_path_node = max(on_path, key=lambda i: depths[i])
        xs.append(depths[last_path_node] + 1)
        yv.append(ys[last_path_node])
        names.append(display_label(final[0]))
        kinds.append(final[1])
        tips.append(f"{names[-1]} · {t[final[1]]}")
        data.append(
            scatter(
                x=[depths[last_path_node], xs[-1]],
                y=[ys[last_path_node], yv[-1]],
                mode="lines",
                line={"color": STATUS_COLOURS[final[1]], "width": 3, "dash": "dot"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    for kind in _STATUSES:
        idx = [i for i, k in enumerate(kinds) if k == kind]
        if not idx:
            continue
        data.append(
            scatter(
                x=[xs[i] for i in idx],
                y=[yv[i] for i in idx],
                mode="markers+text",
                marker=_node_marker(kind),
                text=[names[i] for i in idx],
                textposition="middle right",
                hovertext=[tips[i] for i in idx],
                hoverinfo="text",
                name=t[kind],
                customdata=idx,
            )
        )
    height = max(260, 46 * (1 + len({round(y, 3) for y in yv})))
    layout = palette.base_layout(title=t["tree_title"], height=height)
    layout["xaxis"] = {"title": t["depth_axis"], "dtick": 1, "range": [-0.4, max(xs) + 0.9]}
    layout["yaxis"] = {"visible": False}
    return figure(data, layout)


@figure_cache
def mask_figure(
    mask: np.ndarray, labels: Sequence[str], position_ids: Sequence[int], text: Mapping[str, str]
) -> go.Figure:
    """allowed[i, j] as a grid: row = the node whose next-token row is computed, column = what it reads."""
    t = pick(text, KEYS, "mask_figure")
    m = np.asarray(mask, dtype=bool)
    names = [
        f"{i}: {display_label(s)} @{int(pos)}"
        for i, (s, pos) in enumerate(zip(labels, position_ids, strict=True))
    ]
    verdict = [[t["sees"] if m[i, j] else t["blocked"] for j in range(m.shape[1])] for i in range(m.shape[0])]
    hover = [
        [
            t["hover_mask"].format(query=names[i], key=names[j], verdict=verdict[i][j])
            for j in range(m.shape[1])
        ]
        for i in range(m.shape[0])
    ]
    heatmap = {
        "type": "heatmap",
        "z": m.astype(float),
        "x": names,
        "y": names,
        "colorscale": [[0, palette.PALE], [1, palette.TARGET]],
        "showscale": False,
        "hovertext": hover,
        "hoverinfo": "text",
        "xgap": 2,
        "ygap": 2,
    }
    side = max(300, 34 * m.shape[0] + 160)
    layout = palette.base_layout(title=t["mask_title"], height=side)
    layout["xaxis"] = {"title": t["key_axis"], "side": "bottom", "tickangle": -45}
    layout["yaxis"] = {"title": t["query_axis"], "autorange": "reversed"}
    return figure([heatmap], layout)


@figure_cache
def cache_figure(
    prefix_length: int, labels: Sequence[str], kept_slots: Sequence[int], text: Mapping[str, str]
) -> go.Figure:
    """Two rows of cells: prefix + every tree node after the forward; prefix + kept path after."""
    t = pick(text, KEYS, "cache_figure")
    kept = list(kept_slots)
    data: list[dict] = []
    rows = [
        (1.0, t["cache_forward"], list(range(len(labels))), [i in kept for i in range(len(labels))]),
        (0.0, t["cache_compacted"], kept, [True] * len(kept)),
    ]
    for y, _, slots, keep in rows:
        xs = [prefix_length + j for j in range(len(slots))]
        colours = [palette.ACCEPTED if k else FADED for k in keep]
        data.append(
            scatter(
                x=[0, prefix_length - 0.5] if prefix_length else [],
                y=[y, y],
                mode="lines",
                line={"color": palette.TARGET_ONLY, "width": 18},
                name=t["prefix"],
                showlegend=y == 1.0 and prefix_length > 0,
                hoverinfo="skip",
            )
        )
        data.append(
            scatter(
                x=xs,
                y=[y] * len(xs),
                mode="markers+text",
                marker={"symbol": "square", "size": 26, "color": colours},
                text=[display_label(labels[s]) for s in slots],
                textposition="top center",
                hovertext=[
                    f"{display_label(labels[s])} · {t['kept'] if k else t['dropped']}"
                    for s, k in zip(slots, keep, strict=True)
                ],
                hoverinfo="text",
                showlegend=False,
            )
        )  # fmt: skip
    layout = palette.base_layout(title=t["cache_title"], height=260)
    layout["yaxis"] = {"tickvals": [1.0, 0.0], "ticktext": [rows[0][1], rows[1][1]], "range": [-0.6, 1.7]}
    layout["xaxis"] = {"dtick": 1, "range": [-0.6, prefix_length + len(labels) + 0.5]}
    return figure(data, layout)


@figure_cache
def acceptance_figure(curves: Mapping[str, np.ndarray], text: Mapping[str, str]) -> go.Figure:
    """Exact P(accept) for k = 0 … K; `curves` maps "with" / "without" to its values."""
    t = pick(text, KEYS, "acceptance_figure")
    names = {
        "with": (t["with_replacement"], palette.DRAFT),
        "without": (t["without_replacement"], palette.ACCEPTED),
    }
    data: list[dict] = []
    for key, values in curves.items():
        name, colour = names[key]
        data.append(
            scatter(
                x=list(range(len(values))),
                y=list(values),
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 3},
                hovertemplate="k = %{x}: %{y:.3f}<extra></extra>",
            )
        )
    layout = palette.base_layout(height=320)
    layout["xaxis"] = {"title": t["k_axis"], "dtick": 1}
    layout["yaxis"] = {"title": t["accept_axis"], "range": [0, 1.05]}
    return figure(data, layout)


@figure_cache
def shapes_figure(
    names: Sequence[str], expected: Sequence[float], chain_index: int, text: Mapping[str, str]
) -> go.Figure:
    """Exact expected tokens per round for each shape; the chain in the draft colour."""
    t = pick(text, KEYS, "shapes_figure")
    colours = [palette.DRAFT if i == chain_index else palette.ACCEPTED for i in range(len(names))]
    bars = bar(x=[display_label(n, 24) for n in names], y=list(expected), marker={"color": colours},
               text=[f"{v:.2f}" for v in expected], textposition="outside",
               hovertemplate="%{x}: %{y:.3f}<extra></extra>")  # fmt: skip
    layout = palette.base_layout(title=t["shapes_title"], height=360)
    layout["xaxis"] = {"title": t["shape_axis"]}
    layout["yaxis"] = {"title": t["tokens_axis"], "rangemode": "tozero"}
    return figure([bars], layout)


_NODE_COLOURS = {"root": palette.WHITE, "proposal": palette.DRAFT, "accept": palette.ACCEPTED,
                 "reject": palette.REJECTED, "resample": palette.DEFICIT}  # fmt: skip


@figure_cache
def candidate_tree_figure(view: CandidateTree, text: Mapping[str, str]) -> go.Figure:
    """The k-candidate probability tree of one position: a sunburst, each wedge its path mass."""
    t = pick(text, KEYS, "candidate_tree_figure")
    depth = {0: 0}
    names, tips = [], []
    for node in view.nodes:
        if node.parent is not None:
            depth[node.id] = depth[node.parent] + (1 if node.kind == "proposal" else 0)
        token = display_label(node.label)
        label = {
            "root": t["node_start"],
            "proposal": t["node_proposal"].format(i=depth[node.id], token=token),
            "accept": t["node_accept"].format(token=token),
            "reject": t["node_reject"],
            "resample": t["node_resample"].format(token=token),
        }[node.kind]
        names.append(label)
        tips.append(t["hover_mass"].format(mass=f"{node.mass:.4f}", edge=f"{node.edge_prob:.4f}"))
    sunburst = {
        "type": "sunburst",
        "ids": [str(n.id) for n in view.nodes],
        "parents": ["" if n.parent is None else str(n.parent) for n in view.nodes],
        "labels": names,
        "values": [n.mass if n.is_leaf else 0.0 for n in view.nodes],  # parents: sum of leaves
        "branchvalues": "remainder",
        "marker": {"colors": [_NODE_COLOURS[n.kind] for n in view.nodes]},
        "hovertext": tips,
        "hoverinfo": "label+text",
        "sort": False,
    }
    layout = palette.base_layout(height=520, margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return figure([sunburst], layout)
