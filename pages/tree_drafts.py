"""Lesson "Tree drafts": step a tree round on the Markov pair, compare shapes, one position's tree."""

from html import escape

import streamlit as st

from pages.common.page import controls_box, lesson_body, start
from pages.common.quiz import quiz
from pages.common.urlstate import bool_param, choice_param, float_param, int_param, mirror
from specdec_core.course import tree_drafts as demo_data
from specdec_core.course.block import CHAINS, DRAFTS
from specdec_core.sampling import SamplingConfig
from specdec_core.viz import tree_drafts as viz
from specdec_core.viz.escape import md

MAX_ROUNDS = 200
TEXT_TAIL = 60
SHAPES = ("2-2", "3-1", "2-1-1", "2-2-1", "3-2", "1-1-1-1")
PARAMS = [
    choice_param("trd_chain", "story", CHAINS),
    choice_param("trd_draft", "poor", DRAFTS),
    choice_param("trd_shape", "2-2", SHAPES),
    int_param("trd_seed", 7, 0, 2**32 - 1),
    float_param("trd_t", 1.0, 0.0, 2.0),
    int_param("trd_round", 0, 0, MAX_ROUNDS),
    int_param("trd_budget", 6, 2, 10),
    int_param("trd_k", 2, 1, 3),
    bool_param("trd_repl", False),
]

s, text = start("tree_drafts", params=PARAMS)
fig_text = s["fig"]

text.show("intro")


def _advance() -> None:
    st.session_state["trd_round"] = min(MAX_ROUNDS, st.session_state["trd_round"] + 1)


def _reset() -> None:
    st.session_state["trd_round"] = 0


def _lesson() -> None:
    """The chain, draft, tree shape, seed and temperature, and the tree rounds they drive."""
    with controls_box(s):
        c1, c2, c3 = st.columns([1.3, 1.6, 1.1])
        c1.selectbox(
            s["chain"], CHAINS, format_func=lambda c: s[f"chains.{c}"], key="trd_chain", help=s["chain_help"]
        )
        c2.radio(
            s["draft"], DRAFTS, format_func=lambda d: s[f"drafts.{d}"], key="trd_draft", horizontal=True,
            help=s["draft_help"],
        )  # fmt: skip
        c3.number_input(
            s["seed"], min_value=0, max_value=2**32 - 1, step=1, key="trd_seed", help=s["seed_help"]
        )
        c4, c5, c6 = st.columns([1.3, 1.6, 1.1])
        c4.selectbox(s["shape"], SHAPES, key="trd_shape", help=s["shape_help"])
        c5.slider(s["T"], 0.0, 2.0, step=0.05, key="trd_t", help=s["T_help"])
        with c6:
            st.button(s["next"], key="trd_next", type="primary", on_click=_advance, width="stretch")
            st.button(s["reset"], key="trd_reset", on_click=_reset, width="stretch")
    mirror(PARAMS)

    chain, draft, shape_name, seed, temperature = (st.session_state[p.key] for p in PARAMS[:5])
    branching = tuple(int(b) for b in shape_name.split("-"))
    sampling = SamplingConfig(temperature=temperature)
    settings = (chain, draft, branching, seed, temperature)
    cached = st.session_state.get("_trd_demo")
    try:
        target, draft_lm = demo_data.lesson_pair(chain, draft)
        if cached is None or cached[0] != settings or len(cached[1].rounds) > st.session_state["trd_round"]:
            demo = demo_data.TreeDemo(target, draft_lm, [0], branching, seed, sampling)
            st.session_state["_trd_demo"] = (settings, demo)
        else:
            demo = cached[1]
        while len(demo.rounds) < st.session_state["trd_round"]:
            demo.step()
    except ValueError as exc:
        st.error(s("error", message=md(exc)))
        st.stop()

    labels = target.labels
    shown = [md(w) for w in labels]

    if not demo.rounds:
        st.info(s("press_next", prompt=shown[demo.prompt[0]]))
    else:
        rnd = demo.rounds[-1]
        m = st.columns(5)
        m[0].metric(s["now_round"], rnd.index)
        m[1].metric(s["now_nodes"], rnd.nodes)
        m[2].metric(s["now_depth"], len(rnd.path) - 1)
        m[3].metric(s["now_committed"], len(rnd.committed))
        m[4].metric(s["now_length"], rnd.length_after)
        before = demo.committed[: rnd.length_after - len(rnd.committed)]
        kinds = ["prompt"] * len(demo.prompt) + [k for r in demo.rounds[:-1] for k in r.kinds]
        parts = [
            f'<span class="sd-tok {k}">{escape(labels[t])}</span>' for t, k in zip(before, kinds, strict=True)
        ]
        parts = parts[-TEXT_TAIL:]
        parts += [
            f'<span class="sd-tok {k}" style="text-decoration: underline">{escape(labels[t])}</span>'
            for t, k in zip(rnd.committed, rnd.kinds, strict=True)
        ]
        st.html(f'<div class="sd-tokens">{" ".join(parts)}</div>')
        st.caption(s("text_caption", n=TEXT_TAIL))

        node_labels = [labels[t] for t in rnd.tokens]
        parents = rnd.layout.parents
        hover = [
            f"p = {rnd.p_rows[parents[i]][t]:.3f} · q = {rnd.q_rows[parents[i]][t]:.3f}" if i else ""
            for i, t in enumerate(rnd.tokens)
        ]
        final = (labels[rnd.committed[-1]], rnd.kinds[-1])
        st.plotly_chart(
            viz.draft_tree_figure(node_labels, rnd.layout.parents, rnd.status, fig_text, final, hover),
            theme=None,
        )
        for step in rnd.steps:
            kids = ", ".join(f"“{shown[rnd.tokens[c]]}”" for c in step.children[: len(step.acceptance_probs)])
            if step.accepted is None:
                verdict = s("step_none", token=shown[step.emitted])
            else:
                verdict = s("step_accepted", token=shown[step.emitted], i=step.accepted + 1)
            st.markdown(
                "- " + s("step_line", node=shown[rnd.tokens[step.node]], children=kids, verdict=verdict)
            )
        if rnd.kinds[-1] == "bonus":
            st.markdown(
                "- " + s("step_bonus", node=shown[rnd.tokens[rnd.path[-1]]], token=shown[rnd.committed[-1]])
            )

    text.show("forward")
    if demo.rounds:
        st.plotly_chart(
            viz.mask_figure(rnd.layout.attention_mask(), node_labels, rnd.position_ids, fig_text),
            theme=None,
        )
        st.caption(s("forward_caption", n=rnd.nodes, n1=rnd.nodes + 1, prefix=rnd.prefix_length))
        st.plotly_chart(
            viz.cache_figure(rnd.prefix_length, node_labels, rnd.kept_slots, fig_text), theme=None
        )
        st.caption(
            s(
                "cache_caption",
                start=rnd.prefix_length,
                peak=rnd.cache_peak,
                after=rnd.cache_after,
                kept=len(rnd.kept_slots),
                dropped=rnd.cache_peak - rnd.prefix_length - len(rnd.kept_slots),
            )
        )

    text.show("why")
    st.subheader(s["shapes_header"])
    st.slider(s["budget"], 2, 10, key="trd_budget", help=s["budget_help"])
    mirror(PARAMS)
    comparison = demo_data.lesson_shapes(chain, draft, st.session_state["trd_budget"], temperature)
    names = [demo_data.shape_label(sh) for sh in comparison.shapes]
    chain_index = comparison.shapes.index((1,) * comparison.budget)
    st.plotly_chart(viz.shapes_figure(names, comparison.expected, chain_index, fig_text), theme=None)
    best_shape, best_value = comparison.best
    st.caption(
        s(
            "shapes_caption",
            budget=comparison.budget,
            chain=comparison.chain,
            best=demo_data.shape_label(best_shape),
            best_value=best_value,
        )
    )

    text.show("multi")
    st.subheader(s["multi_header"])
    k1, k2 = st.columns(2)
    k1.slider(s["k"], 1, 3, key="trd_k", help=s["k_help"])
    k2.toggle(s["replacement"], key="trd_repl", help=s["replacement_help"])
    mirror(PARAMS)
    one = demo_data.one_position(st.session_state["trd_k"], st.session_state["trd_repl"])
    st.plotly_chart(viz.candidate_tree_figure(one.tree, fig_text), theme=None)
    totals = ", ".join(
        f"{md(lab)} = {v:.3f}" for lab, v in zip(one.tree.labels, one.tree.leaf_totals, strict=True)
    )
    st.caption(s("multi_caption", totals=totals))
    st.plotly_chart(viz.acceptance_figure(one.curves, fig_text), theme=None)
    st.caption(
        s("acceptance_caption", kmax=one.k_max, one=one.curves["without"][1], three=one.curves["without"][3])
    )


lesson_body(_lesson)

text.show("cost")
text.show("sources")
quiz(s)
