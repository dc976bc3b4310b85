"""The figure cache: equal inputs give the figure built before, any difference builds anew."""

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from specdec_core.viz import memo
from specdec_core.viz.overlap import overlap_bars


@dataclass(frozen=True)
class Point:
    x: np.ndarray
    label: str


def _builder():
    calls = []

    @memo.figure_cache
    def build(p, text=None):
        calls.append(1)
        return go.Figure()

    return build, calls


def test_equal_inputs_share_one_figure_and_any_difference_builds_anew():
    build, calls = _builder()
    a = build(Point(np.array([0.1, 0.9]), "a"), text={"t": "x"})
    assert build(Point(np.array([0.1, 0.9]), "a"), text={"t": "x"}) is a  # equal values, new objects
    assert len(calls) == 1
    for other in (
        Point(np.array([0.1, 0.8]), "a"),
        Point(np.array([0.1, 0.9], dtype=np.float32), "a"),
        Point(np.array([[0.1, 0.9]]), "a"),
        Point(np.array([0.1, 0.9]), "b"),
    ):
        assert build(other, text={"t": "x"}) is not a
    assert build(Point(np.array([0.1, 0.9]), "a"), text={"t": "y"}) is not a
    assert len(calls) == 6


def test_inputs_it_cannot_read_as_values_are_never_cached():
    build, calls = _builder()
    thing = object()
    assert build(thing) is not build(thing)
    assert len(calls) == 2


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(memo, "MAX_FIGURES", 3)
    memo.clear()
    build, _ = _builder()
    figs = [build(i) for i in range(4)]
    assert build(3) is figs[3] and build(2) is figs[2]  # the newest are kept
    assert build(0) is not figs[0]  # the oldest was dropped


def test_a_real_builder_returns_the_same_figure_for_the_same_distributions():
    parts = (np.array([0.2, 0.3, 0.3]), np.array([0.0, 0.2, 0.0]), np.array([0.1, 0.0, 0.1]))
    text = {k: k for k in ("overlap", "surplus", "deficit", "q_bar", "p_bar", "xaxis", "yaxis")}
    fig = overlap_bars(["a", "b", "c"], *parts, text)
    assert overlap_bars(["a", "b", "c"], *(x.copy() for x in parts), dict(text)) is fig
    assert overlap_bars(["a", "b", "d"], *parts, text) is not fig


def test_result_cache_hands_back_the_result_computed_before_for_equal_inputs():
    calls = []

    def compute(x, n):
        calls.append(n)
        return [v * n for v in x]

    cached = memo.result_cache(compute)
    first = cached((1.0, 2.0), 3)
    assert cached((1.0, 2.0), 3) is first and calls == [3]
    assert cached((1.0, 2.0), 4) == [4.0, 8.0] and calls == [3, 4]
