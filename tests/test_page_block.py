"""The block-verification page under AppTest.

Streamlit 1.67's AppTest runs app.py only on the first run (see support/apptest.py),
so every scenario opens a fresh AppTest with its language and URL set before that run.
Where a test clicks, it checks both the page state and the URL the page wrote, and the
URL is then replayed in a fresh AppTest: a click that only "worked" through state kept by
the test harness would not survive that replay.
"""

import pytest

from support.apptest import open_page, rerun, shared_link

TITLES = {"en": "Block verification", "zh": "块验证"}


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _text(at) -> str:
    """The coloured committed text (the page's only sd-tokens block)."""
    return next(h.proto.body for h in at.get("html") if "sd-tokens" in h.proto.body)


def _view(at) -> tuple:
    return tuple(m.value for m in at.metric), _text(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_in_both_languages(lang):
    at = open_page("block", lang)
    assert at.title[0].value == TITLES[lang]
    assert at.info, "before any round the page explains what Next round does"
    at = open_page("block", lang, query={"block_round": "40"})
    assert len(at.get("plotly_chart")) == 5  # round, rows, caches, rounds, histogram
    assert len(at.radio) >= 1 + 3  # draft choice + three quiz questions
    assert not at.warning and not at.error


def test_next_round_advances_and_the_url_replays_it():
    at = open_page("block", "en", query={"block_seed": "123"})
    at.button(key="block_next").click()
    rerun(at)
    assert at.session_state["block_round"] == 1 and shared_link(at)["block_round"] == "1"
    for _ in range(2):
        at.button(key="block_next").click()
        rerun(at)
    assert _metrics(at)["Round"] == "3" and shared_link(at)["block_round"] == "3"
    clicked = _view(at)
    shared = open_page("block", "en", query=shared_link(at))
    assert _view(shared) == clicked
    at.button(key="block_many").click()
    rerun(at)
    assert _metrics(at)["Round"] == "28"
    at.button(key="block_reset").click()
    rerun(at)
    assert at.session_state["block_round"] == 0 and not at.metric and at.info


def test_a_shared_url_restores_the_controls_and_the_round():
    query = {
        "block_chain": "random",
        "block_draft": "poor",
        "block_k": "6",
        "block_seed": "99",
        "block_t": "0.5",
        "block_round": "7",
    }
    at = open_page("block", "en", query=query)
    assert at.selectbox(key="block_chain").value == "random"
    assert at.radio(key="block_draft").value == "poor"
    assert at.slider(key="block_k").value == 6 and at.slider(key="block_t").value == 0.5
    assert at.number_input(key="block_seed").value == 99
    assert _metrics(at)["Round"] == "7" and _metrics(at)["Drafts accepted"].endswith("/ 6")
    again = open_page("block", "zh", query=query)
    assert tuple(m.value for m in again.metric) == tuple(m.value for m in at.metric)


@pytest.mark.parametrize(
    ("key", "value", "widget"),
    [
        ("block_chain", "random", "selectbox"),
        ("block_draft", "poor", "radio"),
        ("block_k", 7, "slider"),
        ("block_t", 0.3, "slider"),
        ("block_seed", 5, "number_input"),
    ],
)
def test_each_control_changes_the_round(key, value, widget):
    at = open_page("block", "en", query={"block_round": "30"})
    before = _view(at)
    getattr(at, widget)(key=key).set_value(value)
    rerun(at)
    assert _view(at) != before
    assert shared_link(at)[key] == str(value)


def test_identical_draft_commits_k_plus_one_every_round():
    at = open_page("block", "en", query={"block_draft": "identical", "block_k": "3", "block_round": "30"})
    m = _metrics(at)
    assert (
        m["Drafts accepted"] == "3 / 3"
        and m["Tokens committed"] == "4"
        and m["Measured acceptance rate α̂"] == "1.00"
    )
    assert m["Text length"] == str(1 + 30 * 4)
    assert m["Mean tokens per round (measured)"] == "4.00"


def test_bad_url_values_fall_back_with_a_warning():
    at = open_page("block", "en", query={"block_k": "99", "block_round": "many", "block_draft": "<b>"})
    assert at.slider(key="block_k").value == 4 and at.session_state["block_round"] == 0
    assert at.radio(key="block_draft").value == "good"
    assert "block_k" in at.warning[0].value and "block_round" in at.warning[0].value


def test_other_pages_state_does_not_leak_in():
    """Keys are page-prefixed: another lesson's seed or temperature cannot break this page."""
    at = open_page("block", "en", state={"seed": 10**9, "T": 4.5, "K": 0, "round": "x"})
    assert at.slider(key="block_t").value == 1.0 and at.number_input(key="block_seed").value == 7


def test_moving_k_back_continues_that_demo_as_a_fresh_replay_would():
    """The page keeps this session's demos by settings: K moved away and back, then more
    rounds, shows exactly what a fresh page at those settings and that round shows."""
    at = open_page("block", query={"block_round": "6", "block_k": "2"})
    for k in (5, 2):
        at.slider(key="block_k").set_value(k)
        rerun(at)
    at.button(key="block_next").click()
    rerun(at)
    fresh = open_page("block", query={"block_round": "7", "block_k": "2"})
    assert _view(at) == _view(fresh)
    assert shared_link(at)["block_round"] == "7"
