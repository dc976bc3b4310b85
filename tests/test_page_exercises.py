"""The exercise-sheet page under AppTest: the sheet of a seed, the key behind its toggle, the
downloads, and the URL that reproduces the sheet (scenarios open fresh; see apptest_helpers)."""

import tomllib

import pytest

from specdec_core.course.exercise_sheet import render
from specdec_core.course.exercises import TOPICS, make_sheet
from support.apptest import ROOT, open_page, rerun, shared_link

TITLES = {"en": "Exercise sheets", "zh": "练习题"}


def _text(lang: str) -> dict:
    return tomllib.loads((ROOT / "lessons" / lang / "exercises.toml").read_text("utf-8"))


def _shown(at) -> list[str]:
    return [m.value for m in at.markdown]


def _qp(at, key: str) -> str:
    value = shared_link(at)[key]
    return value[0] if isinstance(value, list) else value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_seeds_sheet_and_hides_the_key(lang):
    at = open_page("exercises", lang, query={"ex_seed": "42"})
    assert at.title[0].value == TITLES[lang]
    text = _text(lang)
    sheet = make_sheet(42)
    assert render(sheet, text["sheet"], text["topic_names"], "sheet").strip() in _shown(at)
    key_md = render(sheet, text["sheet"], text["topic_names"], "key").strip()
    assert key_md not in _shown(at)
    assert len(at.get("download_button")) == 3
    at.toggle(key="ex_key").set_value(True)
    rerun(at)
    assert key_md in _shown(at) and _qp(at, "ex_key") == "1"


def test_a_shared_url_reproduces_the_sheet_and_its_key():
    query = {"ex_seed": "917", "ex_topics": "block,story", "ex_n": "2", "ex_key": "1"}
    at = open_page("exercises", "zh", query=query)
    assert at.number_input(key="ex_seed").value == 917 and at.slider(key="ex_n").value == 2
    assert at.multiselect(key="ex_topics").value == ["block", "story"]
    text = _text("zh")
    sheet = make_sheet(917, ["block", "story"], 2)
    assert [pr.topic for pr in sheet.problems] == ["block", "block", "story"]
    assert render(sheet, text["sheet"], text["topic_names"], "key").strip() in _shown(at)
    assert not at.warning


def test_changing_the_seed_or_the_topics_changes_the_sheet_and_the_url():
    at = open_page("exercises", "en", query={"ex_seed": "1"})
    before = _shown(at)
    at.number_input(key="ex_seed").set_value(2)
    rerun(at)
    assert _shown(at) != before and _qp(at, "ex_seed") == "2"
    at.multiselect(key="ex_topics").set_value(["tokens"])
    rerun(at)
    assert _qp(at, "ex_topics") == "tokens"
    sheet_md = next(m for m in _shown(at) if m.startswith("# "))
    assert sheet_md.count("\n## ") == 1
    at.button[0].click()  # "New numbers": a random seed
    rerun(at)
    assert at.number_input(key="ex_seed").value == int(_qp(at, "ex_seed"))


def test_no_topic_asks_for_one():
    at = open_page("exercises", "en", query={"ex_topics": ""})
    assert at.info and "at least one topic" in at.info[0].value
    assert not at.get("download_button")


def test_bad_url_values_fall_back_with_a_warning():
    at = open_page("exercises", "en", query={"ex_seed": "-3", "ex_topics": "block,nonsense", "ex_n": "9"})
    assert at.number_input(key="ex_seed").value == 1 and at.multiselect(key="ex_topics").value == list(TOPICS)
    assert all(k in at.warning[0].value for k in ("ex_seed", "ex_topics", "ex_n"))
