"""Every figure builder writes a figure plotly accepts, in both languages, over the lessons' cases.

Builders write plotly JSON as dicts (specdec_core.viz.spec); plotly validates it when the
figure is made, so an unknown property or a bad value fails here.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from pages.common.i18n import Strings
from specdec_core.course import block as block_demo
from specdec_core.course import overlap as one_step
from specdec_core.course import tree_drafts as tree_demo
from specdec_core.course.cost import check_claims, cost_data, draft_presets
from specdec_core.course.probability_tree import draw, path_nodes, start_run, tally, tree_view
from specdec_core.course.sampling_lab import example_rows, temperature_sweep
from specdec_core.live.answers import Tally
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import linear_verify_cost
from specdec_core.viz import answers, block, cost, overlap, rounds, spec, speedup_maps, tree_drafts
from specdec_core.viz import probability_tree as tree
from specdec_core.viz import probability_tree_sankey as tree_sankey
from specdec_core.viz.sampling import stages_figure, sweep_figure


def _valid(fig: go.Figure) -> bool:
    """A plotly figure that serialises to JSON with at least one trace or layout key."""
    as_json = json.loads(fig.to_json())
    return isinstance(fig, go.Figure) and bool(as_json["data"] or as_json["layout"])


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
def test_sampling_figures_pass_plotly_validation(lang, config):
    for fig in _sampling_figures(lang, config):
        assert _valid(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("verify", [1.0, linear_verify_cost(0.12)])
@pytest.mark.parametrize(("alpha", "gamma", "c"), [(0.8, 4, 0.05), (0.0, 1, 0.6), (1.0, 16, 0.0)])
def test_cost_figures_pass_plotly_validation(lang, verify, alpha, gamma, c):
    data, t = cost_data(), Strings("cost", lang)["fig"]
    presets = draft_presets(lambda draft: 0.0 if draft == "ngram" else 0.5)  # a profile's costs
    drafts = [(name, a, cost_ratio) for name, (a, cost_ratio) in presets.items()]
    claims = check_claims(data.seed_claims, c, verify)
    figures = [
        cost.verify_cost_figure.uncached(0.12, 16, (5, 1.3), t),
        cost.expected_tokens_figure.uncached((0.5, 0.8, 0.95), 16, alpha, gamma, claims, t),
        cost.speedup_gamma_figure.uncached(alpha, c, verify, gamma, 16, t),
        cost.speedup_alpha_figure.uncached(gamma, c, verify, alpha, 16, t),
        speedup_maps.speedup_heatmap.uncached(c, verify, 16, alpha, gamma, t),
        speedup_maps.drafts_map_figure.uncached(drafts, verify, 16, alpha, c, t),
    ]
    for fig in figures:
        assert _valid(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("draft", "k", "temperature"), [("good", 4, 1.0), ("poor", 1, 0.0), ("poor", 8, 2.0)]
)
def test_block_figures_pass_plotly_validation(lang, draft, k, temperature):
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
            assert _valid(fig)
    summary = block_demo.summarize(demo.rounds, k)
    for fig in (
        rounds.rounds_figure.uncached(demo.rounds, t),
        rounds.tokens_histogram.uncached(summary.counts, summary.law, summary.alpha, t),
    ):
        assert _valid(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("p", "q"),
    [((0.2, 0.4, 0.4), (0.1, 0.1, 0.8)), ((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), ((0.3, 0.7), (0.3, 0.7))],
)
def test_overlap_figures_pass_plotly_validation(lang, p, q):
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
        assert _valid(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("top_n", [1, 2, 8])
def test_tree_figures_pass_plotly_validation(lang, top_n):
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
        assert _valid(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("shape", "temperature"), [((2, 2), 1.0), ((1, 1, 1), 0.0), ((3, 1), 1.5)])
def test_tree_drafts_figures_pass_plotly_validation(lang, shape, temperature):
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
        assert _valid(fig)


def test_an_invalid_spec_fails_validation():
    with pytest.raises(ValueError):
        spec.figure([{"type": "bar", "x": [0], "y": [1], "colour": "red"}], {})


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


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("counts", [(0, 0, 0), (2, 7, 1), (30, 0, 12)])
def test_answer_figures_pass_plotly_validation(lang, counts):
    options = ["one", "τ < 0.5", "a much longer option text that does not fit beside its bar at all"]
    assert _valid(answers.answer_histogram(Tally(counts, 1), options, Strings("answers", lang)["fig"]))


def test_the_axis_helpers_write_what_plotly_axis_updates_write():
    from specdec_core.viz.palette import GRID

    by_hand = go.Figure().update_xaxes(title_text="α", gridcolor=GRID, range=[0, 1])
    assert spec.figure([], {"xaxis": spec.axis("α", range=[0, 1])}).layout.xaxis == by_hand.layout.xaxis
    ticks = spec.token_axis(["a", "<b>", "a"], showgrid=False)
    lo, hi = ticks["range"]
    assert ticks["tickvals"] == [0, 1, 2] and ticks["ticktext"] == ["a", "<b>", "a"]
    assert lo < 0 and hi > 2 and ticks["showgrid"] is False
