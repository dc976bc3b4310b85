"""The probability-tree lesson's Sankey: all probability from the proposals (sizes q) to the
emitted tokens (sizes p), kept where proposed or moved by a rejection.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from specdec_core.course.probability_tree import MassFlows, TreeView, mass_flows
from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.probability_tree import KEYS as TREE_KEYS
from specdec_core.viz.probability_tree import group_names, num, set_colours
from specdec_core.viz.spec import figure
from specdec_core.viz.strings import pick

#: Figure strings the Sankey reads (``[chart]`` of lessons/<lang>/tree.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "sankey_figure": (
        *TREE_KEYS["set_colours"],
        "other",
        "sankey_left",
        "sankey_right",
        "sankey_kept",
        "sankey_moved",
    ),
}


@figure_cache
def sankey_figure(view: TreeView, text: Mapping[str, str]) -> go.Figure:
    """All probability from proposals (left, sizes q) to emitted tokens (right, sizes p).

    Green bands are kept proposals, min(p, q); red bands are mass rejected at a surplus token
    and redrawn as a deficit token, surplus(x) · r(y). Both columns add up to 1.
    """
    t = pick(text, KEYS, "sankey_figure")
    flows: MassFlows = mass_flows(view)
    names = group_names(view, t)
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
            link_colour.append(palette.rgba(palette.ACCEPTED, 0.45))
            hover.append(t["sankey_kept"].format(token=names[g], mass=num(flows.accepted[g])))
    for x in range(count):
        for y in range(count):
            mass = flows.rejected[x, y]
            if mass > 0:
                source.append(index["L", x])
                target.append(index["R", y])
                value.append(float(mass))
                link_colour.append(palette.rgba(palette.REJECTED, 0.45))
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
    sankey = dict(
        type="sankey",
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
    notes = [
        {"x": 0, "y": 1.08, "xref": "paper", "yref": "paper", "text": f"<b>{t['sankey_left']}</b>",
         "showarrow": False, "xanchor": "left"},
        {"x": 1, "y": 1.08, "xref": "paper", "yref": "paper", "text": f"<b>{t['sankey_right']}</b>",
         "showarrow": False, "xanchor": "right"},
    ]  # fmt: skip
    layout = palette.base_layout(height=int(220 + 34 * max(len(left), len(right))), annotations=notes)
    return figure([sankey], layout)


def _spread(sizes: np.ndarray) -> list[float]:
    """Sankey node centres (0 = top) stacked in order, each as tall as its share."""
    pad = 0.02
    total = float(sizes.sum()) + pad * (len(sizes) - 1)
    tops = np.concatenate([[0.0], np.cumsum(sizes + pad)[:-1]])
    return [float(v) for v in np.clip((tops + sizes / 2) / total, 0.001, 0.999)]
