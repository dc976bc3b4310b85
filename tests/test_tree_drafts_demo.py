"""The Tree drafts lesson data: tree rounds on the Markov pair, exact shapes, the one-position tree."""

import numpy as np
import pytest

from specdec_core.course import tree_drafts as td
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from specdec_core.token_tree import layout_from_parents, node_budget, shapes_with_budget


def test_layout_mask_and_positions_follow_depth_not_index():
    lay = layout_from_parents([-1, 0, 0, 1, 1, 2, 2])  # the full 2-2 tree, breadth first
    assert lay.depths == (0, 1, 1, 2, 2, 2, 2) and node_budget((2, 2)) == 6
    mask = lay.attention_mask()
    assert mask[3].tolist() == [True, True, False, True, False, False, False]  # root, parent, itself
    assert not mask[1, 2] and not mask[5, 3]  # siblings and cousins never see each other
    assert lay.position_ids(10).tolist() == [10, 11, 11, 12, 12, 12, 12]
    assert all(node_budget(s) == 6 for s in shapes_with_budget(6))
    assert (1,) * 6 in shapes_with_budget(6) and (6,) in shapes_with_budget(6)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_rounds_commit_one_path_and_compact_the_cache(temperature):
    target, draft = td.lesson_pair("story", "poor")
    demo = td.TreeDemo(target, draft, [0], (2, 2, 1), 3, SamplingConfig(temperature=temperature))
    for _ in range(40):
        before = len(demo.committed)
        r = demo.step()
        assert 1 <= len(r.committed) <= 4 and len(demo.committed) == before + len(r.committed)
        assert r.kinds[:-1] == ["accepted"] * (len(r.kinds) - 1) and r.kinds[-1] in ("corrected", "bonus")
        assert [r.tokens[i] for i in r.path[1:]] == r.committed[:-1]
        assert (r.kinds[-1] == "bonus") == (r.layout.depths[r.path[-1]] == 3)
        assert r.cache_peak == r.prefix_length + r.layout.size
        assert demo.target_session.tokens == demo.committed[:-1]  # prefix + root + accepted path
        for node in range(1, r.layout.size):  # children of one node are distinct
            sibs = [r.tokens[c] for c in r.layout.children(node)]
            assert len(sibs) == len(set(sibs))


def test_mean_tokens_per_round_matches_the_exact_expectation():
    target, draft = td.lesson_pair("story", "poor")
    demo = td.TreeDemo(target, draft, [0], (2, 2), 11)
    anchors, sizes = [], []
    for _ in range(3000):
        anchors.append(demo.committed[-1])
        sizes.append(len(demo.step().committed))
    law = np.bincount(anchors, minlength=target.vocab_size) / len(anchors)
    expected = td.expected_tokens_tree(target, draft, (2, 2), anchor_law=law)
    se = np.std(sizes) / np.sqrt(len(sizes))
    assert abs(np.mean(sizes) - expected) < 4 * se


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_first_two_tokens_follow_the_target():
    target, draft = td.lesson_pair("random", "poor")
    v = target.vocab_size
    counts = np.zeros(v * v)
    for seed in range(2000):
        demo = td.TreeDemo(target, draft, [0], (3, 2), seed)
        while len(demo.committed) < 3:
            demo.step()
        counts[demo.committed[1] * v + demo.committed[2]] += 1
    t = target.transitions
    law = (t[0][:, None] * t).ravel()
    assert chisquare(counts, law).p_value > 1e-3


def test_trees_win_with_a_poor_draft_and_chains_with_an_identical_one():
    target, poor = td.lesson_pair("story", "poor")
    cmp_poor = td.compare_shapes(target, poor, 6)
    assert cmp_poor.best[1] > cmp_poor.chain and cmp_poor.best[0] != (1,) * 6
    _, same = td.lesson_pair("story", "identical")
    cmp_same = td.compare_shapes(target, same, 6)
    assert cmp_same.best[0] == (1,) * 6 and cmp_same.chain == pytest.approx(7.0)


def test_one_position_tree_adds_up_to_p():
    for k in (1, 2, 3):
        for repl in (True, False):
            one = td.one_position(k, repl)
            np.testing.assert_allclose(one.tree.leaf_totals, td.EXAMPLE_P, atol=1e-12)
    assert one.curves["without"][2] == pytest.approx(0.9) and one.curves["with"][2] == pytest.approx(0.68)


def _tokens_by_walking_the_tree(target, draft, shape, cfg):
    """Reference: expected tokens per round, node by node from each anchor token."""
    from functools import cache

    from specdec_core.sampling import apply
    from specdec_core.token_tree import top_children
    from specdec_core.verify import multi_draft_split

    def accepted(t, b):
        if cfg.temperature == 0:
            out = np.zeros(target.vocab_size)
            best = int(np.argmax(target.next_logits(t)))
            out[best] = 1.0 if best in top_children(draft.next_logits(t), b) else 0.0
            return out
        p, q = apply(target.next_logits(t), cfg).probs, apply(draft.next_logits(t), cfg).probs
        return multi_draft_split(p, q, b, replacement=False).accepted

    @cache
    def tokens_from(t, depth):
        if depth == len(shape):
            return 1.0
        acc = accepted(t, shape[depth])
        stop = 1.0 - acc.sum()  # no child stands: one corrected token
        return stop + sum(acc[y] * (1.0 + tokens_from(int(y), depth + 1)) for y in np.flatnonzero(acc > 0))

    law = td.stationary(target)
    return sum(law[t] * tokens_from(t, 0) for t in range(target.vocab_size) if law[t] > 0)


@pytest.mark.parametrize("temperature", [0.0, 0.7, 1.0])
@pytest.mark.parametrize("draft_kind", ["poor", "good"])
def test_expected_tokens_of_every_shape_match_a_node_by_node_walk(temperature, draft_kind):
    target, draft = td.lesson_pair("story", draft_kind)
    cfg = SamplingConfig(temperature=temperature)
    for shape in [(1,), (1, 1, 1), (3,), (2, 2), (3, 1, 2), (1, 2, 1, 1)]:
        fast = td.expected_tokens_tree(target, draft, shape, cfg)
        assert fast == pytest.approx(_tokens_by_walking_the_tree(target, draft, shape, cfg), abs=1e-12)
