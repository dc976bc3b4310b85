"""What the two live-model pages share, under AppTest: a run that cannot start says why in a
message, the page goes back to idle, and the next run on the toy pair works.

The live page (Generate) and the draft race (Run the race) start, fail and recover through
the same run service (pages/common/service_run.py); each scenario opens a fresh AppTest.
"""

import pytest

from specdec_core.live.model_choices import drafts_for
from support.apptest import open_page, rerun

LIVE_TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 60}
RACE_TOY = {"race_target": "toy", "race_max": 40}
START = {"live": "live_generate", "race": "race_run"}  # the button that starts a run
KEPT = {"live": "live_trace", "race": "race_results"}  # where a finished run is kept


def _start(at, page: str):
    at.button(key=START[page]).click()
    return rerun(at)


@pytest.mark.parametrize(
    ("page", "state", "message"),
    [
        ("live", {**LIVE_TOY, "live_prompt": "   "}, "The prompt is empty"),
        ("live", {**LIVE_TOY, "live_prompt": "the " * 25_000}, "100,000 characters; the limit is 20,000"),
        ("live", {**LIVE_TOY, "live_prompt": "the zebra"}, "cannot be encoded"),
        ("live", {"live_target": "custom", "live_target_src": "/nonexistent/model"}, "does not exist"),
        ("live", {"live_target": "custom", "live_target_src": ""}, "custom target"),
        ("race", {**RACE_TOY, "race_drafts": []}, "Choose at least one draft"),
        ("race", {**RACE_TOY, "race_prompt": ""}, "The prompt is empty"),
        ("race", {"race_drafts": ["layerskip"], "race_depths": "ten"}, "is not a list of layer counts"),
        ("race", {"race_target": "custom", "race_target_src": "/nonexistent/model"}, "does not exist"),
    ],
)
def test_errors_are_messages_and_the_page_stays_usable(page, state, message):
    at = open_page(page, state=state)
    _start(at, page)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert KEPT[page] not in at.session_state
    assert at.button(key=f"{page}_stop").disabled, "the page is back to idle"
    if at.selectbox(key=f"{page}_target").value != "toy":
        at.selectbox(key=f"{page}_target").set_value("toy")
        rerun(at)
        if page == "live":
            assert at.session_state["live_draft"] in drafts_for("toy"), (
                "switching target keeps a draft that fits"
            )
        else:
            assert at.multiselect(key="race_drafts").value == ["toy_draft", "ngram"], "drafts that fit"
    if page == "race":
        at.multiselect(key="race_drafts").set_value(["toy_draft"])
    at.text_area(key=f"{page}_prompt").set_value("the cat")
    _start(at, page)
    assert not at.error and KEPT[page] in at.session_state
