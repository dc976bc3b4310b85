"""The live page's finished view, drawn from a ``LiveTrace`` alone (a replayed file looks the same).

The coloured texts with their legend, the comparison with the target-only run, the round
statistics and figures, the position inspector and the download of the trace.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from pages.common import form
from pages.common.figure import show_figure
from pages.common.i18n import strings
from pages.common.lesson import lesson
from pages.common.live_form import LiveForm
from pages.live_parts.inspector import SCROLL_KEY, inspector
from pages.live_parts.tokens import fig_text, pickable_tokens, tokens_html
from specdec_core.live import stats as live_stats
from specdec_core.live import text as live_text
from specdec_core.live.draft_pieces import META_KEY as PIECES_KEY
from specdec_core.live.trace import LiveTrace, to_json
from specdec_core.models import catalog
from specdec_core.viz import live as viz
from specdec_core.viz import palette
from specdec_core.viz.draft_pieces import pieces_html
from specdec_core.viz.escape import md
from specdec_core.viz.rounds import tokens_histogram

MAX_PIECES = 400  # target tokens shown with their draft pieces (a run is at most a few hundred)


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _pick_token() -> None:
    """A click on a coloured token: open its round and position in the inspector."""
    picked = st.session_state["live_tokens"].pick
    if isinstance(picked, dict) and all(isinstance(picked.get(k), int) for k in ("round", "slot")):
        st.session_state["live_round"] = picked["round"]  # the inspector clamps both to the run
        st.session_state["live_slot"] = picked["slot"]
        st.session_state[SCROLL_KEY] = True  # on a projector the click must show where it went


def _select_round() -> None:
    points = st.session_state["live_timeline"].selection.points
    if points:
        st.session_state["live_round"] = int(points[0]["x"])


def _comparison(trace: LiveTrace) -> None:
    base = trace.baseline
    if base is None:
        return
    s = strings("live")
    cmp = live_stats.compare(trace.speculative, base)
    m = st.columns(4)
    m[0].metric(s["speedup"], f"{cmp.wall_speedup:.2f}×" if cmp.wall_speedup else "—", help=s["speedup_help"])
    m[1].metric(s["wall_spec"], f"{cmp.spec_wall:.2f} s")
    m[2].metric(s["wall_base"], f"{cmp.base_wall:.2f} s")
    m[3].metric(
        s["decode_speedup"],
        f"{cmp.decode_speedup:.2f}×" if cmp.decode_speedup else "—",
        help=s["decode_speedup_help"],
    )
    note = catalog.about(trace.settings.target.kind).timing_note
    if note:
        st.caption(s[note])
    if cmp.identical is None:
        st.info(s["compare_incomplete"])
    elif trace.settings.greedy and cmp.identical:
        st.success(s("identical", n=cmp.spec_tokens), icon=":material/check_circle:")
    elif trace.settings.greedy:
        st.warning(s("not_identical", pos=(cmp.first_difference or 0) + 1))
    else:
        st.info(s("sampled_differ", same=s["same_yes"] if cmp.identical else s["same_no"]))


def _stats(trace: LiveTrace) -> live_stats.LiveStats:
    s = strings("live")
    stats = live_stats.live_stats(trace.speculative.events)
    sm = stats.summary
    m = st.columns(5)
    m[0].metric(s["alpha"], _f(stats.alpha), help=s["alpha_help"])
    m[1].metric(
        s["per_round"],
        f"{stats.mean_measured:.2f}",
        help=s["per_round_help"],
        delta=None if stats.mean_theory is None else s("theory_delta", value=stats.mean_theory),
        delta_color="off",
    )
    m[2].metric(s["tokens_per_s"], f"{sm.tokens_per_second:.1f}", help=s["tokens_per_s_help"])
    m[3].metric(
        s["saved"],
        f"{stats.forwards_saved}",
        help=s["saved_help"],
        delta=s("saved_delta", rounds=sm.target_forwards, tokens=sm.tokens),
        delta_color="off",
    )
    m[4].metric(s["rejections"], f"{sm.rejections} / {sm.rounds}", help=s["rejections_help"])
    return stats


def show(trace: LiveTrace, f: LiveForm) -> None:
    """The whole finished view of `trace` (`f`: the page's settings, two of which it draws)."""
    s, text, fig = strings("live"), lesson("live"), fig_text()
    events = trace.speculative.events
    selected = int(st.session_state.get("live_round", 0))
    st.subheader(s["output_title"])
    if trace.meta.get("replayed"):
        st.info(s("replayed", created=md(trace.meta.get("created", "?"))), icon=":material/replay:")
    elif trace.meta.get("cached"):
        st.info(s("cached", created=md(trace.meta.get("created", "?"))), icon=":material/history:")
    if trace.speculative.stopped or (trace.baseline and trace.baseline.stopped):
        st.warning(s["stopped"])
    # The legend: the speculative kinds, then "void" when shown, then "target" (below) when present.
    kinds = [k for k in live_text.SPAN_KINDS if k not in ("target", "void")] + (
        ["void"] if form.value(f.void) else []
    )
    items = live_text.spans(events, show_void=bool(form.value(f.void)))
    counts = live_text.counts(items)
    plain = trace.baseline is not None or counts["target"] > 0
    numbered = {k: n for k, n in counts.items() if k != "target"}  # "target" also names the other column
    st.html(viz.legend_html(kinds + (["target"] if plain else []), fig, numbered))
    cols = st.columns(2) if trace.baseline else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}** · {md(trace.target_name)} + {md(trace.draft_name)}")
    with cols[0]:
        pickable_tokens(
            tokens_html(trace.prompt, items, trace.text, selected_round=selected), "live_tokens", _pick_token
        )
        st.caption(s["tokens_caption"])
    pieces = trace.meta.get(PIECES_KEY)
    if pieces:
        with st.expander(s("pieces_title", draft=md(trace.draft_name))):
            shown = [(trace.text(t), pieces.get(str(t), [])) for t in trace.speculative.tokens[:MAX_PIECES]]
            st.html(pieces_html(shown, s["pieces"]))
            st.caption(s["pieces_caption"])
    if trace.baseline:
        cols[1].markdown(f"**{s['base_title']}** · {md(trace.target_name)}")
        cols[1].html(tokens_html(trace.prompt, live_text.spans(trace.baseline.events), trace.text))
    form.toggle(st, f.void, s["show_void"], help=s["show_void_help"])
    _comparison(trace)
    text.show("colours")

    st.subheader(s["stats_title"])
    stats = _stats(trace)
    show_figure(
        viz.timeline_figure(live_stats.timeline(events), selected, fig),
        theme=None,
        key="live_timeline",
        on_select=_select_round,
        selection_mode="points",
    )
    st.caption(s["timeline_caption"])
    h1, h2 = st.columns(2)
    with h1:
        if stats.law is not None:
            show_figure(
                tokens_histogram(stats.counts, stats.law, stats.alpha, s["fig_hist"]),
                theme=None,
                key="live_hist",
            )
            st.caption(s("hist_caption", measured=stats.mean_measured, theory=stats.mean_theory))
        else:
            st.info(s["hist_none"])
    with h2:
        curves = [(s["spec_short"], *live_stats.progress_curve(events), palette.ACCEPTED)]
        if trace.baseline:
            curves.append(
                (s["base_short"], *live_stats.progress_curve(trace.baseline.events), palette.TARGET_ONLY)
            )
        show_figure(viz.speed_figure(curves, fig), theme=None, key="live_speed")
        st.caption(s["speed_caption"])
    text.show("stats")
    inspector(trace, f.shown)
    st.download_button(
        s["download"],
        data=partial(to_json, trace),  # built when downloaded, not on every rerun
        file_name="specdec-live-trace.json",
        mime="application/json",
        icon=":material/download:",
        key="live_download",
        on_click="ignore",  # no rerun: it could drop the file being built for this click
    )
