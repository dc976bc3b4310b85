"""Tree-draft figures: built from plain data with the TOML strings, labels escaped."""

import numpy as np
import pytest

from specdec_core.course import tree_drafts as td
from specdec_core.viz import tree_drafts as viz
from tests.figure_strings import LANGS, string


def _text(lang):
    return dict(string(lang, "tree_drafts", "fig"))


@pytest.mark.parametrize("lang", LANGS)
def test_every_builder_finds_its_strings(lang):
    text = _text(lang)
    for builder, keys in viz.KEYS.items():
        assert set(keys) <= set(text), (builder, set(keys) - set(text))
    assert set(text) == {k for keys in viz.KEYS.values() for k in keys}  # none unread


def test_round_figures_draw_every_node_and_escape_labels():
    target, draft = td.lesson_pair("story", "poor")
    rnd = td.TreeDemo(target, draft, [0], (2, 2), 1).step()
    text = _text("en")
    labels = ["<b>x</b>"] + [target.labels[t] for t in rnd.tokens[1:]]
    fig = viz.draft_tree_figure(labels, rnd.layout.parents, rnd.status, text, ("y", rnd.kinds[-1]))
    drawn = [i for tr in fig.data if tr.mode == "markers+text" for i in tr.customdata]
    assert sorted(drawn) == list(range(rnd.layout.size + 1))  # + the final token
    assert all("<b>" not in str(t) for tr in fig.data if tr.text is not None for t in tr.text)
    path_edges = [tr for tr in fig.data if tr.mode == "lines" and tr.line.width == 4]
    assert len(path_edges) == len(rnd.path) - 1
    mask = viz.mask_figure(rnd.layout.attention_mask(), labels, rnd.position_ids, text)
    assert np.array(mask.data[0].z).sum() == sum(d + 1 for d in rnd.layout.depths)
    cache = viz.cache_figure(rnd.prefix_length, labels, rnd.kept_slots, text)
    assert len(cache.data[-1].x) == len(rnd.kept_slots)


def test_one_position_figures():
    text = _text("en")
    one = td.one_position(2, False)
    fig = viz.candidate_tree_figure(one.tree, text)
    leaves = sum(v for v in fig.data[0].values)
    assert leaves == pytest.approx(1.0)
    curve = viz.acceptance_figure(one.curves, text)
    assert list(curve.data[1].y) == pytest.approx([0, 0.6, 0.9, 1.0])
    cmp = td.lesson_shapes("story", "poor", 6, 1.0)
    bars = viz.shapes_figure([td.shape_label(s) for s in cmp.shapes], cmp.expected, 0, text)
    assert len(bars.data[0].y) == len(cmp.shapes)
