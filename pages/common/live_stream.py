"""The live page's run: the speculative run, then its target-only baseline, streamed as they come.

:func:`run` loads the models, streams the coloured tokens into the page and hands the trace
(finished or stopped) to the next script run through the page's :class:`~pages.common.jobs.Job`;
:func:`keep` puts a trace where the page shows it; :func:`playback` streams a kept run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import WAIT_LIMIT, Job, stop_if_pressed
from pages.common.live_tokens import feed_html, prompt_html
from pages.common.models import classroom, get_draft, get_target, wait_notice
from specdec_core.engine import RoundEvent
from specdec_core.live.classroom import Cached, Ticket, request_key
from specdec_core.live.runs import Pacer, Stream, encode_prompt, starter
from specdec_core.live.settings import LiveSettings
from specdec_core.live.streaming import Chunks, TextFeed
from specdec_core.live.trace import LiveTrace, RunRecord, build

TOP_N = 20  # probabilities kept per row for the inspector
PAINT_EVERY = 0.5  # seconds between repaints while streaming (each one redraws the whole page)
CAPTION_EVERY = 2.0  # seconds between rewrites of the running caption
CHUNK_REPAINTS = 8  # repaints per element of the streaming text
PLAYBACK_MAX_PAUSE = 0.4
QUEUE_POLL = 0.5  # seconds between updates of a waiting request's place in the line
TRACE_KEY = "live_trace"
STREAM_KEY = "sd_stream"  # the streaming text's containers: _spec, _base, _play (named in assets/style.css)


def keep(trace: LiveTrace) -> None:
    """Show `trace` from now on, its inspector on the first round."""
    st.session_state[TRACE_KEY] = trace
    st.session_state["live_round"] = 0
    st.session_state["live_slot"] = 0


class _Painter:
    """One run's view while it streams: the prompt, then each repaint adds the new tokens.

    Streamlit's page redraws every element on the page for each batch of messages it receives,
    on the cores the model runs on, so a run sends as few as it can: one message a repaint (the
    new tokens), repaints at most every ``PAINT_EVERY`` seconds. The tokens go into the last of
    a few elements (:class:`~specdec_core.live.streaming.Chunks`: a new one every
    ``CHUNK_REPAINTS`` repaints, never the whole text again). The one-line caption, from running
    totals, is a message of its own: :meth:`start` puts a "running" line there, and the totals
    follow every ``CAPTION_EVERY`` seconds and at the end, not with the first tokens.
    """

    def __init__(
        self, area: Any, status: Any, prompt: str, text_of: Callable[[int], str], label: str, key: str
    ) -> None:
        self.feed = TextFeed(text_of)
        self._status = status
        self._label = label
        self._text = area.container(key=key)  # its elements flow as one text (style.css)
        self._text.html(prompt_html(prompt))
        self._chunks = Chunks(CHUNK_REPAINTS)
        self._tail: Any = None  # the element the current chunk is written into
        self._caption = Pacer(CAPTION_EVERY)

    def start(self) -> None:
        """The run begins now: a "running" status line, the running totals from
        ``CAPTION_EVERY`` seconds on."""
        self._status.caption(strings("live")("starting", label=self._label))
        self._caption = Pacer(CAPTION_EVERY, first_due=False)

    def add(self, event: RoundEvent) -> None:
        self.feed.add(event)

    def paint(self, last: bool = False) -> None:
        """Show the tokens added since the last repaint (`last`: the run's final repaint)."""
        new = self.feed.take()
        if new:
            fresh, chunk = self._chunks.add(new)
            # a new chunk is a new element, written at once (no placeholder first: a message less)
            self._tail = (self._text if fresh else self._tail).html(feed_html(chunk))
        if not self._caption.due(last):
            return
        f = self.feed
        self._status.caption(
            strings("live")(
                "streaming", label=self._label, rounds=f.rounds, tokens=f.tokens, rate=f.tokens_per_second
            )
        )


def _stream(run: Stream, painter: _Painter, events: list[RoundEvent]) -> None:
    pacer = Pacer(PAINT_EVERY)
    painter.start()
    for event in run:
        stop_if_pressed()  # Stop, pressed in the same fragment as this run (see stop_if_pressed)
        if not events and run.waited_s > 0:  # a "models busy" notice took the status line
            painter.start()
        events.append(event)
        painter.add(event)
        if pacer.due(event.finished):
            painter.paint(event.finished)


def from_cache(hit: Cached) -> LiveTrace:
    """A stored run, marked in its ``meta`` as replayed from the cache (the view says so)."""
    return replace(hit.trace, meta={**hit.trace.meta, "cached": True})


def run(job: Job, settings: LiveSettings, prompt: str) -> NoReturn:
    """Answer from the cache, or wait for the models' turn, stream both runs, hand the trace over."""
    s = strings("live")
    room, key = classroom(), request_key(settings, prompt)
    hit = room.lookup(key)
    if hit is not None:  # an identical request already ran: replay it, no model needed
        keep(from_cache(hit))
        st.rerun()
    with job.preparing():
        target = get_target(settings.target)
        draft = get_draft(settings.target, target, settings.draft)
        ids = encode_prompt(target, prompt, settings.chat, settings.max_new_tokens)
    if TRACE_KEY in st.session_state:  # kept until this run has a trace of its own to replace it
        st.caption(s["previous_below"])  # this run streams in its fragment; the rest stays as it was
    cols = st.columns(2) if settings.compare else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}**")
    spec_status = cols[0].empty()
    if settings.compare:
        cols[1].markdown(f"**{s['base_title']}**")
        base_status = cols[1].empty()
        base_status.caption(s["base_waiting"])
    # both texts start now, with the rest of the run's frame: fewer batches for the browser to
    # draw while the model runs
    spec_painter = _Painter(
        cols[0], spec_status, prompt, target.token_text, s["spec_short"], f"{STREAM_KEY}_spec"
    )
    base_painter = (
        _Painter(cols[1], base_status, prompt, target.token_text, s["base_short"], f"{STREAM_KEY}_base")
        if settings.compare
        else None
    )
    spec_events: list[RoundEvent] = []
    base_events: list[RoundEvent] = []
    spec_run = Stream(starter(target, draft, ids, settings, TOP_N), wait_notice(spec_status), WAIT_LIMIT)
    base_run = Stream(
        starter(target, None, ids, settings, TOP_N),
        wait_notice(base_status) if settings.compare else None,
        WAIT_LIMIT,
    )
    spec_done = False
    ticket: Ticket | None = None
    cached: Cached | None = None

    def stream() -> None:
        nonlocal spec_done, ticket, cached
        ticket = room.enqueue(settings.max_new_tokens * (2 if settings.compare else 1), key)
        shown = ""
        while not ticket.wait_turn(QUEUE_POLL):
            stop_if_pressed()
            cached = room.lookup(key)  # the same request, ahead in the line, has just finished
            if cached is not None:
                return
            notice = s("queue", position=ticket.position, seconds=ticket.wait_estimate_s)
            if notice != shown:  # a message only when the line moved or the estimate changed
                spec_status.info(notice, icon=":material/hourglass_top:")
                shown = notice
        cached = room.lookup(key)  # the same request may have run while this one waited
        if cached is not None:
            return
        _stream(spec_run, spec_painter, spec_events)
        spec_done = True
        if base_painter is not None:
            _stream(base_run, base_painter, base_events)

    def result(finished: bool) -> LiveTrace | None:  # no Streamlit call in here (see Job.run)
        spec_run.close()
        base_run.close()
        if cached is not None:
            ticket.release()  # type: ignore[union-attr]
            return from_cache(cached)
        trace = None
        if spec_events:
            spec = RunRecord(spec_events, spec_run.wall_s, stopped=not spec_done)
            base = RunRecord(base_events, base_run.wall_s, stopped=not finished) if base_events else None
            trace = build(settings, prompt, ids, target, draft, spec, base)
        if ticket is not None:
            room.finish(ticket, key, trace if finished else None)
        return trace

    job.run(stream, result)


def playback(trace: LiveTrace) -> NoReturn:
    """Stream a kept run again at its recorded pace (each round's pause capped)."""
    status = st.empty()
    painter = _Painter(
        st.container(), status, trace.prompt, trace.text, strings("live")["spec_short"], f"{STREAM_KEY}_play"
    )
    for event in trace.speculative.events:
        stop_if_pressed()  # Generate or Stop (in their fragment) would otherwise wait for the end
        painter.add(event)
        painter.paint(event.finished)
        time.sleep(min(event.total_s, PLAYBACK_MAX_PAUSE))
    st.rerun()
