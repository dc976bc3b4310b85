"""After each error, the next valid action works: every input that can fail, under AppTest.

Each scenario makes the error, checks its message, then does what a learner would do next
(fix the prompt, pick another model, load a good file, press the table's repair button…)
within the same session, and checks that the page works again and the message is gone.
"""

from __future__ import annotations

import json

import pytest

from specdec_core.live.trace import to_json
from support.apptest import open_page, rerun, shared_link
from tests.bad_input.hostile import toy_trace
from tests.bad_input.test_catalogue import sources  # noqa: F401  (the model-folder fixture)

TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 16}


def _generate(at):
    at.button(key="live_generate").click()
    return rerun(at)


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_prompt_error_then_a_good_prompt_generates():
    at = open_page("live", state={**TOY, "live_prompt": "   "})
    _generate(at)
    assert any("empty" in e for e in _errors(at)) and "live_trace" not in at.session_state
    at.text_area(key="live_prompt").input("the cat sat")
    _generate(at)
    assert not at.error and at.session_state["live_trace"].prompt == "the cat sat"


def test_too_long_prompt_then_a_short_one():
    at = open_page("live", lang="zh", state={**TOY, "live_prompt": "the " * 6000})
    _generate(at)
    assert any("字符" in e for e in _errors(at))
    at.text_area(key="live_prompt").input("the dog ran")
    _generate(at)
    assert not at.error and "live_trace" in at.session_state


def test_bad_trace_then_a_good_trace_replays():
    at = open_page("live", state={"_live_import": b"{broken"})
    assert any("cannot be replayed" in e for e in _errors(at))
    at.session_state["_live_import"] = to_json(toy_trace()).encode()  # what the uploader's callback stores
    rerun(at)
    assert not at.error and at.session_state["live_trace"].meta.get("replayed")
    at.session_state["_live_import"] = b"[]"  # a second bad file keeps the replayed run on screen
    rerun(at)
    assert at.error and "live_trace" in at.session_state


def test_missing_custom_target_then_the_toy_pair(sources):  # noqa: F811
    at = open_page("live", state={"live_target": "custom", "live_target_src": "", "live_max": 8})
    _generate(at)
    assert any("custom target" in e for e in _errors(at))
    at.selectbox(key="live_target").set_value("toy")
    rerun(at)
    at.text_area(key="live_prompt").input("the cat")
    _generate(at)
    assert not at.error and "live_trace" in at.session_state


def test_unloadable_folder_then_a_real_folder(sources):  # noqa: F811
    at = open_page(
        "live",
        state={
            "live_target": "custom",
            "live_target_src": "/etc",
            "live_draft": "ngram",
            "live_max": 8,
            "live_prompt": "the quick brown fox",
        },
    )
    _generate(at)
    assert any("/etc" in e for e in _errors(at))
    at.text_input(key="live_target_src").input(sources["target"])
    _generate(at)
    assert not at.error and len(at.session_state["live_trace"].speculative.tokens) > 0


def test_mismatched_custom_draft_then_a_fitting_draft(sources):  # noqa: F811
    state = {
        "live_target": "custom",
        "live_target_src": sources["target"],
        "live_draft": "custom",
        "live_draft_src": sources["alien"],
        "live_max": 8,
        "live_prompt": "the quick brown fox",
    }
    at = open_page("live", state=state)
    _generate(at)
    assert any("share no token" in e for e in _errors(at))
    at.text_input(key="live_draft_src").input(sources["other"])  # another tokenizer: drafts across
    _generate(at)
    assert not at.error and "live_trace" in at.session_state


def test_bad_race_depths_then_good_ones(sources):  # noqa: F811
    state = {
        "race_target": "custom",
        "race_target_src": sources["target"],
        "race_drafts": ["layerskip"],
        "race_depths": "one, two",
        "race_max": 8,
        "race_prompt": "the quick brown fox",
    }
    at = open_page("race", state=state)
    at.button(key="race_run").click()
    rerun(at)
    assert any("layer counts" in e for e in _errors(at))
    at.text_input(key="race_depths").input("1")
    at.button(key="race_run").click()
    rerun(at)
    assert not at.error and at.session_state["race_results"]


@pytest.mark.parametrize(("page", "param"), [("overlap", "ov_table"), ("tree", "tree_table")])
def test_table_that_does_not_sum_to_one_then_the_repair_button(page, param):
    at = open_page(page, query={param: json.dumps([["a", 0.5, 0.5], ["b", 0.4, 0.5]])})
    assert at.error and not at.metric
    prefix = param.split("_")[0]
    at.button(key=f"{prefix}_normalise").click()
    rerun(at)
    assert not at.error and at.metric
    assert json.loads(shared_link(at)[param])[1][1] == pytest.approx(0.4 / 0.9)


@pytest.mark.parametrize(("page", "param"), [("overlap", "ov_table"), ("tree", "tree_table")])
def test_negative_table_then_back_to_the_example(page, param):
    at = open_page(page, lang="zh", query={param: json.dumps([["a", -1, 0.5], ["b", 2, 0.5]])})
    assert at.error
    at.button(key=f"{param.split('_')[0]}_reset_table").click()
    rerun(at)
    assert not at.error and at.metric and shared_link(at)[param] == ""


def test_bad_logits_link_then_a_good_one():
    at = open_page("sampling_lab", query={"logits": "a:nan,b:1,c:2"})
    assert at.warning and "logits" in at.warning[0].value
    at.query_params["logits"] = "x:3,y:1,z:0"
    rerun(at)
    assert not at.error and [r[0] for r in at.session_state["logits"]] == ["x", "y", "z"]
    assert at.metric and "x" in [m.value for m in at.metric]
