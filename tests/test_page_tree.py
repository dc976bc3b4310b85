"""The probability-tree page under AppTest.

Streamlit 1.67's AppTest runs app.py only on the first run; later runs execute the page
alone. So every scenario opens a fresh AppTest with its language and URL set before the
first run (support/apptest.open_page), and the page sets itself up. Where a test
interacts (clicks, slider moves), it asserts a change that only happens if the page's own
state carried over (a tally that grows 1 → 2, a table that keeps an edit), and the URL
round-trip tests open a *fresh* AppTest from the mirrored URL, so no result can come
from state left behind by an earlier run.
"""

import json
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from specdec_core.course import pairs
from support.apptest import open_page, rerun, shared_link

PAGE = "tree"


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _leaf_table(at):
    """The page's 'sum of leaves = p(x)' table (the other data frame is the p/q editor)."""
    return at.dataframe[1].value


def _url(at) -> dict[str, str]:
    return {k: v if isinstance(v, str) else v[0] for k, v in shared_link(at).items()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_in_both_languages(lang):
    at = open_page(PAGE, lang=lang)
    assert at.title[0].value == ("Probability tree" if lang == "en" else "概率树")
    text = " ".join(m.value for m in at.markdown)
    assert ("概率树" in text) == (lang == "zh") and "$\\mathcal{D} = \\{x : p(x) > q(x)\\}$" in text
    quizzes = [r.key for r in at.radio if r.key.startswith("quiz_")]
    items = tomllib.loads((LESSONS / lang / "tree.toml").read_text("utf-8"))["quiz"]
    assert quizzes == [f"quiz_tree_{i}" for i in range(len(items))]
    assert at.selectbox(key="tree_preset").value == "abc"


def test_abc_leaves_sum_to_p_and_to_one():
    at = open_page(PAGE)
    m = _metrics(at)
    assert (m["Rejection mass R"], m["Acceptance rate"], m["Deficit set 𝒟"], m["Surplus set 𝒮"]) == (
        "0.4",
        "0.6",
        "2",
        "1",
    )
    table = _leaf_table(at)
    assert list(table.iloc[:, 0]) == ["A", "B", "C"]
    np.testing.assert_allclose(table.iloc[:, 1], [0.1, 0.1, 0.4], atol=1e-15)  # kept when proposed
    np.testing.assert_allclose(table.iloc[:, 2], [0.1, 0.3, 0.0], atol=1e-15)  # redrawn after rejections
    np.testing.assert_allclose(table.iloc[:, 3], [0.2, 0.4, 0.4], atol=1e-15)  # sum of leaves
    np.testing.assert_allclose(table.iloc[:, 4], [0.2, 0.4, 0.4], atol=0)  # p(x)
    assert abs(table.iloc[:, 3].sum() - 1) < 1e-12
    assert "**𝒟** (p > q): **A**, **B**" in " ".join(m.value for m in at.markdown)


def test_equal_pair_has_no_reject_branch():
    at = open_page(PAGE, query={"tree_preset": "equal"})
    assert _metrics(at)["Rejection mass R"] == "0"
    table = _leaf_table(at)
    assert not table.iloc[:, 2].any()  # nothing arrives through a redraw
    np.testing.assert_allclose(table.iloc[:, 1], table.iloc[:, 4], atol=0)
    assert any("R = 0 here" in i.value for i in at.info)


def test_preset_control_changes_the_numbers():
    at = open_page(PAGE)
    at.selectbox(key="tree_preset").set_value("disjoint")
    rerun(at)
    m = _metrics(at)
    assert (m["Rejection mass R"], m["Acceptance rate"]) == ("1", "0")
    assert list(_leaf_table(at).iloc[:, 0]) == ["cat", "dog", "car", "bus"]
    assert _url(at)["tree_preset"] == "disjoint"


@pytest.mark.parametrize("preset", pairs.preset_names())
def test_every_example_loads_and_its_leaves_sum_to_p(preset):
    at = open_page(PAGE, query={"tree_preset": preset})
    assert not at.error and not at.warning
    table = _leaf_table(at)
    np.testing.assert_allclose(table.iloc[:, 3], table.iloc[:, 4], atol=1e-12)
    assert abs(table.iloc[:, 4].sum() - 1) < 1e-12


def test_top_n_collapses_thirty_tokens_into_n_plus_other():
    at = open_page(PAGE, query={"tree_preset": "random", "tree_top_n": "4"})
    assert at.dataframe[0].value.shape[0] == 30  # the editor holds every real token
    table = _leaf_table(at)
    assert len(table) == 5 and table.iloc[-1, 0] == "other"
    assert abs(table.iloc[:, 3].sum() - 1) < 1e-12 and abs(table.iloc[:, 4].sum() - 1) < 1e-12
    np.testing.assert_allclose(table.iloc[:, 3], table.iloc[:, 4], atol=1e-12)
    at.slider(key="tree_top_n").set_value(7)
    rerun(at)
    table = _leaf_table(at)
    assert len(table) == 8 and table.iloc[-1, 0] == "other"
    assert abs(table.iloc[:, 3].sum() - 1) < 1e-12
    assert _url(at)["tree_top_n"] == "7"


def test_top_n_other_is_translated():
    at = open_page(PAGE, lang="zh", query={"tree_preset": "random", "tree_top_n": "2"})
    assert _leaf_table(at).iloc[-1, 0] == "其他"


def test_example_seed_changes_the_random_vocabulary():
    at = open_page(PAGE, query={"tree_preset": "random"})
    before = at.dataframe[0].value["p"].tolist()
    at.number_input(key="tree_vocab_seed").set_value(5)
    rerun(at)
    after = at.dataframe[0].value["p"].tolist()
    assert before != after and abs(sum(after) - 1) < 1e-12
    assert _url(at)["tree_vocab_seed"] == "5" and _url(at)["tree_table"] == ""


def test_sample_one_path_with_a_fixed_seed_updates_the_tally():
    at = open_page(PAGE, query={"tree_seed": "7"})
    assert _metrics(at)["Paths sampled"] == "0"
    at.button(key="tree_sample_one").click()
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "1"
    first = at.success[0].value
    assert first.startswith("① The draft proposes") and "Emitted:" in first
    at.button(key="tree_sample_one").click()
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "2"  # only possible if the run survived the rerun
    at.button(key="tree_sample_many").click()
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "102"
    at.button(key="tree_reset_tally").click()
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "0"
    at.button(key="tree_sample_many").click()
    rerun(at)
    at.number_input(key="tree_seed").set_value(8)  # a new seed starts a new sequence
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "0" and _url(at)["tree_seed"] == "8"

    again = open_page(PAGE, query={"tree_seed": "7"})  # the same seed replays the same path
    again.button(key="tree_sample_one").click()
    rerun(again)
    assert again.success[0].value == first


def test_sampled_shares_approach_p():
    at = open_page(PAGE, query={"tree_seed": "3"})
    for _ in range(5):
        at.button(key="tree_sample_many").click()
        rerun(at)
    m = _metrics(at)
    assert m["Paths sampled"] == "500"
    assert float(m["Distance to p"]) < 0.06  # about 0.025 is typical after 500 paths


def test_sampling_seed_changes_the_paths():
    paths = set()
    for seed in ("1", "2"):
        at = open_page(PAGE, query={"tree_seed": seed})
        at.button(key="tree_sample_many").click()
        rerun(at)
        paths.add(_metrics(at)["Distance to p"])
    assert len(paths) == 2


def test_shared_url_restores_the_controls():
    at = open_page(PAGE)
    at.selectbox(key="tree_preset").set_value("random")
    rerun(at)
    at.number_input(key="tree_vocab_seed").set_value(9)
    rerun(at)
    at.slider(key="tree_top_n").set_value(3)
    rerun(at)
    at.number_input(key="tree_seed").set_value(1234)
    rerun(at)
    shared = _url(at)
    assert shared["tree_preset"] == "random" and shared["tree_top_n"] == "3" and shared["tree_seed"] == "1234"

    fresh = open_page(PAGE, query={k: v for k, v in shared.items() if k != "lang"})
    assert fresh.selectbox(key="tree_preset").value == "random"
    assert fresh.number_input(key="tree_vocab_seed").value == 9
    assert fresh.slider(key="tree_top_n").value == 3
    assert fresh.number_input(key="tree_seed").value == 1234
    assert _leaf_table(fresh).equals(_leaf_table(at))
    assert _metrics(fresh)["Rejection mass R"] == _metrics(at)["Rejection mass R"]


def test_url_table_restores_an_edited_pair():
    rows = [["x", 0.5, 0.25], ["y", 0.25, 0.25], ["z", 0.25, 0.5]]
    at = open_page(PAGE, query={"tree_table": json.dumps(rows)})
    assert at.dataframe[0].value.values.tolist() == rows
    assert _metrics(at)["Rejection mass R"] == "0.25"
    assert any("differs from the example" in i.value for i in at.info)
    assert json.loads(_url(at)["tree_table"]) == rows
    at.button(key="tree_reset_table").click()
    rerun(at)
    assert _url(at)["tree_table"] == "" and _metrics(at)["Rejection mass R"] == "0.4"


def test_bad_url_values_fall_back_with_a_warning():
    at = open_page(PAGE, query={"tree_top_n": "99", "tree_preset": "nope", "tree_table": "{broken"})
    assert at.warning and all(k in at.warning[0].value for k in ("tree_top_n", "tree_preset", "tree_table"))
    assert at.slider(key="tree_top_n").value == 6 and at.selectbox(key="tree_preset").value == "abc"
    assert _metrics(at)["Rejection mass R"] == "0.4"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_invalid_table_shows_a_clear_error_and_can_be_normalised(lang):
    at = open_page(PAGE, lang=lang, query={"tree_table": json.dumps([["a", 0.5, 0.2], ["b", 0.4, 0.2]])})
    assert not at.metric and len(at.error) == 1
    assert ("0.9" in at.error[0].value) and (("不是 1" in at.error[0].value) == (lang == "zh"))
    at.button(key="tree_normalise").click()
    rerun(at)
    assert not at.error
    table = _leaf_table(at)
    np.testing.assert_allclose(table.iloc[:, 4], [5 / 9, 4 / 9], atol=1e-15)
    np.testing.assert_allclose(table.iloc[:, 3], table.iloc[:, 4], atol=1e-15)


def test_negative_and_blank_entries_are_explained():
    at = open_page(PAGE, query={"tree_table": json.dumps([["a", 1.5, 0.5], ["b", -0.5, 0.5]])})
    assert "Row 2: p = -0.5 is negative" in at.error[0].value
    assert "tree_normalise" not in [b.key for b in at.button]  # scaling cannot fix a negative
    at = open_page(PAGE, query={"tree_table": json.dumps([["a", 1.0, None]])})
    assert "Row 1 has no number in column q" in at.error[0].value


def test_token_labels_are_shown_literally():
    rows = [["<script>", 0.5, 0.25], ["*x*", 0.25, 0.25], ["$1", 0.25, 0.5]]
    at = open_page(PAGE, query={"tree_table": json.dumps(rows)})
    line = next(m.value for m in at.markdown if m.value.startswith("**𝒟**"))
    assert "\\<script\\>" in line and "\\$1" in line
    at.button(key="tree_sample_many").click()
    rerun(at)
    assert _metrics(at)["Paths sampled"] == "100"
