"""The teacher's warm-up: the route's live runs, read from its links as the live page reads
them, run once so the room's presses are replays; behind the passcode on a classroom server."""

from __future__ import annotations

import time

import pytest

from pages.common.compare_form import CompareForm, grid_spec
from pages.common.form import link_reader
from pages.common.i18n import Strings
from pages.common.live_form import LiveForm, settings
from pages.teach_parts.warm import DONE_KEY, TICKETS_KEY, done_text, warm_jobs
from specdec_core.course.teach import COMPARE, LIVE
from specdec_core.live.classroom import request_key
from support.apptest import open_page, rerun


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_warmed_run_has_the_key_of_a_learners_press_on_the_routes_link(lang):
    jobs, refused = warm_jobs((lang,))
    assert not refused
    live, grid = jobs  # the routes link to one live run and one grid (the lecture repeats the class's)
    at = open_page("live", lang, query=LIVE.query)
    f = LiveForm()
    pressed = request_key(settings(f, lambda p: at.session_state[p.key]), at.session_state["live_prompt"])
    assert live.key == pressed
    assert settings(f, link_reader(LIVE.query)).target.kind == "bundled"
    page = open_page("compare", lang, query=COMPARE.query)
    shown = grid_spec(CompareForm(), lambda p: page.session_state[p.key])
    assert grid.key == ("grid", shown) and shown.drafts == ("ngram", "bf16", "head")


def test_a_grid_the_server_refuses_is_named_not_run(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(tmp_path / "class.sqlite"))
    monkeypatch.setenv("SPECDEC_MAX_GRID_RUNS", "4")  # the route's grid makes 12 generations
    jobs, refused = warm_jobs()  # both languages: the live run in each, the grid refused once
    assert len(jobs) == 2 and len(refused) == 1 and "12" in refused[0] and "4" in refused[0]


def test_warming_covers_both_languages_live_runs_and_the_grid_once():
    jobs, refused = warm_jobs()
    assert not refused and len(jobs) == 3 and len({job.key for job in jobs}) == 3
    en, zh = (warm_jobs((lang,))[0] for lang in ("en", "zh"))
    assert {job.key for job in jobs} == {job.key for job in en + zh}


@pytest.mark.parametrize(
    ("lang", "n", "replayed", "said"),
    [
        ("en", 1, 0, "The class is warm: one demo is ready to replay."),
        ("en", 3, 1, "One of them was stored already and did not run again."),
        ("en", 3, 2, "2 of them were stored already"),
        ("en", 3, 3, "Every one of them was stored already"),
        ("zh", 3, 2, "其中 2 个此前已经存储"),
    ],
)
def test_the_warm_message_agrees_with_its_numbers(lang, n, replayed, said):
    text = done_text(Strings("teach", lang), n, replayed)
    assert said in text and "(s)" not in text and "{" not in text


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
    assert teacher.session_state[DONE_KEY][0] == 3 and not teacher.session_state[DONE_KEY][2]
    assert any("The class is warm" in m.value for m in teacher.success)
    assert classroom().stored == 2 + 12, "the live run in en and zh and the grid's 12 runs are stored"
    learner = open_page("live", query=LIVE.query)
    learner.button(key="live_generate").click()
    rerun(learner)
    trace = learner.session_state["live_trace"]
    assert trace.meta["cached"], "the learner's press is answered by the warmed run"
    assert any("replayed from the shared cache" in i.value for i in learner.info)
    grid = open_page("compare", query=COMPARE.query)
    grid.button(key="cmp_run").click()
    rerun(grid)
    result = grid.session_state["_cmp_result"]
    assert len(result.runs) == 12 and not any(e.value for e in grid.error)
