"""Stop, pressed while a run streams in the same fragment: the one read of Streamlit's private state.

A press inside a fragment asks for a rerun that waits for the fragment's script to end
(Streamlit lets a fragment's run finish), and no public call tells a running script that a
press is waiting. :func:`rerun_requested` reads it from Streamlit's request queue, with no
fallback: tests/test_stop.py fails when Streamlit renames what it reads.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx


def rerun_requested(requests: ScriptRequests) -> bool:
    """Whether the browser has asked for a rerun (a press) that the running script has not taken yet."""
    return requests._state == ScriptRequestType.RERUN


def stop_if_pressed() -> None:
    """End this script run as a press would end it (``st.rerun``) if one is waiting; a run's
    loops call it between events. Outside a script run (no context) there is nothing to stop."""
    ctx = get_script_run_ctx()
    if ctx is not None and rerun_requested(ctx.script_requests):
        st.rerun()
