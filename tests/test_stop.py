"""Stop inside a fragment reads Streamlit's request queue (pages/common/stop.py): the read must
see a waiting press on the real ``ScriptRequests`` class, and fail loudly if Streamlit renames it."""

from __future__ import annotations

import dataclasses

from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

from pages.common.stop import rerun_requested


def test_a_press_inside_a_fragment_is_seen_while_the_script_runs():
    requests = ScriptRequests()
    assert not rerun_requested(requests)
    assert requests.request_rerun(RerunData(fragment_id="panel"))  # Stop, pressed in Job.panel's fragment
    assert requests.on_scriptrunner_yield() is None, "Streamlit lets the fragment's run go on"
    assert rerun_requested(requests)


def test_a_whole_page_press_is_seen_too():
    requests = ScriptRequests()
    requests.request_rerun(RerunData())
    assert rerun_requested(requests)
    requests.request_stop()
    assert not rerun_requested(requests), "a stopped session has no rerun to start"


def test_the_running_script_context_carries_the_request_queue():
    assert "script_requests" in {f.name for f in dataclasses.fields(ScriptRunContext)}
