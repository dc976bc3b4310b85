"""One round of a kept live run, drawn stage by stage from its events (``live.round_view``)."""

from __future__ import annotations

import streamlit as st

from pages.common.figure import show_figure
from pages.common.i18n import strings
from pages.common.lesson import lesson
from pages.live_parts.inspector import SCROLL_KEY
from specdec_core.live.round_view import STAGES, RoundView, chain_rounds, plain_step_s, round_view
from specdec_core.live.trace import LiveTrace
from specdec_core.models import catalog
from specdec_core.viz import live as live_viz
from specdec_core.viz import round as viz
from specdec_core.viz.escape import md

ROUND_KEY = "round_pick"
STAGE_KEY = "round_stage"
ROW_KEY = "round_row"


def _step(delta: int) -> None:
    st.session_state[STAGE_KEY] = min(
        max(int(st.session_state.get(STAGE_KEY, 0)) + delta, 0), len(STAGES) - 1
    )


def _tok(trace: LiveTrace, token: int | None) -> str:
    """A token as literal Markdown in quotes (model output is untrusted text)."""
    return "—" if token is None else f"“{md(live_viz.label(trace.text(token)))}”"


def _num(x: float | None) -> str:
    return "—" if x is None else live_viz.number(x)


def _rows_table(trace: LiveTrace, view: RoundView) -> None:
    s = strings("round")
    c = s["table"]
    rows = [
        {
            c["row"]: r.index,
            c["input"]: live_viz.label(trace.text(r.input)),
            c["checks"]: "—" if r.checks is None else live_viz.label(trace.text(r.checks)),
            c["q"]: _num(r.q),
            c["p"]: _num(r.p),
            c["threshold"]: _num(r.accept_prob),
            c["u"]: _num(r.u),
            c["status"]: s[f"fig.{r.status}"],
            c["emitted"]: "—" if r.emitted is None else live_viz.label(trace.text(r.emitted)),
        }
        for r in view.rows
    ]
    st.dataframe(rows, hide_index=True, key="round_table")


def _inspect_link(trace: LiveTrace, view: RoundView) -> None:
    """A read row opens the live page's inspector at that round and position."""
    s = strings("round")
    read = [r for r in view.rows if r.slot is not None]
    st.session_state[ROW_KEY] = min(max(int(st.session_state.get(ROW_KEY, 0)), 0), len(read) - 1)
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    c1.radio(
        s["inspect_row"],
        range(len(read)),
        key=ROW_KEY,
        horizontal=True,
        format_func=lambda i: s("inspect_option", i=read[i].index, token=_tok(trace, read[i].emitted)),
    )
    if c2.button(s["inspect"], key="round_inspect", icon=":material/search:"):
        st.session_state["live_round"] = view.index
        st.session_state["live_slot"] = read[st.session_state[ROW_KEY]].slot
        st.session_state[SCROLL_KEY] = True
        st.switch_page("pages/live.py")


def _stage(trace: LiveTrace, view: RoundView, stage: str) -> None:
    s, text = strings("round"), lesson("round")
    fig, kind = s["fig"], catalog.about(trace.settings.target.kind)
    if stage == "draft":
        text.show("draft")
        show_figure(viz.timeline_figure(view.steps, fig), theme=None, key="round_timeline")
        st.caption(
            s(
                "timeline_caption",
                k=len(view.drafts),
                draft_ms=view.drafting_s * 1000.0,
                verify_ms=view.verify_s * 1000.0,
                n=len(view.rows),
            )
        )
        if kind.timing_note:
            st.caption(s[kind.timing_note])
            return
        plain = plain_step_s(trace.baseline.events) if trace.baseline else None
        if plain:
            ratio = view.pass_in_steps(plain)
            st.caption(s("plain_step_caption", ms=plain * 1000.0, n=len(view.rows), ratio=ratio))
    elif stage == "verify":
        text.show("verify")
        show_figure(viz.mask_figure(view, trace.texts, fig), theme=None, key="round_mask")
        st.caption(s("mask_caption", n=len(view.rows), context=len(view.context)))
    elif stage == "test":
        text.show("test")
        show_figure(viz.accept_figure(view, trace.texts, fig), theme=None, key="round_test")
        if view.rejected_row is not None:
            st.caption(s("stop_caption", row=view.rejected_row, y=_tok(trace, view.appended)))
        else:
            st.caption(s("bonus_caption", row=len(view.rows) - 1, y=_tok(trace, view.appended)))
        _rows_table(trace, view)
        _inspect_link(trace, view)
    else:
        text.show("cache")
        if kind.cache_note:
            st.info(s[kind.cache_note])
            return
        show_figure(viz.cache_figure(view.caches, trace.texts, fig), theme=None, key="round_cache")
        for cache in view.caches:
            st.markdown(
                s(
                    f"cache_line_{cache.model}",
                    before=cache.before,
                    peak=cache.peak,
                    after=cache.after,
                    cut=cache.cut,
                    y=_tok(trace, view.appended),
                    kind=s[f"kinds.{view.appended_kind}"],
                )
            )


def show(trace: LiveTrace) -> None:
    """Pick a round of `trace`, then step through its stages."""
    s = strings("round")
    events = trace.speculative.events
    st.caption(s("run_line", target=md(trace.target_name), draft=md(trace.draft_name), rounds=len(events)))
    chains = chain_rounds(events)
    if not chains:
        st.info(s["tree_run"])
        st.page_link("pages/tree_drafts.py", label=s["go_tree"], icon=":material/schema:")
        return
    if st.session_state.get(ROUND_KEY) not in chains:
        st.session_state[ROUND_KEY] = next((i for i in chains if events[i].rejected), chains[0])
    st.selectbox(
        s["pick_round"],
        chains,
        key=ROUND_KEY,
        format_func=lambda i: s(
            "round_option", n=i, a=events[i].accepted_count, k=len(events[i].draft_tokens)
        ),
        help=s["pick_round_help"],
    )
    view = round_view(trace.prompt_ids, events, st.session_state[ROUND_KEY])
    drafts = ", ".join(_tok(trace, t) for t in view.drafts) or s["no_drafts"]
    st.markdown(
        s("summary", n=view.index, gamma=view.gamma, drafts=drafts, a=view.accepted, c=view.committed)
    )
    st.session_state.setdefault(STAGE_KEY, 0)
    b1, b2, b3 = st.columns([1, 4, 1], vertical_alignment="center")
    b1.button(s["previous"], key="round_prev", on_click=_step, args=(-1,), icon=":material/arrow_back:",
              disabled=st.session_state[STAGE_KEY] == 0)  # fmt: skip
    b2.radio(
        s["stage"],
        range(len(STAGES)),
        key=STAGE_KEY,
        horizontal=True,
        format_func=lambda i: f"{i + 1} · {s[f'stages.{STAGES[i]}']}",
        label_visibility="collapsed",
    )
    b3.button(s["next"], key="round_next", on_click=_step, args=(1,), icon=":material/arrow_forward:",
              disabled=st.session_state[STAGE_KEY] == len(STAGES) - 1)  # fmt: skip
    _stage(trace, view, STAGES[st.session_state[STAGE_KEY]])
