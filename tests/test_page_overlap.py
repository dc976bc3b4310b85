"""The overlap lesson under AppTest.

Streamlit 1.67's AppTest runs only the page after the first run, so every scenario opens
a fresh AppTest with its URL set before the first run (see support/apptest.py).
Interactions (a click, a new value) are then checked on what the *same* run shows, and
the one claim about state kept across reruns (Monte Carlo results) is asserted directly:
if state were lost between runs, those tests fail instead of passing silently.
"""

import json
import tomllib

import pytest

from specdec_core.course import pairs
from support.apptest import ROOT, open_page, rerun, shared_link

ABC = {"ov_preset": "abc"}


def _metric(at, label):
    values = [m.value for m in at.metric if m.label == label]
    assert len(values) == 1, [m.label for m in at.metric]
    return values[0]


def _numbers(at):
    """The 'every number' table (the other dataframes are the editor and the draft table)."""
    tables = [d.value for d in at.dataframe if "output" in d.value.columns or "输出" in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def _editor(at):
    """The p/q table editor (its columns keep their plain names; only their labels are translated)."""
    tables = [d.value for d in at.dataframe if list(d.value.columns) == ["token", "p", "q"]]
    assert len(tables) == 1
    return tables[0]


def _html(at):
    return " ".join(h.proto.body for h in at.get("html"))


@pytest.mark.parametrize(
    ("lang", "title", "r_label"),
    [("en", "Overlap and residual", "R — rejection mass"), ("zh", "重叠与残差", "R：拒绝质量")],
)
def test_loads_in_both_languages(lang, title, r_label):
    at = open_page("overlap", lang=lang)
    assert at.title[0].value == title
    assert _metric(at, r_label) == "0.400"
    quiz = tomllib.loads((ROOT / "lessons" / lang / "overlap.toml").read_text("utf-8"))["quiz"]
    assert len(at.main.radio) == 1 + len(quiz)  # the variant picker and the quiz questions
    assert (lang == "zh") == ("投机采样" in " ".join(m.value for m in at.markdown))


SECTION_HEADS = (
    "bars_header",
    "residual_header",
    "proof_header",
    "alpha_t_header",
    "broken_header",
    "mc_header",
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_section_heading_opens_its_own_text(lang):
    """A section's heading and its lesson text are one Markdown element (one message a rerun,
    not two): an h2 with the page's heading, then the section's text, and no bare heading."""
    at = open_page("overlap", lang=lang)
    heads = tomllib.loads((ROOT / "lessons" / lang / "overlap.toml").read_text("utf-8"))
    for key in SECTION_HEADS:
        opening = f"## {heads[key]}\n\n"
        sections = [m.value for m in at.markdown if m.value.startswith(opening)]
        assert len(sections) == 1, key
        assert len(sections[0]) > len(opening) + 40  # the section's text follows its heading
    assert not [h.value for h in at.header if h.value in {heads[k] for k in SECTION_HEADS}]


def test_abc_default_shows_r_acceptance_and_residual():
    at = open_page("overlap")
    assert _metric(at, "R — rejection mass") == "0.400"
    assert _metric(at, "Acceptance rate") == "0.600"
    table = _numbers(at)
    assert table["residual r"].tolist() == ["0.2500", "0.7500", "0.0000"]
    assert table["a(x) = min(1, p/q)"].tolist() == ["1.0000", "1.0000", "0.5000"]
    assert table["q·α"].tolist() == table["min(p, q)"].tolist() == ["0.1000", "0.1000", "0.4000"]
    assert table["output"].tolist() == table["p (target)"].tolist()
    assert _metric(at, "max |output − p|") == "0"


def test_equal_preset_needs_no_residual_and_shows_no_nan():
    at = open_page("overlap", query={"ov_preset": "equal"})  # the preset alone loads its p and q
    assert _metric(at, "R — rejection mass") == "0.000"
    assert _metric(at, "Acceptance rate") == "1.000"
    table = _numbers(at)
    assert "residual r" not in table.columns
    assert not table.isna().any().any() and "nan" not in table.to_string().lower()
    assert any("R = 0" in i.value for i in at.info)
    assert "never computed" in _html(at)


def test_choosing_a_preset_in_the_selectbox_loads_it():
    at = open_page("overlap")
    at.selectbox(key="ov_preset").set_value("disjoint")
    rerun(at)
    assert _metric(at, "Acceptance rate") == "0.000"
    assert _metric(at, "R — rejection mass") == "1.000"
    assert "work is wasted" in _html(at)
    assert _editor(at)["token"].tolist() == ["cat", "dog", "car", "bus"]
    assert shared_link(at)["ov_preset"] == "disjoint" and shared_link(at)["ov_table"] == ""


@pytest.mark.parametrize("preset", pairs.preset_names())
def test_every_example_loads_and_is_exact(preset):
    at = open_page("overlap", query={"ov_preset": preset})
    assert not at.error and not at.warning
    assert _numbers(at)["output"].tolist() == _numbers(at)["p (target)"].tolist()


@pytest.mark.parametrize(
    ("preset", "phrase", "token"),
    [
        ("q_zero", "never proposes it", "C"),
        ("p_zero", "every proposal of it is rejected", "C"),
        ("edge", "never proposes it", "C"),
        ("edge", "every proposal of it is rejected", "D"),
    ],
)
def test_edge_case_presets_name_their_token(preset, phrase, token):
    html = _html(open_page("overlap", query={"ov_preset": preset}))
    assert phrase in html and f">{token}</span>" in html


def test_random_pair_follows_its_seed():
    one = open_page("overlap", query={"ov_preset": "random", "ov_vocab_seed": "1"})
    two = open_page("overlap", query={"ov_preset": "random", "ov_vocab_seed": "2"})
    p1, p2 = _editor(one)["p"].tolist(), _editor(two)["p"].tolist()
    assert len(p1) == 20 and p1 != p2
    assert _metric(one, "R — rejection mass") != _metric(two, "R — rejection mass")
    two.number_input(key="ov_vocab_seed").set_value(1)
    rerun(two)
    assert _editor(two)["p"].tolist() == p1
    assert shared_link(two)["ov_vocab_seed"] == "1" and shared_link(two)["ov_table"] == ""


def test_edited_pair_from_the_url_with_an_html_token():
    rows = [["x", 0.5, 0.9], ["<script>", 0.5, 0.1]]
    at = open_page("overlap", query={"ov_table": json.dumps(rows)})
    assert _metric(at, "R — rejection mass") == "0.400"
    assert _numbers(at)["residual r"].tolist() == ["0.0000", "1.0000"]
    html = _html(at)
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert _editor(at).values.tolist() == rows and json.loads(shared_link(at)["ov_table"]) == rows
    assert any("differs from the example" in i.value for i in at.info)
    at.button(key="ov_reset_table").click()
    rerun(at)
    assert shared_link(at)["ov_table"] == "" and _metric(at, "R — rejection mass") == "0.400"
    assert _editor(at)["token"].tolist() == ["A", "B", "C"]


@pytest.mark.parametrize(
    ("lang", "says"), [("en", "Column p adds up to 4, not 1"), ("zh", "p 列之和为 4，不是 1")]
)
def test_unnormalised_pair_is_explained_in_the_learners_language_and_normalises(lang, says):
    rows = [["a", 1, 0.2], ["b", 1, 0.3], ["c", 2, 0.5]]
    at = open_page("overlap", lang=lang, query={"ov_table": json.dumps(rows)})
    assert len(at.error) == 1 and says in at.error[0].value
    assert not at.metric
    at.button(key="ov_normalise").click()
    rerun(at)
    assert not at.error
    assert [row[1] for row in json.loads(shared_link(at)["ov_table"])] == [0.25, 0.25, 0.5]
    assert _metric(at, "R — rejection mass" if lang == "en" else "R：拒绝质量") == "0.050"


def test_negative_and_blank_entries_are_explained():
    at = open_page("overlap", query={"ov_table": json.dumps([["a", 1.5, 0.5], ["b", -0.5, 0.5]])})
    assert "Row 2: p = -0.5 is negative" in at.error[0].value
    assert "ov_normalise" not in [b.key for b in at.button]  # scaling cannot fix a negative
    at = open_page("overlap", lang="zh", query={"ov_table": json.dumps([["a", 1.0, None]])})
    assert "第 1 行的 q 列没有填数字" in at.error[0].value


def test_bad_url_values_fall_back_with_a_warning():
    at = open_page("overlap", query={"ov_n": "123", "ov_table": '[["a",0.5,"abc"]]', "ov_variant": "magic"})
    warning = at.warning[0].value
    assert "ov_n" in warning and "ov_table" in warning and "ov_variant" in warning
    assert _metric(at, "R — rejection mass") == "0.400"
    lengths = open_page("overlap", query={"ov_table": '[["a",0.5,0.5],["b",0.5]]'})
    assert "ov_table" in lengths.warning[0].value and _metric(lengths, "R — rejection mass") == "0.400"


def test_variant_and_draft_law_controls_change_their_numbers():
    at = open_page("overlap")
    assert _metric(at, "Total-variation distance from p") == "0.160"
    at.radio(key="ov_variant").set_value("argmax_match")
    rerun(at)
    assert _metric(at, "Total-variation distance from p") == "0.060"
    at.radio(key="ov_variant").set_value("draft_mismatch")
    rerun(at)
    assert _metric(at, "Total-variation distance from p") == "0.100"
    at.selectbox(key="ov_draft").set_value("sharpened")
    rerun(at)
    assert (
        _metric(at, "Total-variation distance from p") == _metric(at, "draft reports the wrong q") != "0.100"
    )
    assert float(_metric(at, "draft reports the wrong q")) > 0
    assert float(_metric(at, "resample from p")) > 0 and float(_metric(at, "accept only the argmax")) > 0
    assert _metric(at, "exact rule") == "0.000"


def test_monte_carlo_exact_rule_fits_p_and_results_survive_unrelated_reruns():
    at = open_page("overlap", query={"ov_n": "100000", "ov_mc_seed": "3"})
    assert not [m for m in at.metric if m.label == "p-value"]
    at.button(key="ov_mc_run").click()
    rerun(at)
    p_value = _metric(at, "p-value")
    assert float(p_value) > 1e-3
    assert "consistent with p" in _html(at)
    right = tomllib.loads((ROOT / "lessons" / "en" / "overlap.toml").read_text("utf-8"))["quiz"][0]["answer"]
    at.radio(key="quiz_overlap_0").set_value(right)  # an unrelated control
    rerun(at)
    assert _metric(at, "p-value") == p_value and at.success
    at.selectbox(key="ov_preset").set_value("p_zero")  # p and q change: old numbers must go
    rerun(at)
    assert not [m for m in at.metric if m.label == "p-value"]
    assert any("cleared" in i.value for i in at.info)


@pytest.mark.parametrize("law", ["resample_from_p", "argmax_match", "draft_mismatch"])
def test_monte_carlo_broken_variants_fail_the_chi_square(law):
    at = open_page("overlap", query={"ov_n": "1000000", "ov_mc_law": law})
    at.button(key="ov_mc_run").click()
    rerun(at)
    assert _metric(at, "p-value") == "0"
    assert "the output is not p" in _html(at)


def test_a_shared_url_restores_every_control():
    at = open_page("overlap")
    at.selectbox(key="ov_preset").set_value("p_zero")
    rerun(at)
    at.radio(key="ov_variant").set_value("argmax_match")
    at.selectbox(key="ov_draft").set_value("top_k")
    at.select_slider(key="ov_n").set_value(1000)
    at.number_input(key="ov_mc_seed").set_value(7)
    at.selectbox(key="ov_mc_law").set_value("draft_mismatch")
    rerun(at)
    link = shared_link(at)
    assert link["ov_preset"] == "p_zero" and link["ov_table"] == "" and link["ov_n"] == "1000"
    shared = open_page("overlap", lang=link.pop("lang"), query=link)
    assert not shared.warning
    assert shared.selectbox(key="ov_preset").value == "p_zero"
    assert _editor(shared).values.tolist() == [["A", 0.5, 0.4], ["B", 0.5, 0.3], ["C", 0.0, 0.3]]
    assert shared.radio(key="ov_variant").value == "argmax_match"
    assert shared.selectbox(key="ov_draft").value == "top_k"
    assert shared.select_slider(key="ov_n").value == 1000
    assert shared.number_input(key="ov_mc_seed").value == 7
    assert shared.selectbox(key="ov_mc_law").value == "draft_mismatch"
    assert _metric(shared, "R — rejection mass") == "0.300" == _metric(at, "R — rejection mass")


def test_quiz_gives_feedback():
    at = open_page("overlap", lang="zh")
    at.radio(key="quiz_overlap_1").set_value(1)
    rerun(at)
    assert "还差一点" in at.error[0].value and "拒绝质量" in at.error[0].value


def test_alpha_against_temperature_follows_the_chosen_pair_and_t():
    at = open_page("overlap", query={"ov_T": "0.5"})  # A/B/C
    assert at.select_slider(key="ov_T").value == 0.5
    assert _metric(at, "α at T = 0.5") == "0.4747"
    caption = " ".join(c.value for c in at.caption)
    assert "α → 0.5 as T → 0⁺" in caption and "→ 1 as T → ∞" in caption
    at.select_slider(key="ov_T").set_value(10.0)
    rerun(at)
    assert _metric(at, "α at T = 10") == "0.9599"
    other = open_page("overlap", lang="zh", query={"ov_preset": "p_zero", "ov_T": "1"})
    assert _metric(other, "T = 1 时的 α") == "0.7000" and _metric(other, "接受率") == "0.700"
    assert "T → ∞ 时 α → 0.667" in " ".join(c.value for c in other.caption)


def test_a_bad_temperature_in_the_url_falls_back_with_a_warning():
    at = open_page("overlap", query={"ov_T": "1000"})
    assert at.select_slider(key="ov_T").value == 1.0
    assert "ov_T" in at.warning[0].value
