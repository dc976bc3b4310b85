"""Lesson 3 — Probability tree: every path of one speculative step, its leaves summed per token,
sampled paths animated through the tree, and the rejected mass as a Sankey flow."""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import streamlit as st

from pages.common import form, urlstate
from pages.common.figure import show_figure
from pages.common.page import lesson_body, start
from pages.common.quiz import quiz
from pages.tree_parts.form import FORM, PAIR
from specdec_core.course.probability_tree import (
    TreeView,
    draw,
    leaf_split,
    path_nodes,
    start_run,
    tally,
    tree_view,
)
from specdec_core.verify import decompose
from specdec_core.viz import probability_tree as viz
from specdec_core.viz.escape import md_strong
from specdec_core.viz.probability_tree_sankey import sankey_figure

f = FORM
s, text = start("tree", params=f.params())
RUN_KEY = "tree_run"
ANIMATE_KEY = "tree_animate"
RUN_SIG_KEY = "tree_run_sig"
STEP_SECONDS = 0.35
MANY = 100
FOUR_DECIMALS = ("direct", "via_reject", "total", "p")


def _sample(p: np.ndarray, q: np.ndarray, n: int) -> None:
    """Button callback: n more speculative steps; a single one is animated on the next run."""
    st.session_state[RUN_KEY] = draw(st.session_state[RUN_KEY], p, q, n)
    st.session_state[ANIMATE_KEY] = n == 1


def _reset_tally(size: int) -> None:
    st.session_state[RUN_KEY] = start_run(size, form.value(f.seed))


def _names(view: TreeView) -> list[str]:
    return [s["chart.other"] if g == view.other else lab for g, lab in enumerate(view.labels)]


def _chart(fig, key: str) -> None:
    show_figure(fig, key, theme=None, config={"displaylogo": False})


text.show("intro")


def _lesson() -> None:
    """The pair and how many tokens to show, and the tree, its sampled paths and tally they drive."""
    st.header(s["pair_header"])
    c1, c2, c3 = st.columns([3, 1.3, 3], gap="medium")
    PAIR.pickers(c1, c2)
    form.slider(c3, f.top_n, s["top_n"], help=s["top_n_help"])
    PAIR.note()
    with st.expander(s["editor"], expanded=PAIR.edited):
        rows = PAIR.editor()
    urlstate.mirror(f.params())
    PAIR.edited_note()
    pair = PAIR.valid_pair(rows)
    if pair is None:
        st.stop()
    p, q = pair.p, pair.q
    view = tree_view(p, q, pair.tokens, form.value(f.top_n))

    names = _names(view)
    chart_text = s["chart"]
    d = decompose(p, q)
    m = st.columns(4)
    m[0].metric(s["metric_r"], viz.num(d.rejection_mass), help=s["metric_r_help"], border=True)
    m[1].metric(s["metric_accept"], viz.num(d.acceptance_rate), help=s["metric_accept_help"], border=True)
    m[2].metric(s["metric_d"], len(d.deficit_set), help=s["metric_d_help"], border=True)
    m[3].metric(s["metric_s"], len(d.surplus_set), help=s["metric_s_help"], border=True)
    st.markdown(
        s(
            "sets_line",
            d=", ".join(md_strong(names[g]) for g in view.tree.deficit_set) or s["none"],
            s=", ".join(md_strong(names[g]) for g in view.tree.surplus_set) or s["none"],
        )
    )

    # ---------------------------------------------------------------- the tree and sampled paths
    text.show("reading", heading=s["tree_header"])
    signature = (pair.tokens, tuple(p), tuple(q), form.value(f.seed))
    if st.session_state.get(RUN_SIG_KEY) != signature:
        st.session_state[RUN_KEY] = start_run(p.size, form.value(f.seed))
        st.session_state[RUN_SIG_KEY] = signature

    b1, b2, b3, b4 = st.columns([1.3, 1.3, 1.1, 1.3], vertical_alignment="bottom")
    b1.button(
        s["sample_one"],
        key="tree_sample_one",
        type="primary",
        help=s["sample_one_help"],
        on_click=_sample,
        args=(p, q, 1),
    )
    b2.button(
        s["sample_many"],
        key="tree_sample_many",
        help=s["sample_many_help"],
        on_click=_sample,
        args=(p, q, MANY),
    )
    b3.button(
        s["reset_tally"],
        key="tree_reset_tally",
        help=s["reset_tally_help"],
        on_click=_reset_tally,
        args=(p.size,),
    )
    form.number(b4, f.seed, s["seed"], step=1, help=s["seed_help"])
    run = st.session_state[RUN_KEY]
    counts = tally(view, run)
    path = path_nodes(view, run.last) if run.last is not None else ()

    story = st.empty()
    holder = st.empty()

    def _story(upto: int) -> str:
        """The sampled path in words, up to node `upto` of the path."""
        nodes = [view.tree.nodes[i] for i in path[1 : upto + 1]]
        group = [view.node_group[i] for i in path[1 : upto + 1]]
        lines = [s("step_propose", token=md_strong(names[group[0]]), q=viz.num(nodes[0].edge_prob))]
        if len(nodes) > 1:
            key = "step_accept" if nodes[1].kind == "accept" else "step_reject"
            lines.append(s(key, prob=viz.num(nodes[1].edge_prob)))
        if len(nodes) > 2:
            lines.append(s("step_redraw", token=md_strong(names[group[2]]), prob=viz.num(nodes[2].edge_prob)))
        if nodes[-1].is_leaf:
            lines.append(s("emitted", token=md_strong(names[group[-1]])))
        return "  \n".join(lines)

    if st.session_state.pop(ANIMATE_KEY, False):  # show the new path edge by edge, then the final picture
        for upto in range(1, len(path) - 1):
            story.info(_story(upto))
            with holder.container():  # the chart, its description and its data: one frame
                _chart(
                    viz.tree_figure(view, highlight=path[: upto + 1], tally=counts, text=chart_text),
                    f"fig_tree_{upto}",
                )
            time.sleep(STEP_SECONDS)
    if path:
        story.success(_story(len(path) - 1))
    else:
        story.caption(s["no_paths"])
    with holder.container():
        _chart(viz.tree_figure(view, highlight=path, tally=counts, text=chart_text), "fig_tree_path")
    st.caption(s["tree_caption"])

    st.subheader(s["tally_header"])
    text.show("sampling")
    t1, t2 = st.columns([1, 3], vertical_alignment="center")
    t1.metric(s["metric_paths"], counts.n, border=True)
    t1.metric(s["metric_tv"], viz.num(counts.tv), help=s["metric_tv_help"], border=True)
    with t2:
        _chart(viz.tally_figure(view, counts, text=chart_text), "fig_tree_tally")

    # ---------------------------------------------------------------- why the leaves add up to p
    text.show("sets")
    text.show("sums", heading=s["leaf_header"])
    split = leaf_split(view)
    _chart(viz.leaf_sum_figure(view, text=chart_text), "fig_tree_leaf_sum")
    st.dataframe(
        pa.table(  # an Arrow table goes to the page as it is, no pandas round trip
            {
                s["table.token"]: names,
                s["table.direct"]: split.direct,
                s["table.via_reject"]: split.via_reject,
                s["table.total"]: split.total,
                s["table.p"]: split.p,
                s["table.gap"]: split.gap,
            }
        ),
        hide_index=True,
        column_config={
            s["table.gap"]: st.column_config.NumberColumn(format="%.1e"),
            **{s[f"table.{k}"]: st.column_config.NumberColumn(format="%.4f") for k in FOUR_DECIMALS},
        },
    )
    st.caption(s["leaf_table_caption"])

    text.show("sankey", heading=s["sankey_header"])
    if d.rejection_mass == 0:
        st.info(s["no_rejection"])
    _chart(sankey_figure(view, text=chart_text), "fig_tree_sankey")
    st.caption(s["sankey_caption"])


lesson_body(_lesson)

text.show("other")
text.show("edges")
text.show("block")
quiz(s)
