"""The live page's run: the speculative run, then its target-only baseline, streamed as they come.

:func:`run` loads the models, streams the coloured tokens into the page and hands the trace
(finished or stopped) to the next script run through the page's :class:`~pages.common.jobs.Job`;
:func:`keep` puts a trace where the page shows it; :func:`playback` streams a kept run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NoReturn

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import WAIT_LIMIT, Job
from pages.common.live_tokens import tokens_html
from pages.common.models import get_draft, get_target, wait_notice
from specdec_core.engine import RoundEvent, summarize
from specdec_core.live import text as live_text
from specdec_core.live.runs import Pacer, Stream, encode_prompt, starter
from specdec_core.live.settings import LiveSettings
from specdec_core.live.trace import LiveTrace, RunRecord, build

TOP_N = 20  # probabilities kept per row for the inspector
PAINT_EVERY = 0.12  # seconds between repaints while streaming
PLAYBACK_MAX_PAUSE = 0.4
TRACE_KEY = "live_trace"


def keep(trace: LiveTrace) -> None:
    """Show `trace` from now on, its inspector on the first round."""
    st.session_state[TRACE_KEY] = trace
    st.session_state["live_round"] = 0
    st.session_state["live_slot"] = 0


def _paint(
    area: Any, status: Any, prompt: str, events: list[RoundEvent], text_of: Callable[[int], str], label: str
) -> None:
    area.html(tokens_html(prompt, live_text.spans(events), text_of))
    sm = summarize(events)
    status.caption(
        strings("live")(
            "streaming", label=label, rounds=sm.rounds, tokens=sm.tokens, rate=sm.tokens_per_second
        )
    )


def _stream(
    run: Stream,
    area: Any,
    status: Any,
    prompt: str,
    text_of: Callable[[int], str],
    label: str,
    events: list[RoundEvent],
) -> None:
    pacer = Pacer(PAINT_EVERY)
    for event in run:
        events.append(event)
        if pacer.due(event.finished):
            _paint(area, status, prompt, events, text_of, label)


def run(job: Job, settings: LiveSettings, prompt: str) -> NoReturn:
    """Load the models, stream the speculative run (and the baseline), hand the trace over."""
    s = strings("live")
    with job.preparing():
        target = get_target(settings.target)
        draft = get_draft(settings.target, target, settings.draft)
        ids = encode_prompt(target, prompt, settings.chat, settings.max_new_tokens)
    st.session_state.pop(TRACE_KEY, None)
    cols = st.columns(2) if settings.compare else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}**")
    spec_status, spec_area = cols[0].empty(), cols[0].empty()
    if settings.compare:
        cols[1].markdown(f"**{s['base_title']}**")
        base_status, base_area = cols[1].empty(), cols[1].empty()
        base_status.caption(s["base_waiting"])
    spec_events: list[RoundEvent] = []
    base_events: list[RoundEvent] = []
    spec_run = Stream(starter(target, draft, ids, settings, TOP_N), wait_notice(spec_status), WAIT_LIMIT)
    base_run = Stream(
        starter(target, None, ids, settings, TOP_N),
        wait_notice(base_status) if settings.compare else None,
        WAIT_LIMIT,
    )
    spec_done = False

    def stream() -> None:
        nonlocal spec_done
        _stream(spec_run, spec_area, spec_status, prompt, target.token_text, s["spec_short"], spec_events)
        spec_done = True
        if settings.compare:
            _stream(base_run, base_area, base_status, prompt, target.token_text, s["base_short"], base_events)

    def result(finished: bool) -> LiveTrace | None:  # no Streamlit call in here (see Job.run)
        spec_run.close()
        base_run.close()
        if not spec_events:
            return None
        spec = RunRecord(spec_events, spec_run.wall_s, stopped=not spec_done)
        base = RunRecord(base_events, base_run.wall_s, stopped=not finished) if base_events else None
        return build(settings, prompt, ids, target, draft, spec, base)

    job.run(stream, result)


def playback(trace: LiveTrace) -> NoReturn:
    """Stream a kept run again at its recorded pace (each round's pause capped)."""
    area, status = st.empty(), st.empty()
    shown: list[RoundEvent] = []
    for event in trace.speculative.events:
        shown.append(event)
        _paint(area, status, trace.prompt, shown, trace.text, strings("live")["spec_short"])
        time.sleep(min(event.total_s, PLAYBACK_MAX_PAUSE))
    st.rerun()
