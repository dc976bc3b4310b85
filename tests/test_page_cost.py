"""The cost-and-speedup page under AppTest.

Each scenario opens a fresh AppTest with its language and URL set before the first run
(Streamlit 1.67 runs app.py only then; see support/apptest.py). After a widget change
the test reads both the page and the URL the page wrote, and replays that URL fresh.
"""

import tomllib
from pathlib import Path

import pytest

from specdec_core.theory import expected_tokens, speedup
from support.apptest import ROOT, open_page, rerun, shared_link

TITLES = {"en": "Cost and speedup", "zh": "成本与加速比"}


def _metrics(at) -> list[str]:
    return [m.value for m in at.metric]


def _verdict(at) -> str:
    return next(h.proto.body for h in at.get("html") if "sd-verdict" in h.proto.body)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_in_both_languages(lang):
    at = open_page("cost", lang)
    assert at.title[0].value == TITLES[lang]
    assert len(at.get("plotly_chart")) == 6
    assert len(at.metric) == 4 and len(at.dataframe) == 1
    quiz = tomllib.loads(Path(ROOT, "lessons", lang, "cost.toml").read_text(encoding="utf-8"))["quiz"]
    assert len(at.radio) == 1 + len(quiz)  # verification model + the quiz questions
    assert not at.warning and not at.error


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_seed_table_is_recomputed_and_two_rows_flagged(lang):
    at = open_page("cost", lang, query={"cost_alpha": "0.9", "cost_gamma": "7", "cost_c": "0"})
    assert _metrics(at)[0] == "5.70"
    table = at.dataframe[0].value
    computed = table.iloc[:, 3].tolist()
    rows = ((0.9, 4), (0.9, 7), (0.7, 4), (0.7, 7), (0.5, 4))
    assert computed == [f"{expected_tokens(a, g):.2f}" for a, g in rows]
    assert computed[1] == "5.70" and computed[3] == "3.14"
    status = table.iloc[:, 4].tolist()
    assert [s.startswith("✗") for s in status] == [False, True, False, True, False]
    assert "5.70" in at.caption[1].value and "3.14" in at.caption[1].value


def test_best_gamma_changes_with_the_draft_cost():
    at = open_page("cost", "en", query={"cost_alpha": "0.8", "cost_c": "0.05"})
    assert _metrics(at)[3] == "γ = 8"
    at.slider(key="cost_c").set_value(0.3)
    rerun(at)
    assert _metrics(at)[3] != "γ = 8" and shared_link(at)["cost_c"] == "0.3"
    replay = open_page("cost", "en", query=shared_link(at))
    assert _metrics(replay) == _metrics(at)


@pytest.mark.parametrize(
    ("widget", "key", "value", "start"),
    [
        ("slider", "cost_alpha", 0.6, {}),
        ("slider", "cost_gamma", 9, {}),
        ("slider", "cost_c", 0.5, {}),
        ("radio", "cost_verify", "linear", {"cost_beta": "0.1"}),  # a β of the link's own
        ("slider", "cost_beta", 0.3, {"cost_verify": "linear"}),
    ],
)
def test_each_control_changes_the_numbers(widget, key, value, start):
    at = open_page("cost", "en", query=start)
    before = (_metrics(at), _verdict(at))
    getattr(at, widget)(key=key).set_value(value)
    rerun(at)
    assert (_metrics(at), _verdict(at)) != before
    assert shared_link(at)[key] == str(value)


def test_a_shared_url_restores_the_controls():
    query = {
        "cost_alpha": "0.7",
        "cost_gamma": "6",
        "cost_c": "0.12",
        "cost_verify": "linear",
        "cost_beta": "0.2",
    }
    at = open_page("cost", "zh", query=query)
    assert at.slider(key="cost_alpha").value == 0.7 and at.slider(key="cost_gamma").value == 6
    assert at.slider(key="cost_c").value == 0.12 and at.slider(key="cost_beta").value == 0.2
    assert at.radio(key="cost_verify").value == "linear"
    expected = speedup(0.7, 6, 0.12, lambda g: 1 + 0.2 * g)
    assert _metrics(at)[2] == f"{expected:.2f}×"


def test_a_measured_draft_loads_its_numbers_and_a_bad_apprentice_is_named(pinned_profile):
    at = open_page("cost", "en")
    at.selectbox(key="cost_preset").set_value("layers8")
    rerun(at)
    # μ from the lesson's data, c and β from this machine's (pinned) profile
    c = pinned_profile.draft_c["smollm2"]["layerskip:8"]
    assert at.slider(key="cost_alpha").value == 0.02 and at.slider(key="cost_c").value == c
    assert at.radio(key="cost_verify").value == "linear"
    assert at.slider(key="cost_beta").value == pytest.approx((1.3 - 1) / 4)
    assert "bad apprentice" in _verdict(at)
    assert shared_link(at)["cost_alpha"] == "0.02"
    at.slider(key="cost_alpha").set_value(0.9)
    rerun(at)
    assert at.selectbox(key="cost_preset").value == "custom"


def test_the_shipped_heads_are_measured_presets_with_their_cards_numbers():
    from specdec_core.course.cards import head_card, medusa_card

    card, medusa = head_card(), medusa_card()
    assert card is not None and card.cost_ratio is not None  # assets/head/card.json ships
    assert medusa is not None and medusa.cost_ratio is not None  # so does assets/medusa/card.json
    presets = {
        "head": (card.bench_alpha if card.bench_alpha is not None else card.greedy_gamma4, card.cost_ratio),
        "medusa": (
            medusa.bench_alpha
            if medusa.bench_alpha is not None
            else medusa.accepted_per_round / medusa.heads,
            medusa.cost_ratio,
        ),
    }
    at = open_page("cost", "en")
    options = at.selectbox(key="cost_preset").options
    assert "trained draft head of this repo (assets/head)" in options
    assert "Medusa heads of this repo (assets/medusa)" in options
    for key, (alpha, cost) in presets.items():
        at.selectbox(key="cost_preset").set_value(key)
        rerun(at)
        assert at.slider(key="cost_alpha").value == round(alpha, 2), key
        assert at.slider(key="cost_c").value == round(cost, 2), key


def test_bad_url_values_fall_back_with_a_warning():
    at = open_page("cost", "en", query={"cost_alpha": "1.5", "cost_verify": "cheap"})
    assert at.slider(key="cost_alpha").value == 0.8 and at.radio(key="cost_verify").value == "constant"
    assert "cost_alpha" in at.warning[0].value and "cost_verify" in at.warning[0].value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_numbers_agree_with_the_theory(lang):
    quiz = tomllib.loads(Path(ROOT, "lessons", lang, "cost.toml").read_text(encoding="utf-8"))["quiz"]
    first = quiz[0]
    assert first["options"][first["answer"]].startswith(f"{expected_tokens(0.7, 3):.2f}")
    assert f"{speedup(0.45, 1, 0.35):.2f}×" in quiz[2]["options"][quiz[2]["answer"]]


def test_other_pages_state_does_not_leak_in():
    """Keys are page-prefixed: another lesson's alpha or c cannot break this page."""
    at = open_page("cost", "en", state={"alpha": 7.0, "gamma": 99, "c": -1, "beta": "x"})
    assert at.slider(key="cost_alpha").value == 0.8 and at.slider(key="cost_gamma").value == 4


def _text(at) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_costs_are_this_machines_profile_and_name_it(lang, pinned_profile):
    at = open_page("cost", lang)
    text = _text(at)
    assert "Pinned CPU" in text and "{{" not in text
    # β starts at the profile's, through its 5-row verification: (1.3 - 1) / 4
    assert at.slider(key="cost_beta").value == pytest.approx(0.075)
    # the 5-row verification (1.30 steps) differs from the memory-bound 1.00: both are shown
    assert "1.30" in text and "1.00" in text
    # bf16's c 0.71 against the reference's 0.50, and the step split: 48.0 ms against a 26.9 ms floor
    assert "0.71" in text and "0.50" in text
    assert "48.0" in text and "26.9" in text and "21.1" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_before_any_model_loads_the_page_quotes_the_memory_bound_reference(lang):
    at = open_page("cost", lang)
    text = _text(at)
    assert "{{" not in text and "Pinned CPU" not in text
    assert at.slider(key="cost_beta").value == 0.0  # a memory-bound verification costs one step
    strings = tomllib.loads((ROOT / "lessons" / lang / "common.toml").read_text("utf-8"))["profile"]
    assert strings["reference"] in text
    assert at.info and "python -m bench.profile" in at.info[0].value
    at.selectbox(key="cost_preset").set_value("bf16")
    rerun(at)
    assert at.slider(key="cost_c").value == 0.5 and at.slider(key="cost_beta").value == 0.0
