"""The "One round, inside the model" page under AppTest: without a run it invites one and loads
no model; after a toy run on the live page in the same session it steps through one of its
rounds, drawn from that round's events, and a row opens the live page's inspector there."""

from __future__ import annotations

import pytest

from specdec_core.live.round_view import round_view
from support.apptest import open_page, rerun

TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 60, "live_t": 1.0}


@pytest.mark.parametrize(
    ("lang", "title"), [("en", "One round, inside the model"), ("zh", "一轮，在模型内部")]
)
def test_the_page_opens_without_a_run_and_invites_one(lang, title):
    at = open_page("round", lang=lang)
    assert at.title[0].value == title
    assert len(at.info) == 1 and not at.error
    assert "round_stage" not in at.session_state and "live_trace" not in at.session_state


def _after_a_live_run(lang: str = "en"):
    at = open_page("live", lang=lang, state=TOY)
    at.button(key="live_generate").click()
    rerun(at)
    trace = at.session_state["live_trace"]
    at.switch_page("pages/round.py")
    rerun(at)
    return at, trace


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_round_of_the_sessions_run_is_stepped_through(lang):
    at, trace = _after_a_live_run(lang)
    events = trace.speculative.events
    picked = at.session_state["round_pick"]
    assert picked == next((i for i, e in enumerate(events) if e.rejected), 0)
    assert at.markdown[1].value.startswith("**Round" if lang == "en" else "**第")
    seen = []
    for stage in range(4):
        assert at.session_state["round_stage"] == stage
        seen.append(([c.value for c in at.caption], [i.value for i in at.info]))
        if stage < 3:
            at.button(key="round_next").click()
            rerun(at)
    assert at.button(key="round_next").disabled
    toy_info = seen[3][1]
    assert len(toy_info) == 1 and ("KV" in toy_info[0])  # the toy chain keeps no cache: said, not drawn
    at.button(key="round_prev").click()
    rerun(at)
    assert at.session_state["round_stage"] == 2
    view = round_view(trace.prompt_ids, events, picked)
    table = at.dataframe[0].value
    assert len(table) == len(view.rows)
    assert table.iloc[:, 0].tolist() == [r.index for r in view.rows]
    u_column = table.iloc[:, 6].tolist()
    shown_u = [float(u) for u in u_column if u != "—"]
    assert shown_u == pytest.approx(events[picked].draft_u, rel=1e-3)


def test_a_row_opens_the_live_inspector_at_its_position():
    at, trace = _after_a_live_run()
    at.session_state["round_stage"] = 2
    rerun(at)
    picked = at.session_state["round_pick"]
    at.radio(key="round_row").set_value(1)
    at.button(key="round_inspect").click()
    rerun(at)
    assert at.session_state["live_round"] == picked and at.session_state["live_slot"] == 1
    assert at.session_state["live_trace"] is trace
    assert at.title[0].value == "Live generation"


def test_every_round_of_the_run_can_be_picked():
    at, trace = _after_a_live_run()
    for i in range(len(trace.speculative.events)):
        at.selectbox(key="round_pick").set_value(i)
        rerun(at)
        committed = len(trace.speculative.events[i].committed)
        assert f"{committed} tokens committed" in at.markdown[1].value
