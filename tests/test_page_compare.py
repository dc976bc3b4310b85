"""The Compare page under AppTest: bad links and empty selections say why, a saved grid shows
with no model loaded, and (slow) a small grid on the real bundled model fills heatmaps."""

from __future__ import annotations

import time

import pytest

from pages.common.models import run_service
from specdec_core.live.compare import GridSpec
from specdec_core.live.compare_run import GridRun
from specdec_core.live.compare_saved import GridResult, example, grid_from_json, grid_json
from specdec_core.live.settings import DecodeSettings
from specdec_core.viz.escape import md
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
    at = open_page("compare", state={"_cmp_result": grid_from_json(saved)})
    assert len(at.get("plotly_chart")) == 1
    assert any("equals its target's own" in m.value for m in at.success)
    table = at.dataframe[0].value
    assert list(table["draft"]) == ["ngram", "ngram", "small", "small"]
    assert {"spec_bench_speedup", "c_estimate", "c_measured", "tokens_per_s"} <= set(table.columns)
    assert (table["c_projection"] == table["c_estimate"]).all()  # each draft's own c by default
    assert any("copying" in m.value and "by τ" in m.value for m in at.markdown)
    code = at.code[0].value
    assert code.startswith("| target | draft | task | τ |")
    assert len(code.strip().splitlines()) == 2 + len(table)
    assert any("load its question.jsonl" in c.value for c in at.caption)  # no answer files without questions
    at.segmented_control(key="cmp_metric").set_value("projected")
    rerun(at)
    notes = [c.value for c in at.caption if "Projection, not a measurement" in c.value]
    assert notes and all("each draft's own" in n for n in notes)
    at.selectbox(key="cmp_c").set_value("0.1")
    rerun(at)
    assert any("c = 0.1 for every draft: an override" in c.value for c in at.caption)
    assert (at.dataframe[0].value["c_projection"] == "0.1000").all()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_opens_on_the_shipped_example_grid_with_its_label(lang):
    shipped = example()
    assert shipped is not None and shipped.label.keys() >= {"machine", "date", "app_version"}
    assert set(shipped.spec.targets) == {"bundled", "gemma"} and len(shipped.spec.categories) == 8
    at = open_page("compare", lang)
    assert any(
        md(shipped.label["date"]) in i.value and md(shipped.label["machine"]) in i.value for i in at.info
    )
    assert len(at.get("plotly_chart")) == 2
    assert not at.exception


def test_the_estimate_names_its_pace_and_the_models_still_to_load():
    at = open_page("compare")
    line = next(c.value for c in at.caption if "generations" in c.value)
    assert "24 generations of up to 32 tokens" in line
    assert "a first guess" in line or "timed at load" in line or "last grid runs" in line
    assert "must load" in line or "timed at load" in line or "last grid runs" in line


@pytest.mark.slow
def test_a_small_grid_runs_in_the_service_while_the_page_stays_usable():
    at = open_page(
        "compare", state={"cmp_drafts": ["ngram"], "cmp_cats": ["copy"], "cmp_max": 8}, timeout=300
    )
    at.button(key="cmp_run").click()
    rerun(at, settle=False)
    assert at.button(key="cmp_run").disabled and not at.button(key="cmp_stop").disabled
    at.segmented_control(key="cmp_metric").set_value("acceptance")  # the page answers meanwhile
    rerun(at)  # until the grid has ended (each page run reads its snapshot once)
    result = at.session_state["_cmp_result"]
    assert result.complete and not result.skipped and len(result.runs) == 2
    assert len(at.get("plotly_chart")) == 1 and not at.button(key="cmp_run").disabled
    assert any("equals its target's own" in m.value for m in at.success)


@pytest.mark.slow
def test_stop_ends_a_grid_and_keeps_its_finished_runs():
    at = open_page(
        "compare",
        state={"cmp_drafts": ["ngram", "bf16"], "cmp_cats": ["copy", "code", "qa"], "cmp_max": 32},
        timeout=300,
    )
    at.button(key="cmp_run").click()
    rerun(at, settle=False)
    service, ticket = run_service(), at.session_state["_cmp_ticket"]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # until at least one generation finished
        snap = service.snapshot(ticket)
        if snap.result is not None and snap.result.runs:
            break
        time.sleep(0.2)
    assert not snap.ended_already  # 9 generations of 32 tokens outlast the first
    at.button(key="cmp_stop").click()
    rerun(at)
    assert "_cmp_ticket" not in at.session_state
    result = at.session_state["_cmp_result"]
    assert not result.complete and 1 <= len(result.runs) < 9
    assert any("stopped" in w.value for w in at.warning)
