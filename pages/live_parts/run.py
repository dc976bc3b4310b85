"""The live page's run: the speculative run, then its target-only baseline, streamed as they come.

:class:`LiveRun` is the page's :class:`~pages.common.jobs.Run` (prepare, stream, result, keep);
:func:`keep` puts a trace where the page shows it; :func:`playback` streams a kept run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import WAIT_LIMIT
from pages.common.models import classroom, get_draft, get_target, wait_notice
from pages.common.stop import stop_if_pressed
from pages.live_parts.controls import settings
from pages.live_parts.tokens import feed_html, prompt_html
from specdec_core.engine import RoundEvent
from specdec_core.live.classroom import Cached, Ticket, request_key
from specdec_core.live.runs import Pacer, Stream, encode_prompt, starter
from specdec_core.live.streaming import Chunks, TextFeed
from specdec_core.live.trace import LiveTrace, RunRecord, build

TOP_N = 20  # probabilities kept per row for the inspector
# Paint at most this often, so the wall-clock speedup measures the models and not the page
# (the baseline has one event per token, the speculative run one per round).
PAINT_EVERY = 0.5
CHUNK_REPAINTS = 8  # repaints per element of the streaming text (a repaint rewrites one element)
PLAYBACK_MAX_PAUSE = 0.4
QUEUE_POLL = 0.5  # seconds between updates of a waiting request's place in the line
TRACE_KEY = "live_trace"
STREAM_KEY = "sd_stream"  # the streaming text's containers: _spec, _base, _play (named in assets/style.css)


def keep(trace: LiveTrace) -> None:
    """Show `trace` from now on, its inspector on the first round."""
    st.session_state[TRACE_KEY] = trace
    st.session_state["live_round"] = 0
    st.session_state["live_slot"] = 0


class Painter:
    """One run's view while it streams: the prompt, then each repaint adds the new tokens and
    rewrites the one-line caption of running totals.

    The tokens go into the last of a few elements (:class:`~specdec_core.live.streaming.Chunks`:
    a new one every ``CHUNK_REPAINTS`` repaints), so a repaint never sends the whole text again.
    """

    def __init__(
        self, area: Any, status: Any, prompt: str, text_of: Callable[[int], str], label: str, key: str
    ) -> None:
        self.feed = TextFeed(text_of)
        self.status = status
        self._label = label
        self._text = area.container(key=key)  # its elements flow as one text (style.css)
        self._text.html(prompt_html(prompt))
        self._chunks = Chunks(CHUNK_REPAINTS)
        self._tail: Any = None  # the element the current chunk is written into

    def start(self) -> None:
        """The run begins now: a "running" status line until the first repaint."""
        self.status.caption(strings("live")("starting", label=self._label))

    def add(self, event: RoundEvent) -> None:
        self.feed.add(event)

    def paint(self) -> None:
        """Show the tokens added since the last repaint, and the running totals."""
        new = self.feed.take()
        if new:
            fresh, chunk = self._chunks.add(new)
            self._tail = (self._text if fresh else self._tail).html(feed_html(chunk))
        f = self.feed
        self.status.caption(
            strings("live")(
                "streaming", label=self._label, rounds=f.rounds, tokens=f.tokens, rate=f.tokens_per_second
            )
        )


def from_cache(hit: Cached) -> LiveTrace:
    """A stored run, marked in its ``meta`` as replayed from the cache (the view says so)."""
    return replace(hit.trace, meta={**hit.trace.meta, "cached": True})


class LiveRun:
    """Generate's run (a :class:`~pages.common.jobs.Run`): the controls' settings and prompt,
    answered from the classroom's cache, or run once the models are this session's turn."""

    def __init__(self) -> None:
        self.settings = settings()
        self.prompt: str = st.session_state["live_prompt"]
        self.key = request_key(self.settings, self.prompt)
        self.room = classroom()
        self.cached: Cached | None = None  # an identical request's trace, when one has run
        self.ticket: Ticket | None = None  # this request's place in the line for the models
        self.target: Any = None
        self.draft: Any = None
        self.ids: list[int] = []
        self.runs: list[tuple[Stream, list[RoundEvent]]] = []  # speculative, then the baseline
        self.spec_done = False

    def prepare(self) -> None:
        """Find the request in the cache, or load the models and encode the prompt."""
        self.cached = self.room.lookup(self.key)
        if self.cached is not None:  # an identical request already ran: replay it, no model needed
            return
        s = self.settings
        self.target = get_target(s.target)
        self.draft = get_draft(s.target, self.target, s.draft)
        self.ids = encode_prompt(self.target, self.prompt, s.chat, s.max_new_tokens)

    def stream(self) -> None:
        """Wait for the models' turn, then stream the speculative run and its baseline side by side."""
        if self.cached is not None:
            return
        s, compare = strings("live"), self.settings.compare
        if TRACE_KEY in st.session_state:  # kept until this run has a trace of its own to replace it
            st.caption(s["previous_below"])
        cols = st.columns(2) if compare else [st.container()]
        painters = []
        for col, title, short, part, draft in (
            (cols[0], "spec_title", "spec_short", "spec", self.draft),
            *([(cols[1], "base_title", "base_short", "base", None)] if compare else []),
        ):
            col.markdown(f"**{s[title]}**")
            status = col.empty()
            painters.append(
                Painter(col, status, self.prompt, self.target.token_text, s[short], f"{STREAM_KEY}_{part}")
            )
            start = starter(self.target, draft, self.ids, self.settings, TOP_N)
            self.runs.append((Stream(start, wait_notice(status), WAIT_LIMIT), []))
        if compare:
            painters[1].status.caption(s["base_waiting"])
        if not self._wait_turn(painters[0]):
            return
        for i, ((run, events), painter) in enumerate(zip(self.runs, painters, strict=True)):
            _stream(run, painter, events)
            self.spec_done = self.spec_done or i == 0

    def _wait_turn(self, first: Painter) -> bool:
        """Wait in the line for the models (False: the same request, ahead in it, has finished)."""
        s, room = strings("live"), self.room
        self.ticket = room.enqueue(
            self.settings.max_new_tokens * (2 if self.settings.compare else 1), self.key
        )
        shown = ""
        while not self.ticket.wait_turn(QUEUE_POLL):
            stop_if_pressed()
            self.cached = room.lookup(self.key)
            if self.cached is not None:
                return False
            notice = s("queue", position=self.ticket.position, seconds=self.ticket.wait_estimate_s)
            if notice != shown:  # a message only when the line moved or the estimate changed
                first.status.info(notice, icon=":material/hourglass_top:")
                shown = notice
        self.cached = room.lookup(self.key)  # the same request may have run while this one waited
        return self.cached is None

    def result(self, finished: bool) -> LiveTrace | None:
        """Close both runs; the trace of what ran (or the cached one), stored for identical requests."""
        for run, _ in self.runs:
            run.close()
        if self.cached is not None:
            if self.ticket is not None:
                self.ticket.release()
            return from_cache(self.cached)
        trace = None
        if self.runs and self.runs[0][1]:  # the speculative run (the first) has events
            (spec_run, spec_events), *rest = self.runs
            spec = RunRecord(spec_events, spec_run.wall_s, stopped=not self.spec_done)
            base = next((RunRecord(e, r.wall_s, stopped=not finished) for r, e in rest if e), None)
            trace = build(self.settings, self.prompt, self.ids, self.target, self.draft, spec, base)
        if self.ticket is not None:
            self.room.finish(self.ticket, self.key, trace if finished else None)
        return trace

    def keep(self, value: LiveTrace) -> None:
        keep(value)


def _stream(run: Stream, painter: Painter, events: list[RoundEvent]) -> None:
    pacer = Pacer(PAINT_EVERY)
    painter.start()
    for event in run:
        stop_if_pressed()
        if not events and run.waited_s > 0:  # a "models busy" notice took the status line
            painter.start()
        events.append(event)
        painter.add(event)
        if pacer.due(event.finished):
            painter.paint()


def playback(trace: LiveTrace) -> NoReturn:
    """Stream a kept run again at its recorded pace (each round's pause capped)."""
    status = st.empty()
    painter = Painter(
        st.container(), status, trace.prompt, trace.text, strings("live")["spec_short"], f"{STREAM_KEY}_play"
    )
    for event in trace.speculative.events:
        stop_if_pressed()  # Generate or Stop (in their fragment) would otherwise wait for the end
        painter.add(event)
        painter.paint()
        time.sleep(min(event.total_s, PLAYBACK_MAX_PAUSE))
    st.rerun()
