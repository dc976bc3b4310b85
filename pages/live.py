"""Live generation: a real model pair decoding, every token coloured by what happened to it.

Controls (live_parts/controls.py) → Generate hands a ``LiveJob`` (live_parts/run.py) to the
process's run service, which loads the models once per process and runs the engine; a fragment
draws the job's snapshot while it goes, and its ``LiveTrace`` is kept in session state. The
page stays usable meanwhile. The finished view (live_parts/view.py: text,
stats, timeline, inspector) is drawn from the trace alone, so a run loaded from a JSON file
looks exactly the same.
"""

from __future__ import annotations

import streamlit as st

from pages.common.live_form import LiveForm
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.service_run import ServiceRun
from pages.common.urlstate import mirror
from pages.live_parts.controls import controls
from pages.live_parts.run import TRACE_KEY, keep, live_job, playback_panel, show_progress
from pages.live_parts.view import show
from specdec_core.live.trace import TraceError, from_json
from specdec_core.viz.escape import md

f = LiveForm()
s, text = start("live", params=f.params())
job = ServiceRun("live", lambda: live_job(f), show_progress, keep)

text.show("intro")
controls(f)
mirror(f.params())

raw = st.session_state.pop("_live_import", None)
if raw is not None:
    try:
        keep(from_json(raw).replayed())
        job.set_error(None)
    except TraceError as exc:
        job.set_error(s("import_error", message=md(exc)))
job.panel(s["generate"], "live_generate", ":material/play_arrow:")

trace = st.session_state.get(TRACE_KEY)
if trace is not None:
    playback_panel()
    show(trace, f)
else:
    st.info(s["press_generate"])
    text.show("colours")

quiz(s)
