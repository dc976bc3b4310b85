"""specdec_core.viz.overlap: the data behind each figure (bar heights, bases, labels)."""

import numpy as np
import pytest
from hypothesis import given, settings

from specdec_core.course import overlap as one_step
from specdec_core.course import pairs
from specdec_core.viz import overlap as viz
from specdec_core.viz import palette
from tests.figure_strings import LANGS, figure_text
from tests.strategies import pairs as pq_pairs

TEXT = {
    name: figure_text(f"overlap.{name}")
    for name in ("overlap", "conservation", "residual", "emitted", "comparison")
}


def _numbers(fig):
    """Every numeric array in the figure's traces."""
    out = []
    for trace in fig.data:
        for attr in ("x", "y", "base"):
            value = getattr(trace, attr, None)
            if value is not None and not isinstance(value[0], str):
                out.append(np.asarray(value, dtype=float))
    return out


def _f(values):
    return np.asarray(values, dtype=float)


def _bars(fig):
    return [t for t in fig.data if t.type == "bar"]


def _abc():
    pair = pairs.to_pair(pairs.preset_rows("abc"))
    b = one_step.breakdown(pair.p, pair.q)
    return ["A", "B", "C"], b, b.decomposition


@settings(max_examples=40, deadline=None)
@given(pq_pairs(max_size=25))
def test_overlap_bars_stack_to_q_on_the_left_and_p_on_the_right(pair):
    p, q = pair
    d = one_step.breakdown(p, q).decomposition
    labels = [f"t{i}" for i in range(p.size)]
    fig = viz.overlap_bars(labels, d.overlap, d.deficit, d.surplus, TEXT["overlap"])
    q_low, q_top, p_low, p_top = _bars(fig)
    for low, top, law in ((q_low, q_top, q), (p_low, p_top, p)):
        np.testing.assert_array_equal(_f(low.base), 0)
        np.testing.assert_allclose(_f(top.base), _f(low.y))  # the top starts where the overlap ends
        np.testing.assert_allclose(_f(low.y) + _f(top.y), law, atol=1e-12)
    assert np.all(np.asarray(q_low.x) < np.asarray(p_low.x))
    assert all(np.all(np.isfinite(a)) for a in _numbers(fig))


def test_overlap_bars_on_abc_colours_names_and_values():
    labels, _, d = _abc()
    fig = viz.overlap_bars(labels, d.overlap, d.deficit, d.surplus, TEXT["overlap"])
    q_low, q_top, p_low, p_top = _bars(fig)
    assert q_top.y.tolist() == pytest.approx([0, 0, 0.4]) and p_top.y.tolist() == pytest.approx([0.1, 0.3, 0])
    assert q_low.marker.color == p_low.marker.color == palette.OVERLAP
    assert q_top.marker.color == palette.SURPLUS and p_top.marker.color == palette.DEFICIT
    assert list(q_top.text) == ["", "", "0.40"]  # few tokens: values printed on the bars
    assert fig.layout.xaxis.ticktext == ("A", "B", "C")


def test_labels_are_escaped_and_duplicates_stay_separate():
    d = one_step.breakdown([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]).decomposition
    fig = viz.overlap_bars(["<script>", "a", "a"], d.overlap, d.deficit, d.surplus, TEXT["overlap"])
    assert fig.layout.xaxis.ticktext == ("&lt;script&gt;", "a", "a")
    assert fig.layout.xaxis.tickvals == (0, 1, 2)
    assert all("<script>" not in str(t.customdata) for t in _bars(fig))


def test_twenty_tokens_and_an_other_bar():
    pair = pairs.to_pair(pairs.random_rows(20, 3))
    d = one_step.breakdown(pair.p, pair.q).decomposition
    labels = [*pair.tokens[:20], "other"]
    pad = np.append  # an "other" bucket is just one more bar
    fig = viz.overlap_bars(
        labels, pad(d.overlap, 0.0), pad(d.deficit, 0.0), pad(d.surplus, 0.0), TEXT["overlap"]
    )
    assert len(fig.layout.xaxis.ticktext) == 21 and fig.layout.xaxis.ticktext[-1] == "other"
    assert all(not any(t.text) for t in _bars(fig))  # too many bars to print values
    assert len(fig.data) == 4  # no "q"/"p" captions above 21 bars


def test_conservation_bar_rows_both_have_length_r():
    labels, _, d = _abc()
    t = TEXT["conservation"]
    fig = viz.conservation_bar(labels, d.surplus, d.deficit, t)
    rows = {}
    for trace in fig.data:
        rows.setdefault(trace.y[0], []).append((trace.base[0], trace.x[0], trace.text[0]))
    surplus, deficit = rows[t["surplus_row"]], rows[t["deficit_row"]]
    assert [t for *_, t in surplus] == ["C"] and [t for *_, t in deficit] == ["A", "B"]
    assert deficit[1][0] == pytest.approx(deficit[0][1])  # B starts where A ends
    for row in (surplus, deficit):
        assert sum(x for _, x, _ in row) == pytest.approx(d.rejection_mass)
    assert [a.text for a in fig.layout.annotations] == [t["total"].format(value=0.4)] * 2


def test_conservation_bar_with_nothing_to_move():
    fig = viz.conservation_bar(["a", "b"], [0, 0], [0, 0], TEXT["conservation"])
    total = TEXT["conservation"]["total"].format(value=0)
    assert len(fig.data) == 0 and [a.text for a in fig.layout.annotations] == [total] * 2


def test_residual_and_emitted_bars():
    labels, b, d = _abc()
    residual = viz.residual_bars(labels, d.residual, TEXT["residual"])
    assert residual.data[0].y.tolist() == pytest.approx([0.25, 0.75, 0])
    emitted = viz.emitted_bars(labels, b.direct, b.via_residual, d.p, TEXT["emitted"])
    direct, via, outline = emitted.data
    np.testing.assert_allclose(_f(direct.y) + _f(via.y), _f(outline.y), atol=1e-15)
    np.testing.assert_allclose(_f(via.base), _f(direct.y))
    assert (
        outline.y.tolist() == pytest.approx([0.2, 0.4, 0.4]) and outline.marker.line.color == palette.TARGET
    )


def test_law_comparison_with_spread_and_translated_text():
    labels, _, d = _abc()
    text = {**TEXT["comparison"], "target": "p（Target）", "law": "输出", "yaxis": "概率"}
    fig = viz.law_comparison(labels, d.p, [0.18, 0.26, 0.56], text=text, spread=[0.01, 0.02, 0.03])
    target, law = fig.data
    assert (target.name, law.name, fig.layout.yaxis.title.text) == ("p（Target）", "输出", "概率")
    assert target.error_y.array == pytest.approx((0.01, 0.02, 0.03))
    assert law.y.tolist() == [0.18, 0.26, 0.56] and law.marker.color == palette.REJECTED


@pytest.mark.parametrize(
    "bad", [[0.5, float("nan"), 0.5], [0.5, -0.1, 0.6], [0.5, 0.5], [0.2, float("inf"), 0.1]]
)
def test_builders_refuse_non_finite_negative_or_misaligned_data(bad):
    with pytest.raises(ValueError):
        viz.residual_bars(["a", "b", "c"], bad, TEXT["residual"])
    with pytest.raises(ValueError):
        viz.law_comparison(["a", "b", "c"], [0.2, 0.4, 0.4], bad, TEXT["comparison"])


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_draws_in_each_language(lang):
    labels, b, d = _abc()
    text = {name: figure_text(f"overlap.{name}", lang) for name in TEXT}
    figs = {
        "overlap": viz.overlap_bars(labels, d.overlap, d.deficit, d.surplus, text["overlap"]),
        "conservation": viz.conservation_bar(labels, d.surplus, d.deficit, text["conservation"]),
        "residual": viz.residual_bars(labels, d.residual, text["residual"]),
        "emitted": viz.emitted_bars(labels, b.direct, b.via_residual, d.p, text["emitted"]),
        "comparison": viz.law_comparison(labels, d.p, d.p, text["comparison"], spread=[0.01] * 3),
    }
    for name, fig in figs.items():
        assert fig.layout.xaxis.title.text == text[name]["xaxis"], name
