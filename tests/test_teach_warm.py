"""The teacher's warm-up: the route's live runs, read from its links as the live page reads
them, run once so the room's presses are replays; behind the passcode on a classroom server."""

from __future__ import annotations

import time

import pytest

from pages.common.form import link_reader
from pages.common.live_form import live_form, settings
from pages.teach_parts.warm import DONE_KEY, TICKETS_KEY, warm_jobs
from specdec_core.course.teach import LIVE
from specdec_core.live.classroom import request_key
from support.apptest import open_page, rerun


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_warmed_run_has_the_key_of_a_learners_press_on_the_routes_link(lang):
    jobs = warm_jobs(lang)
    assert len(jobs) == 1, "the routes link to one live run (the class and the lecture share it)"
    at = open_page("live", lang, query=LIVE.query)
    f = live_form()
    pressed = request_key(settings(f, lambda p: at.session_state[p.key]), at.session_state["live_prompt"])
    assert jobs[0].key == pressed
    assert settings(f, link_reader(LIVE.query)).target.kind == "bundled"


def test_on_a_classroom_server_warming_asks_for_the_passcode(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(tmp_path / "class.sqlite"))
    monkeypatch.setenv("SPECDEC_TEACHER_PASSCODE", "owl-42")
    at = open_page("teach")
    at.text_input(key="teach_passcode").input("wrong")
    at.button(key="teach_warm").click()
    rerun(at)
    assert any("Wrong passcode" in e.value for e in at.error)
    assert TICKETS_KEY not in at.session_state and at.text_input(key="teach_passcode").value == ""
    monkeypatch.delenv("SPECDEC_TEACHER_PASSCODE")
    hidden = open_page("teach")
    assert not [b for b in hidden.button if b.key == "teach_warm"]
    assert any("switched off" in c.value for c in hidden.caption)


@pytest.mark.slow
def test_warming_makes_the_routes_live_run_a_replay_for_the_room():
    from pages.common.models import classroom

    classroom().forget()
    teacher = open_page("teach")
    teacher.button(key="teach_warm").click()
    rerun(teacher)
    deadline = time.monotonic() + 600
    while TICKETS_KEY in teacher.session_state and time.monotonic() < deadline:
        time.sleep(0.5)
        rerun(teacher)  # AppTest does not run the watching fragment on its timer
    assert teacher.session_state[DONE_KEY][0] == 1 and not teacher.session_state[DONE_KEY][2]
    assert any("The class is warm" in m.value for m in teacher.success)
    learner = open_page("live", query=LIVE.query)
    learner.button(key="live_generate").click()
    rerun(learner)
    trace = learner.session_state["live_trace"]
    assert trace.meta["cached"], "the learner's press is answered by the warmed run"
    assert any("replayed from the shared cache" in i.value for i in learner.info)
