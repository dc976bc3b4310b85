"""Lesson "Tree drafts": step a tree round on the Markov pair, compare shapes, one position's tree."""

from html import escape

import streamlit as st

from pages.common import form
from pages.common.figure import show_figure
from pages.common.page import lesson_body, start
from pages.common.quiz import quiz
from pages.common.stepper import pair_stepper
from pages.common.urlstate import mirror
from pages.tree_drafts_parts.form import FORM
from specdec_core.course import tree_drafts as demo_data
from specdec_core.sampling import SamplingConfig
from specdec_core.viz import tree_drafts as viz
from specdec_core.viz.escape import md

TEXT_TAIL = 60
f = FORM

s, text = start("tree_drafts", params=f.params())
fig_text = s["fig"]

text.show("intro")


def _lesson() -> None:
    """The chain, draft, tree shape, seed and temperature, and the tree rounds they drive."""
    pair_stepper(s, f, "trd", lambda col: form.select(col, f.shape, s["shape"], help=s["shape_help"]))

    chain, draft, shape_name, seed, temperature = (
        form.value(p) for p in (f.chain, f.draft, f.shape, f.seed, f.t)
    )
    branching = tuple(int(b) for b in shape_name.split("-"))
    sampling = SamplingConfig(temperature=temperature)
    settings = (chain, draft, branching, seed, temperature)
    cached = st.session_state.get("_trd_demo")
    try:
        target, draft_lm = demo_data.lesson_pair(chain, draft)
        if cached is None or cached[0] != settings or len(cached[1].rounds) > form.value(f.round):
            demo = demo_data.TreeDemo(target, draft_lm, [0], branching, seed, sampling)
            st.session_state["_trd_demo"] = (settings, demo)
        else:
            demo = cached[1]
        while len(demo.rounds) < form.value(f.round):
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
            f'<span class="sd-tok {k} now">{escape(labels[t])}</span>'
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
        show_figure(
            viz.draft_tree_figure(node_labels, rnd.layout.parents, rnd.status, fig_text, final, hover),
            "fig_drafts_round_tree",
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
        show_figure(
            viz.mask_figure(rnd.layout.attention_mask(), node_labels, rnd.position_ids, fig_text),
            "fig_drafts_mask",
            theme=None,
        )
        st.caption(s("forward_caption", n=rnd.nodes, n1=rnd.nodes + 1, prefix=rnd.prefix_length))
        show_figure(
            viz.cache_figure(rnd.prefix_length, node_labels, rnd.kept_slots, fig_text),
            "fig_drafts_cache",
            theme=None,
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
    form.slider(st, f.budget, s["budget"], help=s["budget_help"])
    mirror(f.params())
    comparison = demo_data.lesson_shapes(chain, draft, form.value(f.budget), temperature)
    names = [demo_data.shape_label(sh) for sh in comparison.shapes]
    chain_index = comparison.shapes.index((1,) * comparison.budget)
    show_figure(
        viz.shapes_figure(names, comparison.expected, chain_index, fig_text), "fig_drafts_shapes", theme=None
    )
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
    form.slider(k1, f.k, s["k"], help=s["k_help"])
    form.toggle(k2, f.repl, s["replacement"], help=s["replacement_help"])
    mirror(f.params())
    one = demo_data.one_position(form.value(f.k), form.value(f.repl))
    show_figure(viz.candidate_tree_figure(one.tree, fig_text), "fig_drafts_candidates", theme=None)
    totals = ", ".join(
        f"{md(lab)} = {v:.3f}" for lab, v in zip(one.tree.labels, one.tree.leaf_totals, strict=True)
    )
    st.caption(s("multi_caption", totals=totals))
    show_figure(viz.acceptance_figure(one.curves, fig_text), "fig_drafts_acceptance", theme=None)
    st.caption(
        s("acceptance_caption", kmax=one.k_max, one=one.curves["without"][1], three=one.curves["without"][3])
    )


lesson_body(_lesson)

text.show("cost")
text.show("sources")
quiz(s)
