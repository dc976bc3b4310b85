"""The live page's run: Generate hands a :class:`~specdec_core.live.live_job.LiveJob` to the run
service, :func:`show_progress` draws its snapshot while it goes (the speculative run and its
baseline side by side), :func:`keep` puts a trace where the page shows it, and
:func:`playback_panel` streams a kept run again at its recorded pace.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from pages.common import form
from pages.common.class_answers import shared_classroom
from pages.common.i18n import strings
from pages.common.live_form import LiveForm, settings
from pages.common.models import access, shelf
from pages.common.service_run import show_status
from pages.live_parts.tokens import feed_html, prompt_html
from specdec_core.engine import RoundEvent
from specdec_core.live.live_job import BASE, SPEC, LiveJob, LiveProgress
from specdec_core.live.run_service import WAITING, Snapshot
from specdec_core.live.streaming import TextFeed, played
from specdec_core.live.trace import LiveTrace

PLAYBACK_MAX_PAUSE = 0.4
PLAY_POLL_S = 0.25
TRACE_KEY = "live_trace"
PLAY_KEY = "_live_play"  # when the playback under way began (time.monotonic)
STREAM_KEY = "sd_stream"  # the streaming text's containers: _spec, _base, _play (named in assets/style.css)


def keep(trace: LiveTrace) -> None:
    """Show `trace` from now on, its inspector on the first round."""
    st.session_state[TRACE_KEY] = trace
    st.session_state["live_round"] = 0
    st.session_state["live_slot"] = 0


def live_job(f: LiveForm) -> LiveJob:
    """The job Generate hands to the run service: the settings of `f` and the prompt (an empty
    or over-long prompt is refused here, before it waits in line)."""
    prompt: str = form.value(f.prompt)
    return LiveJob(settings(f), prompt, shelf(), access(), shared_classroom())


def _stream_view(
    area: Any,
    part: str,
    prompt: str,
    events: Sequence[RoundEvent],
    text_of: Callable[[int], str],
    status: str,
) -> None:
    """One run's text so far under its status line (`status`: a caption's text, or "" to
    give the running totals)."""
    s = strings("live")
    feed = TextFeed(text_of)
    for event in events:
        feed.add(event)
    label = s["spec_short" if part != BASE else "base_short"]
    if not status:
        status = (
            s("streaming", label=label, rounds=feed.rounds, tokens=feed.tokens, rate=feed.tokens_per_second)
            if events
            else s("starting", label=label)
        )
    area.caption(status)
    text = area.container(key=f"{STREAM_KEY}_{part}")  # its elements flow as one text (style.css)
    text.html(prompt_html(prompt))
    shown = feed.take()
    if shown:
        text.html(feed_html(shown))


def show_progress(snap: Snapshot) -> None:
    """A running generation: its place in the line (with the wait expected), a model loading,
    or both runs' text so far."""
    s, p = strings("live"), snap.progress
    if TRACE_KEY in st.session_state:  # kept until this run has a trace of its own to replace it
        st.caption(s["previous_below"])
    if snap.state == WAITING and snap.wait_s is not None:
        st.info(s("queue", position=snap.ahead, seconds=snap.wait_s), icon=":material/hourglass_top:")
        return
    show_status(snap)
    if not isinstance(p, LiveProgress) or p.part is None:
        return
    cols = st.columns(2) if p.compare else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}**")
    texts = p.texts or {}
    text_of = lambda t: texts.get(t, "")  # noqa: E731
    _stream_view(cols[0], SPEC, p.prompt, p.spec, text_of, "")
    if p.compare:
        cols[1].markdown(f"**{s['base_title']}**")
        waiting = s["base_waiting"] if p.part == SPEC else ""
        _stream_view(cols[1], BASE, p.prompt, p.base, text_of, waiting)


def _start_playback() -> None:
    st.session_state[PLAY_KEY] = time.monotonic()


def _play() -> None:
    """The kept run's speculative rounds so far; at the end, the whole page again."""
    ss = st.session_state
    trace, began = ss.get(TRACE_KEY), ss.get(PLAY_KEY)
    if trace is None or began is None:
        return
    events = trace.speculative.events
    n = played([e.total_s for e in events], time.monotonic() - began, PLAYBACK_MAX_PAUSE)
    _stream_view(st.container(), "play", trace.prompt, events[:n], trace.text, "")
    if n >= len(events):
        ss.pop(PLAY_KEY, None)
        st.rerun()  # the whole page: the finished view, without the playback


def playback_panel() -> None:
    """Play back (the kept run again, round by round, each round's pause capped): the page stays
    usable meanwhile, since a fragment on a timer draws it."""
    s = strings("live")
    st.button(s["playback"], key="live_playback", icon=":material/replay:", help=s["playback_help"],
              on_click=_start_playback)  # fmt: skip
    if PLAY_KEY in st.session_state:
        st.fragment(_play, run_every=PLAY_POLL_S)()
