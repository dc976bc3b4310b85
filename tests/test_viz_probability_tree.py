"""Probability-tree data and figures: path masses, leaf sums, top-N collapse, Sankey flows,
sampled paths, the lesson's edge-case example, and HTML-safe labels."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.course import pairs as examples
from specdec_core.course.probability_tree import (
    draw,
    layout,
    leaf_split,
    mass_flows,
    path_nodes,
    start_run,
    tally,
    tree_view,
)
from specdec_core.stats import chisquare
from specdec_core.verify import StepResult, decompose
from specdec_core.viz import palette
from specdec_core.viz.probability_tree import (
    display_label,
    leaf_sum_figure,
    num,
    tally_figure,
    tree_figure,
)
from specdec_core.viz.probability_tree_sankey import sankey_figure
from tests.figure_strings import LANGS, figure_text
from tests.strategies import pairs

TEXT = figure_text("tree")

P_ABC = [0.2, 0.4, 0.4]
Q_ABC = [0.1, 0.1, 0.8]


def _abc():
    return tree_view(P_ABC, Q_ABC, ["A", "B", "C"])


def _random(seed):
    """The tree lesson's random example: 30 word tokens."""
    pair = examples.to_pair(examples.preset_rows("random", seed, size=30))
    return pair.tokens, pair.p, pair.q


def test_abc_tree_matches_the_lecture():
    view = _abc()
    t = view.tree
    leaves = {(n.kind, n.label): n.mass for n in t.leaves}
    assert leaves == pytest.approx(
        {
            ("accept", "A"): 0.1,
            ("accept", "B"): 0.1,
            ("accept", "C"): 0.4,
            ("resample", "A"): 0.1,
            ("resample", "B"): 0.3,
        }
    )
    reject = next(n for n in t.nodes if n.kind == "reject")
    assert reject.edge_prob == pytest.approx(0.5) and reject.mass == pytest.approx(0.4)
    split = leaf_split(view)
    np.testing.assert_allclose(split.direct, [0.1, 0.1, 0.4], atol=1e-15)
    np.testing.assert_allclose(split.via_reject, [0.1, 0.3, 0.0], atol=1e-15)
    np.testing.assert_allclose(split.total, P_ABC, atol=1e-15)
    assert np.abs(split.gap).max() < 1e-15
    assert sum(n.mass for n in t.leaves) == pytest.approx(1.0, abs=1e-15)
    assert view.other is None and t.deficit_set == [0, 1] and t.surplus_set == [2]


def test_equal_pair_has_no_reject_node():
    view = tree_view(P_ABC, P_ABC, ["A", "B", "C"])
    assert not any(n.kind in ("reject", "resample") for n in view.tree.nodes)
    assert view.tree.rejection_mass == 0
    flows = mass_flows(view)
    assert not flows.rejected.any()
    np.testing.assert_allclose(flows.accepted, P_ABC)
    sankey = sankey_figure(view, TEXT).data[0]
    assert set(sankey.link.color) == {palette.rgba(palette.ACCEPTED, 0.45)}  # only kept (green) bands


def test_top_n_collapses_thirty_tokens_into_n_plus_an_exact_other():
    labels, p, q = _random(3)
    assert len(labels) == 30
    for n in (1, 4, 8):
        view = tree_view(p, q, labels, top_n=n)
        assert len(view.labels) == n + 1 and view.other == n
        assert sum(g.size for g in view.groups) == 30
        masses = [leaf.mass for leaf in view.tree.leaves]
        assert sum(masses) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(leaf_split(view).total, view.tree.p, atol=1e-12)
        np.testing.assert_allclose(view.tree.p[-1], p[view.groups[-1]].sum(), atol=1e-15)
        shown = {view.labels[g] for g in range(n)}
        assert shown == {labels[i] for i in np.argsort(-np.maximum(p, q), kind="stable")[:n]}


@settings(max_examples=100, deadline=None)
@given(pairs(max_size=9), st.integers(1, 10))
def test_leaves_sum_to_p_and_paths_to_one(pq, top_n):
    p, q = pq
    view = tree_view(p, q, top_n=top_n)
    split = leaf_split(view)
    np.testing.assert_allclose(split.total, view.tree.p, atol=1e-12)
    assert sum(n.mass for n in view.tree.leaves) == pytest.approx(1.0, abs=1e-12)
    for node in view.tree.nodes[1:]:  # every path mass is its parent's mass times its edge
        parent = view.tree.nodes[node.parent]
        assert node.mass == pytest.approx(parent.mass * node.edge_prob, abs=1e-12)
    pos = layout(view)
    leaf_rows = sorted(
        pos.y[n.id] for n in view.tree.nodes if not any(c.parent == n.id for c in view.tree.nodes)
    )
    assert leaf_rows == list(range(len(leaf_rows)))  # one row per leaf, no overlaps


@settings(max_examples=100, deadline=None)
@given(pairs(max_size=9), st.integers(1, 10))
def test_flows_conserve_mass(pq, top_n):
    p, q = pq
    view = tree_view(p, q, top_n=top_n)
    flows = mass_flows(view)
    d = decompose(p, q)
    np.testing.assert_allclose(flows.rejected.sum(axis=1), view.aggregate(d.surplus), atol=1e-12)
    np.testing.assert_allclose(flows.rejected.sum(axis=0), view.aggregate(d.deficit), atol=1e-12)
    np.testing.assert_allclose(flows.accepted + flows.rejected.sum(axis=1), flows.q, atol=1e-12)
    np.testing.assert_allclose(flows.accepted + flows.rejected.sum(axis=0), flows.p, atol=1e-12)
    assert flows.rejected.sum() == pytest.approx(d.rejection_mass, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(pairs(max_size=8), st.integers(1, 9))
def test_sankey_links_add_up_to_q_on_the_left_and_p_on_the_right(pq, top_n):
    p, q = pq
    view = tree_view(p, q, top_n=top_n)
    sankey = sankey_figure(view, TEXT).data[0]
    flows = mass_flows(view)
    left = [g for g in range(len(view.labels)) if flows.q[g] > 0]
    right = [g for g in range(len(view.labels)) if flows.p[g] > 0]
    src = np.array(sankey.link.source)
    tgt = np.array(sankey.link.target)
    val = np.array(sankey.link.value)
    assert (val > 0).all()
    out = [val[src == i].sum() for i in range(len(left))]
    into = [val[tgt == len(left) + i].sum() for i in range(len(right))]
    np.testing.assert_allclose(out, flows.q[left], atol=1e-12)
    np.testing.assert_allclose(into, flows.p[right], atol=1e-12)
    red = np.array([c == palette.rgba(palette.REJECTED, 0.45) for c in sankey.link.color])
    assert val[red].sum() == pytest.approx(decompose(p, q).rejection_mass, abs=1e-12)


def test_abc_sankey_moves_c_surplus_into_a_and_b():
    view = _abc()
    flows = mass_flows(view)
    np.testing.assert_allclose(flows.rejected[2], [0.1, 0.3, 0.0], atol=1e-15)
    hovers = sankey_figure(view, TEXT).data[0].link.customdata
    assert TEXT["sankey_moved"].format(src="C", dst="B", surplus="0.4", r="0.75", mass="0.3") in hovers


def test_path_nodes_follow_a_step_through_the_tree():
    view = _abc()
    kinds = [[view.tree.nodes[i].kind for i in path_nodes(view, step)] for step in (
        StepResult(2, True, 2), StepResult(2, False, 1), StepResult(0, True, 0))]  # fmt: skip
    assert kinds == [
        ["root", "proposal", "accept"],
        ["root", "proposal", "reject", "resample"],
        ["root", "proposal", "accept"],
    ]
    path = path_nodes(view, StepResult(2, False, 1))
    assert view.tree.nodes[path[-1]].label == "B" and view.tree.nodes[path[1]].label == "C"
    with pytest.raises(ValueError, match="no reject branch"):
        path_nodes(view, StepResult(0, False, 1))  # A is never rejected


def test_paths_of_merged_tokens_land_on_other():
    labels, p, q = _random(0)
    view = tree_view(p, q, labels, top_n=3)
    token = int(view.groups[view.other][np.argmax(q[view.groups[view.other]])])
    path = path_nodes(view, StepResult(token, True, token))
    assert [view.node_group[i] for i in path[1:]] == [view.other, view.other]


def test_sampled_runs_are_reproducible_and_follow_p():
    view = _abc()
    a = draw(start_run(3, seed=11), view.p, view.q, 3000)
    b = draw(draw(start_run(3, seed=11), view.p, view.q, 1000), view.p, view.q, 2000)
    assert a.outcomes == b.outcomes and a.last == b.last and a.n == 3000
    c = draw(start_run(3, seed=12), view.p, view.q, 3000)
    assert c.outcomes != a.outcomes
    counts = tally(view, a)
    assert counts.n == 3000 and counts.counts.sum() == 3000
    assert sum(counts.leaf_counts.values()) == 3000
    assert counts.share.sum() == pytest.approx(1.0)
    assert chisquare(counts.counts, view.tree.p).p_value > 1e-3
    leaves = {n.id: n.mass for n in view.tree.leaves}
    leaf_counts = np.array([counts.leaf_counts.get(i, 0) for i in leaves])
    assert chisquare(leaf_counts, np.array(list(leaves.values()))).p_value > 1e-3
    assert counts.tv < 0.05 and (counts.band > 0).all()
    empty = tally(view, start_run(3, seed=11))
    assert empty.n == 0 and not empty.share.any() and empty.tv == 0


def test_tally_regroups_when_the_tree_collapses():
    labels, p, q = _random(0)
    run = draw(start_run(30, seed=1), p, q, 500)
    for n in (2, 6):
        counts = tally(tree_view(p, q, labels, top_n=n), run)
        assert counts.counts.sum() == 500 and len(counts.counts) == n + 1
    with pytest.raises(ValueError, match="covers 30 tokens"):
        tally(_abc(), run)


def test_tree_figure_labels_every_edge_and_leaf_and_highlights_a_path():
    view = _abc()
    fig = tree_figure(view, text=TEXT)
    notes = [a.text for a in fig.layout.annotations]
    for label in ("q=0.1", "q=0.8", "✓ 1", "✓ 0.5", "✗ 0.5", "r=0.25", "r=0.75"):
        assert label in notes
    nodes = next(tr for tr in fig.data if tr.mode == "markers+text" and TEXT["start"] in tr.text)
    assert {"A <b>0.1</b>", "B <b>0.3</b>", "C <b>0.4</b>"} <= set(nodes.text)
    totals = next(tr for tr in fig.data if tr.marker.symbol == "square")
    assert list(totals.text) == ["A <b>0.2</b>", "B <b>0.4</b>", "C <b>0.4</b>"]
    colours = dict(zip(nodes.text, nodes.marker.color, strict=True))
    assert colours["A"] == palette.DEFICIT and colours["C"] == palette.SURPLUS
    path = path_nodes(view, StepResult(2, False, 1))
    lit = tree_figure(view, highlight=path, text=TEXT)
    lit_nodes = next(tr for tr in lit.data if tr.mode == "markers+text" and TEXT["start"] in tr.text)
    rings = [i for i, c in enumerate(lit_nodes.marker.line.color) if c != palette.WHITE]
    assert rings == sorted(path)


def _segments(fig) -> list[tuple[list, list, str, float, str | None, float]]:
    """Every line segment of the figure's unnamed line traces: (xs, ys, colour, width, dash, opacity)."""
    out = []
    for tr in fig.data:
        if tr.mode != "lines" or tr.showlegend is not False:
            continue
        xs, ys = [], []
        for x, y in [*zip(tr.x, tr.y, strict=True), (None, None)]:
            if x is None:
                out.append((xs, ys, tr.line.color, tr.line.width, tr.line.dash, tr.opacity))
                xs, ys = [], []
            else:
                xs.append(x)
                ys.append(y)
    return out


def test_every_edge_keeps_its_look_in_a_few_traces():
    rng = np.random.default_rng(5)
    view = tree_view(rng.dirichlet(np.ones(30)), rng.dirichlet(np.ones(30)), [f"t{i}" for i in range(30)])
    tree, pos = view.tree, layout(view)
    path = path_nodes(view, draw(start_run(30, 0), view.p, view.q, 5).last)
    for highlight in ((), path):
        fig = tree_figure(view, highlight=highlight, text=TEXT)
        segments = _segments(fig)
        edges = [n for n in tree.nodes if n.parent is not None]
        leaves = [n for n in tree.nodes if n.is_leaf]
        assert len([s for s in segments if s[4] != "dot"]) == len(edges)
        assert len([s for s in segments if s[4] == "dot"]) == len(leaves)
        assert len(fig.data) < len(edges) / 2, "edges of one look share a trace"
        ends = {(s[0][-1], s[1][-1]): s for s in segments if s[4] != "dot"}
        for node in edges:
            _, _, colour, width, _, opacity = ends[(pos.x[node.id], pos.y[node.id])]
            hot = node.id in highlight
            kinds = {"proposal": palette.DRAFT, "accept": palette.ACCEPTED, "reject": palette.REJECTED}
            assert colour == kinds.get(node.kind, palette.DEFICIT)
            assert abs(width - (1.5 + 10 * node.mass + (4 if hot else 0))) <= 0.25, "as thick as its mass"
            assert opacity == (1.0 if hot or not highlight else 0.22)
        if highlight:  # the path is drawn last, on top of the rest
            edge_traces = [t for t in fig.data if t.mode == "lines" and t.showlegend is False]
            looks = [(t.line.width, t.opacity) for t in edge_traces if t.line.dash != "dot"]
            first_hot = next(i for i, (_, o) in enumerate(looks) if o == 1.0)
            assert all(o == 1.0 for _, o in looks[first_hot:])


def test_builders_escape_labels_and_follow_the_text_mapping():
    labels = ["<script>alert(1)</script>", "a&b", "ok"]
    view = tree_view([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], labels)
    run = draw(start_run(3, 0), view.p, view.q, 20)
    figs = [
        tree_figure(view, tally=tally(view, run), text=TEXT),
        leaf_sum_figure(view, TEXT),
        sankey_figure(view, TEXT),
        tally_figure(view, tally(view, run), TEXT),
    ]
    for fig in figs:
        raw = fig.to_json()
        assert "<script>" not in raw and "&lt;script&gt;" in raw
    merged = tree_view([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], labels, top_n=1)
    fig = tree_figure(merged, text={**TEXT, "other": "其他", "col_total": "总和"})
    raw = json.dumps(json.loads(fig.to_json()), ensure_ascii=False)
    assert "其他" in raw and "总和" in raw and '"other' not in raw


def test_display_label_and_numbers():
    assert display_label(" ") == "␣" and display_label("\n") == "↵" and display_label("") == "∅"
    assert display_label(" the") == "␣the"
    assert display_label("abcdefghijklmnop") == "abcdefghi…"
    assert num(0) == "0" and num(0.30000000000000004) == "0.3" and num(1.23e-5) == "1.2e-05"
    assert num(0.0004) != "0"


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_draws_in_each_language(lang):
    text = figure_text("tree", lang)
    view = tree_view([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], ["A", "B", "C"], top_n=2)
    run = draw(start_run(3, 0), view.p, view.q, 50)
    path = path_nodes(view, StepResult(2, False, 0))
    fig = tree_figure(view, highlight=path, tally=tally(view, run), text=text)
    assert f"<b>{text['col_total']}</b>" in [a.text for a in fig.layout.annotations]
    assert leaf_sum_figure(view, text).data[0].name == text["direct"]
    assert sankey_figure(view, text).layout.annotations[0].text == f"<b>{text['sankey_left']}</b>"
    assert tally_figure(view, tally(view, run), text).data[0].name == text["tally_share"]


def test_edge_example_reaches_c_only_by_redraw_and_never_keeps_d():
    pair = examples.to_pair(examples.preset_rows("edge"))
    view = tree_view(pair.p, pair.q, pair.tokens)
    assert view.labels == ["A", "B", "C", "D"]
    assert leaf_split(view).via_reject[2] == pytest.approx(0.4)  # C only through the residual
    assert not any(n.kind == "accept" and n.label == "D" for n in view.tree.nodes)  # D always rejected


def test_totals_never_share_a_row_in_a_one_leaf_tree():
    # A greedy rejection: the draft's only token is rejected and the target's only token redrawn.
    view = tree_view([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], ["A", "B", "C"])
    pos = layout(view)
    assert sum(1 for n in view.tree.nodes if n.is_leaf) == 1
    assert len(set(np.round(pos.total_y, 9))) == len(view.labels)
