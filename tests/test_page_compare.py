"""The Compare page under AppTest: bad links and empty selections say why, a saved grid shows
with no model loaded, and (slow) a small grid on the real bundled model fills heatmaps."""

from __future__ import annotations

import pytest

from specdec_core.live.compare import GridResult, GridSpec, grid_from_json, grid_json
from specdec_core.live.compare_run import GridRun
from specdec_core.live.settings import DecodeSettings
from support.apptest import open_page, rerun
from tests.test_live_compare import TinyModels

SPEC_BENCH = ["conversation", "translation", "summarisation", "qa", "math", "rag"]  # the default categories


@pytest.mark.parametrize(("lang", "title"), [("en", "Compare drafts"), ("zh", "比较草稿模型")])
def test_page_opens_with_the_default_grid_and_its_estimate(lang, title):
    at = open_page("compare", lang)
    assert at.title[0].value == title
    assert at.multiselect(key="cmp_targets").value == ["bundled"]
    assert at.multiselect(key="cmp_cats").value == SPEC_BENCH
    assert not at.error and at.info


def test_an_unknown_category_in_the_link_is_reset_with_a_message():
    at = open_page("compare", query={"cmp_cats": "copy,poetry"})
    assert any("task category" in w.value for w in at.warning)
    assert at.multiselect(key="cmp_cats").value == SPEC_BENCH


def test_an_empty_selection_says_what_to_choose():
    at = open_page("compare", state={"cmp_drafts": []})
    assert any("at least one draft" in e.value for e in at.error)


def test_a_classroom_caps_the_grid(monkeypatch):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_MAX_GRID_RUNS", "5")
    at = open_page("compare")
    assert any("at most 5" in e.value for e in at.error)


@pytest.fixture(scope="module")
def saved(tiny_hf_folders):
    spec = GridSpec(
        ("tiny",), ("ngram", "small"), ("copy", "qa"), settings=DecodeSettings(gamma=3, max_new_tokens=8)
    )
    run = GridRun(spec, TinyModels(tiny_hf_folders))
    list(run)
    return grid_json(GridResult(spec, tuple(run.measured), complete=True))


def test_a_saved_grid_shows_its_heatmap_winners_and_table_without_models(saved):
    spec, runs, complete = grid_from_json(saved)
    at = open_page("compare", state={"_cmp_result": (spec, runs, complete, {})})
    assert len(at.get("plotly_chart")) == 1
    assert any("equals its target's own" in m.value for m in at.success)
    table = at.dataframe[0].value
    assert list(table["draft"]) == ["ngram", "ngram", "small", "small"]
    assert any("copying" in m.value and "by τ" in m.value for m in at.markdown)
    at.segmented_control(key="cmp_metric").set_value("projected")
    rerun(at)
    assert any("Projection, not a measurement" in c.value for c in at.caption)


@pytest.mark.slow
def test_a_small_grid_runs_on_the_bundled_model():
    at = open_page(
        "compare", state={"cmp_drafts": ["ngram"], "cmp_cats": ["copy"], "cmp_max": 8}, timeout=300
    )
    at.button(key="cmp_run").click()
    rerun(at)
    _, runs, complete, skipped = at.session_state["_cmp_result"]
    assert complete and not skipped and len(runs) == 2
    assert len(at.get("plotly_chart")) == 1
    assert any("equals its target's own" in m.value for m in at.success)
