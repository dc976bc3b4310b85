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

from pages.common.model_form import decoding_params
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.service_run import ServiceRun
from pages.common.urlstate import (
    bool_param,
    choice_param,
    float_param,
    int_param,
    mirror,
    restore,
    text_param,
)
from pages.live_parts.controls import controls
from pages.live_parts.run import TRACE_KEY, keep, live_job, playback_panel, show_progress
from pages.live_parts.view import show
from specdec_core.live.limits import MAX_NEW_TOKENS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import DRAFTS, MAX_VOCAB, targets
from specdec_core.live.presets import PRESETS
from specdec_core.live.trace import TraceError, from_json
from specdec_core.viz.escape import md

PARAMS = [
    choice_param("live_target", "bundled", targets()),
    text_param("live_target_src", "", MAX_SOURCE_CHARS),
    choice_param("live_draft", "ngram", DRAFTS),
    int_param("live_k", 20, 1, 256),
    int_param("live_vocab", 0, 0, MAX_VOCAB),
    text_param("live_draft_src", "", MAX_SOURCE_CHARS),
    choice_param("live_preset", "copy", PRESETS),
    bool_param("live_chat", True),
    *decoding_params("live"),
    int_param("live_topk", 0, 0, 1000),
    float_param("live_topp", 1.0, 0.05, 1.0),
    int_param("live_seed", 0, 0, 2**31 - 1),
    int_param("live_max", 64, 4, MAX_NEW_TOKENS),
    bool_param("live_compare", True),
    bool_param("live_void", False),
    int_param("live_shown", 8, 3, 20),
]

s, text = start("live")
rejected_keys = restore(PARAMS)
if rejected_keys:
    st.warning(s("url_rejected", keys=", ".join(rejected_keys)))
job = ServiceRun("live", live_job, show_progress, keep, PARAMS)

text.show("intro")
controls()
mirror(PARAMS)

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
    show(trace)
else:
    st.info(s["press_generate"])
    text.show("colours")

quiz(s)
