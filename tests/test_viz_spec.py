"""Figures written as dicts (specdec_core.viz.spec) are valid plotly figures, unchanged by validation.

spec.figure skips plotly's validators on every rerun; here each such builder's output goes
through a validating ``go.Figure``: an unknown property, a bad value or a template plotly.js
cannot read fails, and so does any value validation would have changed. Each figure's
serialised dict (made once by spec.SpecFigure) must equal the one plotly's own ``to_dict``
makes, and be remade after any change.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from pages.common.i18n import Strings
from specdec_core.course import block as block_demo
from specdec_core.course import overlap as one_step
from specdec_core.course import tree_drafts as tree_demo
from specdec_core.course.cost import check_claims, cost_data
from specdec_core.course.sampling_lab import example_rows, temperature_sweep
from specdec_core.course.tree import draw, path_nodes, start_run, tally, tree_view
from specdec_core.live.answers import Tally
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import linear_verify_cost
from specdec_core.viz import (
    answers,
    block,
    cost,
    overlap,
    rounds,
    spec,
    speedup_maps,
    tree,
    tree_drafts,
    tree_sankey,
)
from specdec_core.viz.sampling import stages_figure, sweep_figure


def _plotly_json(fig: go.Figure) -> dict:
    """The figure serialised by plotly's own ``to_dict`` (deep copy, then base64 arrays)."""
    return json.loads(pio.to_json(go.Figure.to_dict(fig), validate=False))


def _our_json(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def _validated_json(fig: go.Figure) -> dict:
    assert isinstance(fig, spec.SpecFigure)
    fresh = spec.figure(fig._spec["data"], fig._spec["layout"]) if fig._spec else None
    for _ in range(2):  # the first call makes the dict, the second reuses it
        assert _our_json(fig) == _plotly_json(fig)
    if fresh is not None:  # made from the JSON alone, before plotly built the figure
        assert _our_json(fresh) == _plotly_json(fig)
    return json.loads(go.Figure(fig.to_dict()).to_json())


def _sampling_figures(lang: str, config: SamplingConfig) -> list[go.Figure]:
    s = Strings("sampling_lab", lang)
    rows = example_rows("random", lang, 7, 3)
    labels, logits = [r[0] for r in rows], [r[1] for r in rows]
    current = None if config.is_greedy_switch else config.temperature
    return [
        stages_figure.uncached(apply(logits, config), config, labels, s["chart"]),
        sweep_figure.uncached(temperature_sweep(logits, config), labels, current, s["chart"]),
    ]


CONFIGS = [
    SamplingConfig(),
    SamplingConfig(temperature=0.0),
    SamplingConfig(temperature=0.5, top_k=2, top_p=0.6),
    SamplingConfig(temperature=2.0, top_p=0.3, min_tokens_to_keep=2, order=("top_p", "top_k", "temperature")),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("config", CONFIGS)
def test_sampling_figures_pass_plotly_validation_unchanged(lang, config):
    for fig in _sampling_figures(lang, config):
        assert json.loads(fig.to_json()) == _validated_json(fig)
        assert isinstance(fig.to_dict()["layout"]["template"], dict)  # a template's content, not its name


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("verify", [1.0, linear_verify_cost(0.12)])
@pytest.mark.parametrize(("alpha", "gamma", "c"), [(0.8, 4, 0.05), (0.0, 1, 0.6), (1.0, 16, 0.0)])
def test_cost_figures_pass_plotly_validation_unchanged(lang, verify, alpha, gamma, c):
    data, t = cost_data(), Strings("cost", lang)["fig"]
    drafts = [(name, a, cost_ratio) for name, (a, cost_ratio) in data.measured_drafts.items()]
    claims = check_claims(data.seed_claims, c, verify)
    figures = [
        cost.verify_cost_figure.uncached(0.12, 16, data.measured_verify, t),
        cost.expected_tokens_figure.uncached((0.5, 0.8, 0.95), 16, alpha, gamma, claims, t),
        cost.speedup_gamma_figure.uncached(alpha, c, verify, gamma, 16, t),
        cost.speedup_alpha_figure.uncached(gamma, c, verify, alpha, 16, t),
        speedup_maps.speedup_heatmap.uncached(c, verify, 16, alpha, gamma, t),
        speedup_maps.drafts_map_figure.uncached(drafts, verify, 16, alpha, c, t),
    ]
    for fig in figures:
        assert json.loads(fig.to_json()) == _validated_json(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("draft", "k", "temperature"), [("good", 4, 1.0), ("poor", 1, 0.0), ("poor", 8, 2.0)]
)
def test_block_figures_pass_plotly_validation_unchanged(lang, draft, k, temperature):
    t = Strings("block", lang)["fig"]
    target = block_demo.target_chain("story")
    demo = block_demo.BlockDemo(
        target, block_demo.draft_chain(target, draft), [0], k, 7, SamplingConfig(temperature=temperature)
    )
    for _ in range(4):  # rounds with rejections, full acceptances and bonuses among them
        rnd = demo.step()
        prefix, _ = block_demo.earlier_text(demo)
        for fig in (
            block.round_figure.uncached(rnd, target.labels, t),
            block.rows_figure.uncached(rnd, target.labels, t),
            block.cache_figure.uncached(rnd, target.labels, prefix, t),
        ):
            assert json.loads(fig.to_json()) == _validated_json(fig)
    summary = block_demo.summarize(demo.rounds, k)
    for fig in (
        rounds.rounds_figure.uncached(demo.rounds, t),
        rounds.tokens_histogram.uncached(summary.counts, summary.law, summary.alpha, t),
    ):
        assert json.loads(fig.to_json()) == _validated_json(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("p", "q"),
    [((0.2, 0.4, 0.4), (0.1, 0.1, 0.8)), ((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), ((0.3, 0.7), (0.3, 0.7))],
)
def test_overlap_figures_pass_plotly_validation_unchanged(lang, p, q):
    s = Strings("overlap", lang)
    tokens = [f"t{i}" for i in range(len(p))]
    parts = one_step.breakdown(np.array(p), np.array(q))
    d = parts.decomposition
    sweep = one_step.alpha_by_temperature(d.p, d.q, np.array([0.25, 1.0, 4.0]))
    names = {**s["chart.comparison"], "law": "law"}
    figures = [
        overlap.overlap_bars.uncached(tokens, d.overlap, d.deficit, d.surplus, text=s["chart.overlap"]),
        overlap.conservation_bar.uncached(tokens, d.surplus, d.deficit, text=s["chart.conservation"]),
        overlap.emitted_bars.uncached(tokens, parts.direct, parts.via_residual, d.p, text=s["chart.emitted"]),
        overlap.law_comparison.uncached(tokens, d.p, d.q, text=names, spread=d.p / 10),
        overlap.alpha_temperature.uncached(
            sweep.temperatures, sweep.alpha, sweep.limit_hot, (1.0, 0.5), s["chart.alpha_temperature"]
        ),
    ]
    if d.residual is not None:
        figures.append(overlap.residual_bars.uncached(tokens, d.residual, text=s["chart.residual"]))
    for fig in figures:
        assert json.loads(fig.to_json()) == _validated_json(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("top_n", [1, 2, 8])
def test_tree_figures_pass_plotly_validation_unchanged(lang, top_n):
    t = Strings("tree", lang)["chart"]
    p, q = np.array([0.2, 0.4, 0.3, 0.1]), np.array([0.1, 0.1, 0.5, 0.3])
    view = tree_view(p, q, ["a", "b", "<c>", "d"], top_n)
    run = draw(start_run(p.size, 0), p, q, 20)
    counts = tally(view, run)
    for fig in (
        tree.tree_figure.uncached(view, highlight=path_nodes(view, run.last), tally=counts, text=t),
        tree.tree_figure.uncached(view, text=t),
        tree.tally_figure.uncached(view, counts, text=t),
        tree.leaf_sum_figure.uncached(view, text=t),
        tree_sankey.sankey_figure.uncached(view, text=t),
    ):
        assert json.loads(fig.to_json()) == _validated_json(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("shape", "temperature"), [((2, 2), 1.0), ((1, 1, 1), 0.0), ((3, 1), 1.5)])
def test_tree_drafts_figures_pass_plotly_validation_unchanged(lang, shape, temperature):
    t = Strings("tree_drafts", lang)["fig"]
    target, draft = tree_demo.lesson_pair("story", "poor")
    demo = tree_demo.TreeDemo(target, draft, [0], shape, 7, SamplingConfig(temperature=temperature))
    figures = []
    for _ in range(3):
        rnd = demo.step()
        names = [target.labels[token] for token in rnd.tokens]
        final = (target.labels[rnd.committed[-1]], rnd.kinds[-1])
        figures += [
            tree_drafts.draft_tree_figure.uncached(names, rnd.layout.parents, rnd.status, t, final, names),
            tree_drafts.mask_figure.uncached(rnd.layout.attention_mask(), names, rnd.position_ids, t),
            tree_drafts.cache_figure.uncached(rnd.prefix_length, names, rnd.kept_slots, t),
        ]
    shapes = tree_demo.lesson_shapes("story", "poor", 4, temperature)
    labels = [tree_demo.shape_label(sh) for sh in shapes.shapes]
    figures.append(tree_drafts.shapes_figure.uncached(labels, shapes.expected, 0, t))
    one = tree_demo.one_position(2, False)
    figures += [
        tree_drafts.candidate_tree_figure.uncached(one.tree, t),
        tree_drafts.acceptance_figure.uncached(one.curves, t),
    ]
    for fig in figures:
        assert json.loads(fig.to_json()) == _validated_json(fig)


def test_titles_given_as_text_are_written_as_plotly_writes_them():
    fig = spec.figure([], {"title": "T", "xaxis": {"title": "x"}, "yaxis2": {"title": {"text": "y"}}})
    assert json.loads(fig.to_json())["layout"]["title"] == {"text": "T"}
    assert fig.to_dict()["layout"]["xaxis"]["title"] == {"text": "x"}
    assert json.loads(fig.to_json()) == _validated_json(fig)


def test_an_invalid_spec_fails_validation():
    fig = spec.figure([{"type": "bar", "x": [0], "y": [1], "colour": "red"}], {})
    with pytest.raises(ValueError):
        _validated_json(fig)


def test_subplot_axes_match_make_subplots():
    from plotly.subplots import make_subplots

    made = make_subplots(
        rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.1, subplot_titles=["a", "b", "c"]
    )
    axes = spec.subplot_axes(3, 1, shared_xaxes=True, vertical_spacing=0.1)
    layout = made.to_dict()["layout"]
    assert {k: v for k, v in layout.items() if "axis" in k} == axes
    titles = [spec.subplot_title(axes, row, text) for row, text in enumerate("abc", start=1)]
    assert titles == layout["annotations"]
    axes["xaxis"]["range"] = [0, 1]  # a copy: the cached layout is untouched
    assert "range" not in spec.subplot_axes(3, 1, shared_xaxes=True, vertical_spacing=0.1)["xaxis"]
    assert spec.merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}, "d": np.int64(4)}) == {
        "a": {"b": 1, "c": 3},
        "d": 4,
    }


def test_a_changed_figure_is_serialised_afresh():
    fig = spec.figure(
        [{"type": "bar", "x": np.arange(3), "y": np.array([0.5, 0.25, 0.25])}],
        {"title": "T", "xaxis": {"range": [0, 2]}},
    )
    first = fig.to_dict()
    assert first["data"][0]["y"]["dtype"] == "f8"  # arrays as plotly.js typed arrays
    changes = [
        lambda f: f.update_layout(title="U"),
        lambda f: f.update_traces(marker_color="red"),
        lambda f: f.add_trace(go.Scatter(x=[0, 1], y=[1, 0])),
        lambda f: setattr(f.data[0], "y", np.array([0.1, 0.2, 0.7])),
        lambda f: setattr(f.layout.xaxis, "range", [0, 5]),
        lambda f: setattr(f, "layout", {"title": "V"}),
        lambda f: f.update_layout(template="plotly_dark"),
        lambda f: f.update({"layout": {"height": 300}}),
    ]
    for change in changes:
        before = _our_json(fig)
        change(fig)
        after = _our_json(fig)
        assert after == _plotly_json(fig) and after != before
    with fig.batch_update():
        fig.layout.width = 640
        fig.data[0].name = "p"
    assert _our_json(fig) == _plotly_json(fig)
    fig.to_dict()["layout"] = {}  # a caller replacing a top-level key changes nothing
    assert _our_json(fig) == _plotly_json(fig)


ARRAYS = [
    np.array([0.1, 0.2]),
    np.array([1.5], dtype=np.float32),
    np.arange(5),
    np.array([-(2**40), 1]),
    np.array([2**63 - 1, 0]),
    np.array([300, 70_000], dtype=np.uint64),
    np.array([2**64 - 1], dtype=np.uint64),
    np.array([True, False]),
    np.array([1, 2], dtype=np.float16),
    np.array([0.5, 2.0], dtype=">f8"),
    np.arange(6.0).reshape(2, 3),
    np.arange(6, dtype=np.int64).reshape(3, 2)[::2],
    np.array([], dtype=float),
    np.array(["a", "b"]),
    np.array(["a", 1], dtype=object),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: f"{a.dtype}{a.shape}")
def test_arrays_are_encoded_as_plotly_encodes_them(array):
    fig = spec.figure([{"type": "scatter", "x": array, "customdata": [array]}], {"xaxis": {"range": array}})
    assert _our_json(fig) == _plotly_json(fig)


SUBPLOT_CASES = [
    *(
        (1, 2, {"shared_yaxes": True, "column_widths": (k, k + 1), "horizontal_spacing": 0.03})
        for k in range(1, 25)
    ),
    *(
        (2, 1, {"shared_xaxes": True, "row_heights": rh, "vertical_spacing": 0.06})
        for rh in [(0.42, 0.58), (1, 2)]
    ),
    (2, 1, {"shared_xaxes": True, "row_heights": (0.7, 0.3)}),
    *(
        (rows, 3, {"column_widths": (1, 2, 3), "row_heights": tuple(range(rows, 0, -1))})
        for rows in range(1, 6)
    ),
    (3, 1, {"shared_xaxes": True, "vertical_spacing": 0.1}),
]


@pytest.mark.parametrize(("rows", "cols", "options"), SUBPLOT_CASES)
def test_subplot_axes_equal_make_subplots_when_widths_and_heights_are_computed_here(rows, cols, options):
    from plotly.subplots import make_subplots

    layout = make_subplots(rows=rows, cols=cols, **options).to_dict()["layout"]
    assert spec.subplot_axes(rows, cols, **options) == {k: v for k, v in layout.items() if k[1:5] == "axis"}


def test_subplot_axes_leave_other_grids_to_make_subplots():
    from plotly.subplots import make_subplots

    options = {"start_cell": "bottom-left", "column_widths": (1, 3), "row_heights": (2, 1)}
    layout = make_subplots(rows=2, cols=2, **options).to_dict()["layout"]
    assert spec.subplot_axes(2, 2, **options) == {k: v for k, v in layout.items() if k[1:5] == "axis"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("counts", [(0, 0, 0), (2, 7, 1), (30, 0, 12)])
def test_answer_figures_pass_plotly_validation_unchanged(lang, counts):
    options = ["one", "τ < 0.5", "a much longer option text that does not fit beside its bar at all"]
    fig = answers.answer_histogram(Tally(counts, 1), options, Strings("answers", lang)["fig"])
    assert json.loads(fig.to_json()) == _validated_json(fig)
