"""The live inspector's tree view: a tree round's draft tree; clicking a node picks its slot."""

from __future__ import annotations

import streamlit as st

from pages.common.figure import show_figure
from pages.common.i18n import strings
from specdec_core.engine.events import RoundEvent
from specdec_core.live.token_tree_round import node_lines, slot_of_node
from specdec_core.live.trace import LiveTrace
from specdec_core.viz import live as viz
from specdec_core.viz.tree_drafts import draft_tree_figure

KEY = "live_tree_pick"


def _pick(event: RoundEvent) -> None:
    points = st.session_state[KEY].selection.points if KEY in st.session_state else []
    for point in points:
        slot = slot_of_node(event, int(point.get("customdata", -1)))
        if slot is not None:
            st.session_state["live_slot"] = slot
            return


def draft_tree_view(trace: LiveTrace, event: RoundEvent) -> None:
    """Draw `event`'s tree (a tree round) with the accepted path highlighted."""
    s = strings("live")
    tree = event.tree
    if tree is None:
        return
    labels = [trace.text(t) for t in tree["tokens"]]
    kind = event.kinds[-1]
    final = (trace.text(event.committed[-1]), kind) if kind in ("corrected", "bonus") else None
    fig = draft_tree_figure(
        labels, tree["parents"], tree["status"], s["fig_tree"], final, hover=node_lines(event, viz.number)
    )
    show_figure(fig, theme=None, key=KEY, on_select=lambda: _pick(event), selection_mode="points")
    st.caption(s["tree_caption"])
