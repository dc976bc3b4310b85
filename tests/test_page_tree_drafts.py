"""The Tree drafts lesson under AppTest: both languages, a stepped round, the URL replay."""

import pytest

from support.apptest import open_page, rerun, shared_link

TITLES = {"en": "Tree drafts", "zh": "树形草稿"}


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_in_both_languages(lang):
    at = open_page("tree_drafts", lang)
    assert at.title[0].value == TITLES[lang]
    assert at.info, "before any round the page explains what Next round does"
    assert len(at.get("plotly_chart")) == 3  # shapes, one-position tree, acceptance curve
    at = open_page("tree_drafts", lang, query={"trd_round": "3", "trd_shape": "2-2"})
    assert len(at.get("plotly_chart")) == 6  # + round tree, mask, cache
    assert len(at.radio) >= 1 + 4  # draft choice + four quiz questions
    assert not at.warning and not at.error and not at.exception


def test_next_round_steps_and_the_url_replays_it():
    at = open_page("tree_drafts", "en", query={"trd_seed": "5", "trd_shape": "3-1"})
    for _ in range(2):
        at.button(key="trd_next").click()
        rerun(at)
    assert at.session_state["trd_round"] == 2 and shared_link(at)["trd_round"] == "2"
    metrics = _metrics(at)
    assert metrics["Round"] == "2" and metrics["Nodes drafted"] == "6"
    assert 1 <= int(metrics["Tokens committed"]) <= 3
    shared = open_page("tree_drafts", "en", query=shared_link(at))
    assert _metrics(shared) == metrics
    at.button(key="trd_reset").click()
    rerun(at)
    assert at.session_state["trd_round"] == 0 and not at.metric


def test_the_one_position_tree_adds_up_to_p_in_the_caption():
    at = open_page("tree_drafts", "en", query={"trd_k": "3", "trd_repl": "0"})
    captions = " ".join(c.value for c in at.caption)
    assert "A = 0.200, B = 0.400, C = 0.400" in captions
    assert "three distinct ones give 1.00" in captions
