"""The live page's position inspector: one round, one committed token, the lessons' own figures.

For a drafted position: the decision line, then the overlap bars and the probability tree
of that position's p and q (tokens outside the rows' top-N pooled); for a bonus or a plain
target step: the target's row alone.
"""

from __future__ import annotations

import streamlit as st

from pages.common import form
from pages.common.figure import show_figure
from pages.common.i18n import strings
from pages.common.lesson import lesson
from pages.common.page import scroll_to
from pages.common.urlstate import Param
from pages.live_parts.draft_tree import draft_tree_view
from pages.live_parts.tokens import fig_text
from specdec_core.course.probability_tree import path_nodes, tree_view
from specdec_core.live.inspector import position_view, short_chain, slot_kind
from specdec_core.live.trace import LiveTrace
from specdec_core.verify import StepResult, decompose
from specdec_core.viz import live as viz
from specdec_core.viz import overlap as overlap_viz
from specdec_core.viz import probability_tree as tree_viz
from specdec_core.viz.escape import md

SCROLL_KEY = "live_scroll_inspector"  # set by a token's click or a page that opens a position


def inspector(trace: LiveTrace, shown: Param) -> None:
    """Pick a round and one of its tokens; show what p and q said there and what was decided."""
    s = strings("live")
    events = trace.speculative.events
    # a clicked token and the round page's row links land here, with the keyboard's focus
    st.container(key="live_inspector").subheader(s["inspect_title"])
    if st.session_state.pop(SCROLL_KEY, False):
        scroll_to("live_inspector", focus=True)
    lesson("live").show("inspect")
    last = len(events) - 1
    st.session_state["live_round"] = min(max(int(st.session_state.get("live_round", 0)), 0), last)
    c1, c2 = st.columns([3, 1])
    if last > 0:
        c1.slider(s["round"], 0, last, key="live_round")
    form.slider(c2, shown, s["shown"], help=s["shown_help"])
    event = events[st.session_state["live_round"]]
    if not event.p_rows:
        st.info(s["no_rows"])
        return
    n = len(event.committed)
    st.session_state["live_slot"] = min(max(int(st.session_state.get("live_slot", 0)), 0), n - 1)
    st.radio(
        s["slot"],
        range(n),
        key="live_slot",
        horizontal=True,
        format_func=lambda i: (
            f"{i + 1} · {s[f'kinds.{slot_kind(event, i)}']} “{md(viz.label(trace.text(event.committed[i])))}”"
        ),
    )
    drafts = ", ".join(f"“{md(viz.label(trace.text(t)))}”" for t in event.draft_tokens) or s["no_drafts"]
    st.markdown(
        s(
            "round_line",
            n=event.index,
            gamma=event.gamma,
            drafts=drafts,
            a=event.accepted_count,
            k=len(event.draft_tokens),
            c=n,
        )
    )
    short = short_chain(event)
    if short is not None:
        st.caption(s(f"short_{short}", k=len(event.draft_tokens), gamma=event.gamma))
    if event.tree is not None:
        draft_tree_view(trace, event)
    view = position_view(event, st.session_state["live_slot"], trace.vocab_size, int(form.value(shown)))
    pool_names = {
        t: s[f"pool.{t}"] if view.q is not None else s["other"] for t in view.ids if isinstance(t, str)
    }
    labels = [pool_names[t] if isinstance(t, str) else viz.label(trace.text(t)) for t in view.ids]

    def tok(token: int) -> str:
        """A token as literal Markdown (model output is untrusted text)."""
        return md(viz.label(trace.text(token)))

    if view.draft_token is not None:
        verdict = s["verdict_accepted"] if view.accepted else s("verdict_rejected", y=tok(view.emitted))
        st.markdown(
            s(
                "decision",
                x=tok(view.draft_token),
                q=viz.number(view.q_x),
                p=viz.number(view.p_x),
                a=viz.number(view.accept_prob),
                verdict=verdict,
            )
        )
    elif view.kind == "bonus":
        st.markdown(
            s("decision_bonus", y=tok(view.emitted), p=viz.number(view.p_x), k=len(event.draft_tokens))
        )
    else:
        st.markdown(s("decision_target", y=tok(view.emitted), p=viz.number(view.p_x)))
    if view.one_hot:
        st.caption(s["one_hot_note"])
    if view.q is not None:
        overlap_text = strings("overlap")["chart.overlap"]  # the lessons' own figures, in their own words
        tree_text = strings("tree")["chart"]
        d = decompose(view.p, view.q)
        show_figure(
            overlap_viz.overlap_bars(labels, d.overlap, d.deficit, d.surplus, text=overlap_text),
            theme=None,
            key="live_overlap",
        )
        tv = tree_view(view.p, view.q, labels)
        path = path_nodes(tv, StepResult(view.bar(view.draft_token), bool(view.accepted), view.emitted_bar))
        show_figure(tree_viz.tree_figure(tv, highlight=path, text=tree_text), theme=None, key="live_tree")
        lo, hi = view.alpha
        if not view.exact:
            st.caption(s("pool_note", n=view.pool_size, lo=lo, hi=hi))
        elif view.has_pool:
            st.caption(s("pool_exact", n=view.pool_size, alpha=lo))
        else:
            st.caption(s("exact_note", alpha=lo))
    else:
        show_figure(viz.row_bars(labels, view.p, view.bar(view.emitted), text=fig_text()), theme=None,
                        key="live_row")  # fmt: skip
        if view.has_pool:
            st.caption(s("pool_p_note", n=view.pool_size))
