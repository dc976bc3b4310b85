"""Sampling lab page under AppTest, plus the facts its lesson text states.

Every scenario opens a fresh AppTest with its language, URL and state set before the first
run (see support/apptest.py): nothing depends on session state surviving app.py.
Widget interactions rerun the page itself, which sets itself up on every run.
"""

import json
import string
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from specdec_core.course.sampling_lab import random_logits
from specdec_core.sampling import REASONS_EN, SamplingConfig, apply, greedy_equivalence
from specdec_core.viz.sampling import KEYS
from support.apptest import ROOT, open_page, rerun, shared_link

PAGE = "sampling_lab"
EXAMPLES = json.loads((ROOT / "assets/presets/logits.json").read_text("utf-8"))
TOML = {lang: tomllib.loads((LESSONS / lang / f"{PAGE}.toml").read_text("utf-8")) for lang in ("en", "zh")}
EN = TOML["en"]


def verdict(at):
    """(``"yes"`` / ``"no"``, the banner's HTML)."""
    banners = [h.value for h in at.html if 'class="sd-verdict' in h.value]
    assert len(banners) == 1, banners
    kind = "yes" if 'class="sd-verdict yes"' in banners[0] else "no"
    return kind, banners[0]


def metrics(at):
    return {m.label: m.value for m in at.metric}


def ref(label, index, lang="en"):
    return TOML[lang]["token_ref"].format(label=label, index=index)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_in_both_languages(lang):
    at = open_page(PAGE, lang=lang)
    s = TOML[lang]
    assert at.title[0].value == s["title"]
    kind, banner = verdict(at)
    assert kind == "no" and s["verdict_no"] in banner
    assert not at.warning and not at.error
    assert metrics(at)[s["metric_support"]] == "6"
    tokens = EXAMPLES["presets"]["peaked"]["tokens"][lang]
    assert at.data_editor[0].value["token"].tolist() == tokens
    assert len(at.tabs) == len(s["tabs"])
    assert sum(1 for r in at.radio if r.key and r.key.startswith(f"quiz_{PAGE}")) == len(s["quiz"])


def test_top_k_one_gives_the_greedy_verdict():
    at = open_page(PAGE, query={"k": "1"})
    kind, banner = verdict(at)
    assert kind == "yes"
    assert EN["reasons"]["top_k_one"].format(token=ref("mat", 0)) in banner
    assert metrics(at)[EN["metric_support"]] == "1"


def test_moving_the_top_k_slider_flips_the_verdict():
    at = open_page(PAGE)
    assert verdict(at)[0] == "no"
    at.slider(key="k").set_value(1)
    rerun(at)
    assert verdict(at)[0] == "yes"
    assert shared_link(at)["k"] in ("1", ["1"])


def test_tied_maxima_are_not_greedy_under_k1_and_a_small_temperature():
    at = open_page(PAGE, query={"preset": "tied", "k": "1", "T": "0.001"})
    kind, banner = verdict(at)
    tied = EN["list_sep"].join([ref("heads", 0), ref("tails", 1)])
    assert kind == "no"
    assert EN["reasons"]["tie"].format(tied=tied, p_max=0.5, token=ref("heads", 0)) in banner
    assert metrics(at)[EN["metric_support"]] == "2"


def test_a_small_top_p_at_the_tie_keeps_tails_and_says_it_is_not_greedy():
    """The lesson's worked example: top-p = 0.3 on the tied preset keeps #1, greedy takes #0."""
    at = open_page(PAGE, query={"preset": "tied", "k": "1", "T": "0.001", "p": "0.3"})
    kind, banner = verdict(at)
    tied = EN["list_sep"].join([ref("heads", 0), ref("tails", 1)])
    expected = EN["reasons"]["top_p_tie_split"].format(
        tied=tied, top_p=0.3, p_max=0.5, token=ref("tails", 1), greedy=ref("heads", 0)
    )
    assert kind == "no" and expected in banner
    assert metrics(at)[EN["metric_support"]] == "1"
    assert metrics(at)[EN["metric_greedy"].format(index=0)] == "heads"


def test_the_t0_switch_is_greedy_by_convention_and_breaks_ties_by_lowest_index():
    at = open_page(PAGE, query={"T0": "1"})
    kind, banner = verdict(at)
    assert kind == "yes" and EN["reasons"]["temperature_switch"].format(token=ref("mat", 0)) in banner
    assert at.select_slider(key="T").disabled and at.slider(key="k").disabled
    at = open_page(PAGE, query={"T0": "1", "preset": "tied"})
    kind, banner = verdict(at)
    tied = EN["list_sep"].join([ref("heads", 0), ref("tails", 1)])
    expected = EN["reasons"]["temperature_switch_tie"].format(tied=tied, token=ref("heads", 0))
    assert kind == "yes" and expected in banner


def test_temperature_limit_is_not_greedy_until_float64_underflows():
    at = open_page(PAGE, query={"T": "0.01"})
    assert verdict(at)[0] == "no"
    assert metrics(at)[EN["metric_pmax"]] == "1"
    assert float(metrics(at)[EN["metric_pmin"]]) == pytest.approx(np.exp(-450), rel=1e-2)
    at.select_slider(key="T").set_value(0.0025)
    rerun(at)
    kind, banner = verdict(at)
    assert kind == "yes" and "0.0025" in banner and "T → 0⁺" in banner


def test_top_p_at_most_the_top_probability_is_greedy():
    assert verdict(open_page(PAGE, query={"p": "0.77"}))[0] == "yes"
    kind, banner = verdict(open_page(PAGE, query={"p": "0.78"}))
    assert kind == "no" and "0.7712" in banner


def test_order_and_min_keep_change_the_verdict():
    query = {"preset": "flat", "k": "2", "p": "0.5"}
    assert verdict(open_page(PAGE, query={**query, "order": "tkp"}))[0] == "yes"
    at = open_page(PAGE, query={**query, "order": "ptk"})
    assert verdict(at)[0] == "no" and metrics(at)[EN["metric_support"]] == "2"
    kind, banner = verdict(open_page(PAGE, query={"k": "1", "min_keep": "3"}))
    assert kind == "no" and "min_tokens_to_keep = 3" in banner


def test_a_shared_url_restores_every_control_and_the_same_numbers():
    at = open_page(PAGE)
    at.segmented_control(key="preset").set_value("flat")
    at.select_slider(key="T").set_value(0.5)
    at.slider(key="k").set_value(3)
    at.slider(key="p").set_value(0.6)
    at.slider(key="min_keep").set_value(2)
    at.selectbox(key="order").set_value("ptk")
    rerun(at)
    shared = {k: (v[0] if isinstance(v, list) else v) for k, v in shared_link(at).items()}
    assert shared["T"] == "0.5" and shared["k"] == "3" and shared["order"] == "ptk"
    fresh = open_page(PAGE, query=shared)
    assert fresh.select_slider(key="T").value == 0.5
    assert fresh.slider(key="k").value == 3 and fresh.slider(key="p").value == 0.6
    assert fresh.slider(key="min_keep").value == 2 and fresh.selectbox(key="order").value == "ptk"
    assert fresh.segmented_control(key="preset").value == "flat"
    assert fresh.data_editor[0].value["token"].tolist() == EXAMPLES["presets"]["flat"]["tokens"]["en"]
    assert verdict(fresh) == verdict(at) and metrics(fresh) == metrics(at)


def test_bad_url_values_fall_back_to_defaults_with_a_warning():
    at = open_page(PAGE, query={"T": "hot", "k": "99", "logits": "a:1,b:2", "order": "xyz"})
    assert at.warning and all(key in at.warning[0].value for key in ("T", "k", "logits", "order"))
    assert at.select_slider(key="T").value == 1.0 and at.slider(key="k").value == 0
    assert at.data_editor[0].value["token"].tolist() == EXAMPLES["presets"]["peaked"]["tokens"]["en"]


def test_logits_in_the_url_are_used_and_labels_are_escaped():
    at = open_page(PAGE, query={"logits": "<script>:2,a\\,b:1,c:0", "k": "1"})
    assert at.data_editor[0].value["token"].tolist() == ["<script>", "a,b", "c"]
    kind, banner = verdict(at)
    assert kind == "yes" and "&lt;script&gt;" in banner and "<script>" not in banner


def test_edits_in_the_table_change_the_numbers():
    edits = {"edited_rows": {0: {"logit": 0.0}}, "added_rows": [], "deleted_rows": []}
    at = open_page(PAGE, state={"sl_table": edits})
    assert EN["metric_greedy"].format(index=1) in metrics(at)
    assert "mat:0,floor:2" in str(shared_link(at)["logits"])


def test_a_table_with_too_few_rows_keeps_the_last_valid_logits():
    edits = {"edited_rows": {}, "added_rows": [], "deleted_rows": [0, 1, 2, 3]}
    at = open_page(PAGE, state={"sl_table": edits})
    assert at.warning and EN["table_rows"].format(n=2, lo=3, hi=12) in at.warning[0].value
    assert metrics(at)[EN["metric_support"]] == "6"


def test_choosing_an_example_loads_its_logits():
    at = open_page(PAGE, lang="zh")
    at.segmented_control(key="preset").set_value("tied")
    rerun(at)
    assert at.data_editor[0].value["token"].tolist() == EXAMPLES["presets"]["tied"]["tokens"]["zh"]
    assert "正面:3" in str(shared_link(at)["logits"])


def test_random_logits_follow_the_seed_and_size():
    at = open_page(PAGE, query={"preset": "random", "seed": "5", "size": "8"})
    table = at.data_editor[0].value
    assert table["logit"].tolist() == random_logits(8, 5).tolist()
    at.number_input(key="seed").set_value(6)
    rerun(at)
    assert at.data_editor[0].value["logit"].tolist() == random_logits(8, 6).tolist()


def test_guided_experiment_button_sets_up_its_example():
    at = open_page(PAGE)
    at.selectbox(key="sl_experiment").set_value("ties")
    rerun(at)
    next(b for b in at.button if b.label == EN["try_setup"]).click()
    rerun(at)
    assert at.segmented_control(key="preset").value == "tied"
    assert at.slider(key="k").value == 1 and at.select_slider(key="T").value == 0.001
    kind, banner = verdict(at)
    assert kind == "no" and ref("tails", 1) in banner


# What the lesson text claims about each guided experiment, checked against the maths.
CLAIMS = {
    "temperature": (False, "several", 6),
    "limit": (False, "several", 6),
    "ties": (False, "tie", 2),
    "top_k": (True, "top_k_one", 1),
    "top_p": (True, "top_p_threshold", 1),
    "order_temperature": (False, "several_top_p", 5),
    "order_filters": (True, "top_p_threshold", 1),
    "min_keep": (False, "min_tokens_to_keep", 3),
}


def _config(setup, **changes):
    values = {"T": 1.0, "k": 0, "p": 1.0, "min_keep": 1, **setup, **changes}
    return SamplingConfig(values["T"], values["k"], values["p"], values["min_keep"])


@pytest.mark.parametrize("name", list(EXAMPLES["experiments"]))
def test_each_guided_experiment_starts_where_its_text_says(name):
    setup = EXAMPLES["experiments"][name]
    logits = EXAMPLES["presets"][setup["preset"]]["logits"]
    same, reason = greedy_equivalence(logits, _config(setup))
    assert (same, reason.code, apply(logits, _config(setup)).support.size) == CLAIMS[name]
    for lang in ("en", "zh"):
        assert f"try-{name}" in parse((LESSONS / lang / f"{PAGE}.md").read_text("utf-8")).sections


def test_the_numbers_quoted_in_the_lesson():
    peaked, flat = EXAMPLES["presets"]["peaked"]["logits"], EXAMPLES["presets"]["flat"]["logits"]
    # T -> 0+: still 6 tokens at T = 0.01 (next one 1.4e-87), underflow between 0.003 and 0.0025.
    probs = apply(peaked, SamplingConfig(0.01)).probs
    assert np.sort(probs)[-2] == pytest.approx(1.38e-87, rel=1e-2)
    assert apply(peaked, SamplingConfig(0.003)).support.size > 1
    assert greedy_equivalence(peaked, SamplingConfig(0.0025))[1].code == "temperature_underflow"
    # top-k = 1 on the flat example: 0.242 becomes 1; k = 2 keeps mass 0.461.
    assert apply(flat, SamplingConfig()).probs[0] == pytest.approx(0.242, abs=5e-4)
    assert apply(flat, SamplingConfig(top_k=2)).kept_mass[2] == pytest.approx(0.461, abs=5e-4)
    # top-k first: 0.242 / 0.461 = 0.525; top-p alone keeps 3; top-p first then top-k keeps 2.
    assert apply(flat, SamplingConfig(top_k=2)).probs[0] == pytest.approx(0.525, abs=5e-4)
    assert apply(flat, SamplingConfig(top_p=0.5)).support.size == 3
    order = ("top_p", "temperature", "top_k")
    assert apply(flat, SamplingConfig(top_k=2, top_p=0.5, order=order)).support.size == 2
    # Peaked: top probability 0.771; T = 2 lowers it to 0.472; top-p first keeps 3 of 5.
    assert apply(peaked, SamplingConfig()).probs[0] == pytest.approx(0.771, abs=5e-4)
    assert apply(peaked, SamplingConfig(2.0)).probs[0] == pytest.approx(0.472, abs=5e-4)
    assert apply(peaked, SamplingConfig(2.0, top_p=0.9, order=order)).support.size == 3


def _fields(template):
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_verdict_reason_is_translated_with_the_same_parameters(lang):
    reasons = TOML[lang]["reasons"]
    assert set(reasons) == set(REASONS_EN)
    for code, template in REASONS_EN.items():
        assert _fields(reasons[code]) == _fields(template), code


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chart_text_covers_every_figure_string(lang):
    chart = TOML[lang]["chart"]
    assert set(chart) == {key for keys in KEYS.values() for key in keys}
    assert all(_fields(chart[key]) == _fields(EN["chart"][key]) for key in chart)
    assert all(
        key in parse((LESSONS / lang / f"{PAGE}.md").read_text("utf-8")).sections
        for key in TOML[lang]["tabs"]
    )


def test_preset_tokens_match_their_logits_in_both_languages():
    for preset in EXAMPLES["presets"].values():
        assert all(len(preset["tokens"][lang]) == len(preset["logits"]) for lang in ("en", "zh"))
    assert all(len(words) == 12 == len(set(words)) for words in EXAMPLES["random_tokens"].values())


def test_an_unedited_example_follows_the_language_but_edits_stay():
    at = open_page(PAGE)
    at.session_state["lang"] = "zh"  # what the sidebar switch in app.py does
    rerun(at)
    assert at.data_editor[0].value["token"].tolist() == EXAMPLES["presets"]["peaked"]["tokens"]["zh"]
    assert TOML["zh"]["verdict_no"] in verdict(at)[1]
    edited = open_page(PAGE, query={"logits": "mat:4,floor:2,sofa:1"})
    edited.session_state["lang"] = "zh"
    rerun(edited)
    assert edited.data_editor[0].value["token"].tolist() == ["mat", "floor", "sofa"]
