"""The draft-race page under AppTest, on the toy Markov pair."""

import json

import pytest

from specdec_core.live.race import BASELINE, result_json
from specdec_core.viz.escape import md
from support.apptest import open_page, rerun

TOY = {"race_target": "toy", "race_max": 40}


def _run(at):
    at.button(key="race_run").click()
    return rerun(at)  # until the race has ended


@pytest.mark.parametrize(("lang", "title"), [("en", "Draft race"), ("zh", "草稿竞赛")])
def test_page_opens_with_drafts_for_its_target(lang, title):
    at = open_page("race", lang)
    assert at.title[0].value == title
    assert at.multiselect(key="race_drafts").value == ["ngram", "bf16", "layerskip"]
    assert at.text_input(key="race_depths").value == "10, 20, 27"
    toy = open_page("race", lang, state=TOY)
    assert toy.multiselect(key="race_drafts").value == ["toy_draft", "ngram"]
    assert toy.info and not toy.error


def test_race_on_the_toy_pair_fills_the_table_from_the_runs():
    at = open_page("race", state={**TOY, "race_t": 0.0})
    _run(at)
    assert not at.error
    result = at.session_state["race_results"]["copy"]
    rows = result.rows
    assert [r.key for r in rows] == ["toy_draft", "ngram"]
    table = at.dataframe[0].value
    assert list(table["draft"]) == ["toy draft", "n-gram"]
    assert list(table["α̂"]) == pytest.approx([r.alpha for r in rows])
    assert list(table["speedup (decode)"]) == pytest.approx([r.decode_speedup for r in rows])
    assert any("every draft produced exactly the target-only text" in c.value for c in at.caption)
    best = max(rows, key=lambda r: r.decode_speedup)
    verdict = at.success if best.decode_speedup >= 1 else at.warning  # "fastest" vs "nobody beat the target"
    assert any(md(result.names[best.key]) in m.value for m in verdict)  # names shown as literal Markdown
    assert len(at.get("plotly_chart")) == 2
    data = json.loads(result_json(result))
    assert set(data["runs"]) == {BASELINE, "toy_draft", "ngram"}


def test_a_second_task_adds_the_by_task_table():
    at = open_page("race", state={**TOY, "race_t": 1.0})
    _run(at)
    at.radio(key="race_preset").set_value("chat")
    rerun(at)
    assert at.text_area(key="race_prompt").value == "<script> alert ( ) ; </script> the"
    _run(at)
    assert set(at.session_state["race_results"]) == {"copy", "chat"}
    by_task = at.dataframe[1].value
    assert list(by_task["task"]) == ["copy a paragraph", "open chat"]
    assert set(by_task.columns) == {"task", "toy draft", "n-gram"}
