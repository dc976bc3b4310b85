"""specdec_core.viz.cost and viz.speedup_maps: every plotted number is the theory's, and nothing is NaN."""

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.course.cost import check_claims
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, speedup
from specdec_core.viz import cost as viz
from specdec_core.viz import speedup_maps
from tests.figure_strings import LANGS, figure_text

SEED = ((0.9, 4, 4.1), (0.9, 7, 6.5), (0.7, 4, 2.8), (0.7, 7, 3.6), (0.5, 4, 1.9))
TEXT = figure_text("cost")


def _trace(fig: go.Figure, name: str):
    return next(t for t in fig.data if t.name == name)


def test_expected_tokens_figure_draws_the_formula_and_the_claims():
    checks = check_claims(SEED)
    fig = viz.expected_tokens_figure((0.5, 0.9), 10, 0.8, 3, checks, TEXT)
    gammas = np.arange(11)
    for a in (0.5, 0.9):
        line = _trace(fig, TEXT["alpha_line"].format(alpha=a))
        np.testing.assert_allclose(line.y, [expected_tokens(a, int(g)) for g in gammas])
    np.testing.assert_array_equal(_trace(fig, TEXT["ceiling"]).y, gammas + 1)
    wrong = _trace(fig, TEXT["claim_wrong"])
    assert list(zip(wrong.x, wrong.y, strict=True)) == [(7, 6.5), (7, 3.6)]
    assert len(_trace(fig, TEXT["claim_ok"]).x) == 3
    you = _trace(fig, TEXT["you"])
    assert you.y[0] == pytest.approx(expected_tokens(0.8, 3))


def test_speedup_gamma_figure_marks_the_best_gamma():
    verify = linear_verify_cost(0.075)
    labels = {**TEXT, "best": "best {gamma}", "current": "mine {gamma}"}
    fig = viz.speedup_gamma_figure(0.9, 0.1, verify, 3, 16, labels)
    curve = fig.data[0]
    np.testing.assert_allclose(curve.y, [speedup(0.9, g, 0.1, verify) for g in range(1, 17)])
    best = best_gamma(0.9, 0.1, verify, 16)
    star = _trace(fig, f"best {best}")
    assert star.x[0] == best and star.y[0] == pytest.approx(max(curve.y))
    assert _trace(fig, "mine 3").y[0] == pytest.approx(speedup(0.9, 3, 0.1, verify))
    tokens, cost = np.array(curve.customdata).T
    np.testing.assert_allclose(tokens / cost, curve.y)


def test_speedup_alpha_figure_envelope_dominates():
    fig = viz.speedup_alpha_figure(4, 0.2, 1.0, 0.6, 16, TEXT)
    envelope = np.array(_trace(fig, TEXT["envelope"]).y)
    yours = _trace(fig, TEXT["alpha_curve"].format(gamma=4))
    np.testing.assert_allclose(yours.y, speedup(np.array(yours.x), 4, 0.2, 1.0))
    assert np.all(envelope >= np.array(yours.y) - 1e-12)


def test_speedup_heatmap_data_and_best_line():
    fig = speedup_maps.speedup_heatmap(0.1, 1.0, 8, 0.7, 2, TEXT)
    heat = fig.data[0]
    raw = np.array(heat.customdata)
    assert raw.shape == (8, 101)
    np.testing.assert_allclose(raw[2], speedup(np.array(heat.x), 3, 0.1, 1.0))
    np.testing.assert_allclose(np.array(heat.z), np.log2(np.clip(raw, 1 / 16, 16)))
    best = _trace(fig, TEXT["best_line"])
    assert list(best.y) == [best_gamma(float(a), 0.1, 1.0, 8) for a in best.x]


def test_drafts_map_places_the_drafts_and_escapes_names():
    drafts = [("bf16 <copy>", 0.99, 0.56), ("8 layers", 0.02, 0.4)]
    fig = speedup_maps.drafts_map_figure(drafts, 1.0, 16, 0.5, 0.1, TEXT)
    points = next(t for t in fig.data if isinstance(t, go.Scatter) and t.mode == "markers+text")
    assert list(points.x) == [0.99, 0.02] and list(points.y) == [0.56, 0.4]
    assert list(points.text) == ["bf16 &lt;copy&gt;", "8 layers"]
    raw = np.array(fig.data[0].customdata)
    best_at_bf16 = max(speedup(1.0, g, 0.0, 1.0) for g in range(1, 17))  # grid corner α = 1, c = 0
    assert raw[0, -1] == pytest.approx(best_at_bf16)
    assert any(isinstance(t, go.Contour) for t in fig.data)


def test_verify_cost_figure_models():
    fig = viz.verify_cost_figure(0.075, 8, (5, 1.3), TEXT)
    tokens = np.arange(1, 10)
    linear = _trace(fig, TEXT["linear"].format(beta=0.075))
    np.testing.assert_allclose(linear.y, 1 + 0.075 * (tokens - 1))
    assert linear.y[4] == pytest.approx(1.3)  # the line passes through the CPU measurement
    np.testing.assert_array_equal(_trace(fig, TEXT["compute_bound"]).y, tokens)
    measured = _trace(fig, TEXT["measured"])
    assert (measured.x[0], measured.y[0]) == (5, 1.3)


@settings(max_examples=10, deadline=None)
@given(
    alpha=st.floats(0.0, 1.0),
    gamma=st.integers(1, 16),
    c=st.floats(0.0, 1.0),
    beta=st.one_of(st.none(), st.floats(0.0, 0.5)),
)
def test_no_nan_or_inf_reaches_a_chart(alpha, gamma, c, beta):
    verify = 1.0 if beta is None else linear_verify_cost(beta)
    figures = [
        viz.speedup_gamma_figure(alpha, c, verify, gamma, 16, TEXT),
        viz.speedup_alpha_figure(gamma, c, verify, alpha, 16, TEXT),
        viz.expected_tokens_figure((0.5, 0.9), 16, alpha, gamma, check_claims(SEED), TEXT),
        speedup_maps.speedup_heatmap(c, verify, 16, alpha, gamma, TEXT),
    ]
    for fig in figures:
        for trace in fig.data:
            for values in (trace.y, getattr(trace, "z", None)):
                if values is not None:
                    assert np.isfinite(np.array(values, dtype=float)).all()


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_draws_in_each_language(lang):
    text, verify = figure_text("cost", lang), linear_verify_cost(0.075)
    claims = check_claims(SEED)
    figs = [
        viz.verify_cost_figure(0.075, 8, (5, 1.3), text),
        viz.expected_tokens_figure((0.5, 0.9), 10, 0.8, 3, claims, text),
        viz.speedup_gamma_figure(0.9, 0.1, verify, 3, 16, text),
        viz.speedup_alpha_figure(4, 0.2, verify, 0.6, 16, text),
        speedup_maps.speedup_heatmap(0.1, verify, 8, 0.7, 2, text),
        speedup_maps.drafts_map_figure([("bf16", 0.9, 0.6)], verify, 16, 0.5, 0.1, text),
    ]
    assert _trace(figs[1], text["claim_wrong"]).x == (7, 7)
    assert figs[4].layout.xaxis.title.text == text["alpha_axis"]
