"""The comparison workbench's core: grid checks, the cells' figures recomputed from real runs on
tiny transformers, the shared cache, a stopped grid, and saving and loading a grid."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest

from specdec_core.engine import generate
from specdec_core.live.classroom import Classroom
from specdec_core.live.compare import (
    BASELINE,
    CATEGORIES,
    Cell,
    GridError,
    GridSpec,
    Measured,
    cells,
    projected_speedup,
    prompts,
    ranking,
)
from specdec_core.live.compare_run import GridRun
from specdec_core.live.compare_saved import GridResult, grid_from_json, grid_json
from specdec_core.live.compare_tables import CSV_COLUMNS, cells_csv, summary
from specdec_core.live.model_choices import ChoiceError
from specdec_core.live.runs import encode_text
from specdec_core.live.settings import DecodeSettings
from specdec_core.models import HFCausalLM, NGramDraft
from specdec_core.models.catalog import parse_draft_key

GREEDY = DecodeSettings(gamma=3, max_new_tokens=10)


class TinyModels:
    """Real tiny random Llamas (tests/conftest.py) as a grid's model source."""

    def __init__(self, folders):
        self.folders = folders
        self.built = {}

    def target(self, key):
        return self.built.setdefault(key, HFCausalLM.load(self.folders["target"], device="cpu"))

    def draft(self, target_key, key, target):
        if key == "ngram":
            return NGramDraft.for_model(target)
        if key == "small":
            return self.built.setdefault(key, HFCausalLM.load(self.folders["draft"], device="cpu"))
        raise ChoiceError(f"{key} does not fit {target_key}", "needs_transformer")


@pytest.fixture(scope="module")
def models(tiny_hf_folders):
    return TinyModels(tiny_hf_folders)


def spec(**kw):
    base = dict(targets=("tiny",), drafts=("ngram", "small"), categories=("copy", "qa"), settings=GREEDY)
    return GridSpec(**{**base, **kw})


def test_every_category_has_five_distinct_prompts():
    for c in CATEGORIES:
        assert len(set(prompts(c))) >= 5, c
    with pytest.raises(GridError) as err:
        prompts("poetry")
    assert err.value.code == "category_error"


@pytest.mark.parametrize(
    ("kw", "code"),
    [
        ({"targets": ()}, "no_target"),
        ({"drafts": ()}, "no_draft"),
        ({"categories": ()}, "no_category"),
        ({"categories": ("copy", "smalltalk")}, "category_error"),
        ({"per_category": 0}, "per_category_error"),
        ({"per_category": 6}, "per_category_error"),
    ],
)
def test_a_grid_that_cannot_run_says_why(kw, code):
    with pytest.raises(GridError) as err:
        spec(**kw).check()
    assert err.value.code == code


def test_the_projection_counts_passes_and_draft_forwards():
    assert projected_speedup(30, 10, 40, 0.0) == 3.0
    assert projected_speedup(30, 10, 40, 0.25) == pytest.approx(30 / 20)
    assert projected_speedup(0, 0, 0, 0.1) == 0.0
    with pytest.raises(ValueError):
        projected_speedup(3, 1, 1, -0.1)


def test_tau_pools_the_prompts_and_a_free_drafts_projection_is_tau():
    """A cell's τ is all its tokens ÷ all its passes (each pass counts once), not the mean of its
    prompts' τ; with no draft forwards the projection is that τ whatever c is."""
    runs = tuple(
        Measured("t", "ngram", "copy", i, 32, passes, 0, 32 - passes, 40, 1.0, 1.0, ())
        for i, passes in enumerate((10, 16, 8))
    )
    cell = Cell("t", "ngram", "copy", runs, runs, True)
    assert cell.tau == pytest.approx(96 / 34) and cell.taus == pytest.approx([3.2, 2.0, 4.0])
    assert cell.tau != pytest.approx(sum(cell.taus) / 3)
    assert cell.projected(0.0) == cell.projected(0.3) == pytest.approx(cell.tau)
    assert Cell("t", "d", "c", (), (), True).tau == 0.0


def test_draft_keys_name_layer_depths_and_tree_variants():
    assert parse_draft_key("layerskip-6")[0].k == 6 and not parse_draft_key("layerskip-6")[1]
    assert parse_draft_key("bf16~tree") == (parse_draft_key("bf16")[0], True)


@pytest.fixture(scope="module")
def finished(models):
    grid = spec()
    run = GridRun(grid, models, cache=Classroom())
    steps = list(run)
    return grid, run, steps


def test_a_grid_measures_every_run_and_recomputes_tau_from_the_trace(finished, models):
    grid, run, steps = finished
    assert [s.done for s in steps] == list(range(1, grid.runs + 1)) and not run.skipped
    target = models.target("tiny")
    for m in run.measured:
        if m.draft == BASELINE:
            continue
        ids = encode_text(target, prompts(m.category)[m.prompt], True)
        draft = models.draft("tiny", m.draft, target)
        events = list(generate(target, draft, ids, GREEDY.sampling(), 3, 10, 0))
        committed = [t for e in events for t in e.committed]
        assert m.output == tuple(committed)
        assert m.tau == pytest.approx(len(committed) / len(events))  # one target pass a round
    table = cells(grid, run.measured)
    assert [c.key for c in table] == ["tiny/ngram/copy", "tiny/ngram/qa", "tiny/small/copy", "tiny/small/qa"]
    for c in table:
        assert c.greedy_identical is True
        assert 1.0 <= c.tau <= GREEDY.gamma + 1
        assert c.acceptance is None or 0.0 <= c.acceptance <= 1.0
        assert c.projected(0.0) == pytest.approx(c.tau)  # free drafts: one pass per τ tokens


def test_the_shared_cache_answers_an_identical_grid_without_running(finished, models):
    grid, run, _ = finished
    again = GridRun(grid, models, cache=run.cache)
    steps = list(again)
    assert steps and all(s.replayed for s in steps)
    assert [m.output for m in again.measured] == [m.output for m in run.measured]


def test_a_stopped_grid_keeps_its_finished_cells(models):
    grid = spec()
    run = GridRun(grid, models)
    list(itertools.islice(run, 4))  # target-only, n-gram and the small draft on copy, then qa's baseline
    table = cells(grid, run.measured)
    assert [c.key for c in table] == ["tiny/ngram/copy", "tiny/small/copy"]


def test_a_draft_that_does_not_fit_is_skipped_with_its_reason(models):
    grid = spec(drafts=("ngram", "medusa"), categories=("copy",))
    run = GridRun(grid, models)
    list(run)
    assert "does not fit" in run.skipped[("tiny", "medusa")]
    assert [c.draft for c in cells(grid, run.measured)] == ["ngram"]


def test_a_saved_grid_loads_back_the_same(finished):
    grid, run, _ = finished
    result = GridResult(grid, tuple(run.measured), True, {("tiny", "medusa"): "no head"}, {"machine": "x"})
    loaded = grid_from_json(grid_json(result))
    assert loaded == result
    relabelled = grid_from_json(grid_json(replace(result, label={"date": "2026-12-05"})))
    assert relabelled.label == {"date": "2026-12-05"}
    for bad in ("{}", "not json", json.dumps({"format": "specdec-studio/compare-grid", "spec": {}})):
        with pytest.raises(GridError) as err:
            grid_from_json(bad)
        assert err.value.code == "file"


def test_the_csv_and_the_summary_hold_every_cell(finished):
    grid, run, _ = finished
    table = cells(grid, run.measured)
    rows = cells_csv(table, 0.05).strip().splitlines()
    assert rows[0].split(",") == list(CSV_COLUMNS) and len(rows) == 1 + len(table)
    out = summary(grid, table, 1.0)
    assert set(out["tau"]) == {c.key for c in table} and out["greedy_identical"] is True
    json.dumps(out, allow_nan=False)


def test_ranking_calls_gaps_under_ten_percent_a_tie(finished):
    grid, run, _ = finished
    table = cells(grid, run.measured)
    placing = ranking(table, "tiny", "copy", "tau")
    assert placing[0].tied_with_best
    best = placing[0].value
    for p in placing:
        assert p.tied_with_best == (p.value >= 0.9 * best)


def test_heatmaps_show_every_cell_and_never_a_nan(finished):
    from specdec_core.viz.compare import METRICS, heat_cells, heatmap

    grid, run, _ = finished
    table = cells(grid, run.measured)
    text = {"draft_axis": "draft", "category_axis": "task", "hover": "%{z}", "missing": "—"}
    for metric in METRICS:
        hc = heat_cells(table, "tiny", metric)
        assert len(hc) == len(table)
        fig = heatmap(hc, grid.drafts, grid.categories, {"ngram": "<n-gram>"}, metric, text)
        z = fig.data[0].z
        assert all(v is None or v == v for row in z for v in row)  # None, not NaN
        assert "&lt;n-gram&gt;" in fig.data[0].y
    with pytest.raises(ValueError):
        heat_cells(table, "tiny", "speed")


def test_draft_keys_name_reduced_heads():
    spec, tree = parse_draft_key("layerskip-8@16384")
    assert (spec.kind, spec.k, spec.vocab, tree) == ("layerskip", 8, 16384, False)
    assert parse_draft_key("smollm2@4096~tree")[0].vocab == 4096


def test_two_custom_targets_do_not_share_cached_runs(models):
    room = Classroom()
    one = {"targets": ("custom",), "drafts": ("ngram",), "categories": ("copy",)}
    first = spec(**one, custom_source="org/one")
    list(GridRun(first, models, cache=room))
    other = GridRun(spec(**one, custom_source="org/two"), models, cache=room)
    assert not any(step.replayed for step in other)
    assert all(step.replayed for step in GridRun(first, models, cache=room))
