"""specdec_core.verify: the A/B/C example, exactness properties, statistics, edge cases."""

import numpy as np
import pytest
from hypothesis import given, settings

from specdec_core.stats import chisquare
from specdec_core.verify import (
    acceptance_probs,
    decompose,
    output_distribution,
    rejection_flows,
    sample,
    speculative_step,
    tree,
    verify_block,
)
from tests.strategies import pairs

P_ABC = [0.2, 0.4, 0.4]
Q_ABC = [0.1, 0.1, 0.8]
ALPHA = 1e-3  # significance level of every chi-square test here


def test_seed_example_abc():
    d = decompose(P_ABC, Q_ABC)
    np.testing.assert_allclose(acceptance_probs(P_ABC, Q_ABC), [1, 1, 0.5], atol=1e-15)
    np.testing.assert_allclose(d.overlap, [0.1, 0.1, 0.4], atol=1e-15)
    np.testing.assert_allclose(d.deficit, [0.1, 0.3, 0.0], atol=1e-15)
    np.testing.assert_allclose(d.surplus, [0.0, 0.0, 0.4], atol=1e-15)
    assert d.rejection_mass == pytest.approx(0.4, abs=1e-15)
    assert d.acceptance_rate == pytest.approx(0.6, abs=1e-15)
    np.testing.assert_allclose(d.residual, [0.25, 0.75, 0.0], atol=1e-15)
    np.testing.assert_allclose(output_distribution(P_ABC, Q_ABC), P_ABC, atol=1e-15)
    assert list(d.deficit_set) == [0, 1] and list(d.surplus_set) == [2]


@settings(max_examples=400, deadline=None)
@given(pairs())
def test_emitted_law_is_p_and_mass_is_conserved(pq):
    p, q = pq
    d = decompose(p, q)
    out = output_distribution(p, q)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, p, atol=1e-12)
    assert d.rejection_mass == pytest.approx(d.surplus.sum(), abs=1e-12)
    assert d.rejection_mass == pytest.approx(d.deficit.sum(), abs=1e-12)
    assert d.acceptance_rate == pytest.approx(np.minimum(p, q).sum(), abs=1e-12)
    assert d.acceptance_rate == pytest.approx(1 - d.rejection_mass, abs=1e-12)
    alpha = acceptance_probs(p, q)
    assert np.all(np.isfinite(alpha)) and np.all((alpha >= 0) & (alpha <= 1))
    if d.residual is None:
        np.testing.assert_allclose(p, q, atol=1e-12)
    else:
        assert np.all(np.isfinite(d.residual)) and d.residual.sum() == pytest.approx(1, abs=1e-12)
        assert np.all(d.residual[d.surplus > 0] == 0)


@settings(max_examples=200, deadline=None)
@given(pairs(max_size=8))
def test_tree_leaves_add_up_to_p(pq):
    p, q = pq
    t = tree(p, q)
    np.testing.assert_allclose(t.leaf_totals, p, atol=1e-12)
    assert sum(leaf.mass for leaf in t.leaves) == pytest.approx(1, abs=1e-12)
    for node in t.nodes:
        assert np.isfinite(node.mass) and np.isfinite(node.edge_prob)
        assert 0 <= node.edge_prob <= 1 + 1e-12
    flows = rejection_flows(p, q)
    d = decompose(p, q)
    if d.residual is not None:
        np.testing.assert_allclose(flows.sum(axis=1), d.surplus, atol=1e-12)
        np.testing.assert_allclose(flows.sum(axis=0), d.deficit, atol=1e-12)


def test_tree_of_the_seed_example():
    t = tree(P_ABC, Q_ABC, labels=["A", "B", "C"])
    kinds = [(n.kind, n.label, round(n.mass, 12)) for n in t.nodes]
    assert ("accept", "C", 0.4) in kinds and ("reject", "reject", 0.4) in kinds
    assert ("resample", "A", 0.1) in kinds and ("resample", "B", 0.3) in kinds
    np.testing.assert_allclose(t.leaf_totals, P_ABC, atol=1e-15)


def test_tree_collapses_to_top_n_plus_other_exactly():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(30)), rng.dirichlet(np.ones(30))
    t = tree(p, q, top_n=5)
    assert t.labels[-1] == "other" and len(t.labels) == 6
    assert t.leaf_totals.sum() == pytest.approx(1, abs=1e-12)
    np.testing.assert_allclose(t.leaf_totals, t.p, atol=1e-12)
    accept_other = next(n for n in t.nodes if n.kind == "accept" and n.label == "other")
    others = [i for i in range(30) if str(i) not in t.labels]
    assert accept_other.mass == pytest.approx(np.minimum(p, q)[others].sum(), abs=1e-12)


def test_edge_cases_never_produce_nan():
    # R = 0: identical laws, the residual is never built and nothing is rejected.
    d = decompose([0.5, 0.5], [0.5, 0.5])
    assert d.rejection_mass == 0 and d.residual is None
    rng = np.random.default_rng(0)
    assert all(speculative_step([0.5, 0.5], [0.5, 0.5], rng).accepted for _ in range(200))
    # q(x) = 0 for a token p wants: never proposed, reached only through the residual.
    p, q = [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]
    np.testing.assert_array_equal(acceptance_probs(p, q), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(output_distribution(p, q), p, atol=1e-15)
    # p(x) = 0 < q(x): always rejected.
    steps = [speculative_step(p, q, rng) for _ in range(300)]
    assert all(not s.accepted for s in steps if s.proposed == 2)
    assert all(s.token != 2 for s in steps)


@pytest.mark.parametrize(
    ("p", "q", "needle"),
    [
        ([0.5, float("nan")], [0.5, 0.5], "NaN"),
        ([1.5, -0.5], [0.5, 0.5], "negative"),
        ([0.5, 0.5], [0.2, 0.3, 0.5], "same length"),
        ([0.5, 0.6], [0.5, 0.5], "sums to"),
        ([], [], "empty"),
    ],
)
def test_bad_distributions_raise_readable_errors(p, q, needle):
    with pytest.raises(ValueError, match=needle):
        decompose(p, q)


def test_a_draft_token_outside_q_is_refused():
    with pytest.raises(ValueError, match="probability 0"):
        verify_block([[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0]], [1], np.random.default_rng(0))


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_speculative_step_follows_p():
    rng = np.random.default_rng(12345)
    counts = np.zeros(3)
    n = 20_000  # residual → p or accept-all reach p-values of 0 here; exact reads 0.95
    for _ in range(n):
        counts[speculative_step(P_ABC, Q_ABC, rng).token] += 1
    assert chisquare(counts, np.array(P_ABC)).p_value > ALPHA
    assert chisquare(counts, np.array(Q_ABC)).p_value < 1e-12  # the test can tell p from q


def _random_rows(rng, k, size):
    p_rows = rng.dirichlet(np.full(size, 0.6), size=k + 1)
    q_rows = rng.dirichlet(np.full(size, 0.6), size=k)
    return p_rows, q_rows


def test_verify_block_structure():
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(3000):
        k = int(rng.integers(0, 5))
        p_rows, q_rows = _random_rows(rng, k, 4)
        drafts = [sample(q, rng) for q in q_rows]
        res = verify_block(p_rows, q_rows, drafts, rng)
        assert 1 <= len(res.tokens) <= k + 1
        assert len(res.kinds) == len(res.tokens) and len(res.acceptance_probs) == min(k, res.accepted + 1)
        assert res.kinds[: res.accepted] == ["accepted"] * res.accepted
        assert res.tokens[: res.accepted] == drafts[: res.accepted]
        if res.accepted == k:
            assert res.kinds[-1] == "bonus" and len(res.tokens) == k + 1
        else:
            assert res.kinds[-1] == "corrected" and len(res.tokens) == res.accepted + 1
        seen.add((k, res.accepted))
    assert {(3, 0), (3, 3), (4, 2)} <= seen


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_verify_block_commits_tokens_that_follow_the_target_rows():
    rng = np.random.default_rng(2024)
    p_rows = np.array([[0.2, 0.4, 0.4], [0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    q_rows = np.array([[0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    first, second, third = np.zeros(3), np.zeros(3), np.zeros(3)
    for _ in range(20_000):  # residual → p or accept-all fail the first token at p ≈ 0; exact passes
        drafts = [sample(q, rng) for q in q_rows]
        toks = verify_block(p_rows, q_rows, drafts, rng).tokens
        first[toks[0]] += 1
        if len(toks) > 1:
            second[toks[1]] += 1
        if len(toks) > 2:
            third[toks[2]] += 1
    for counts, row in zip((first, second, third), p_rows, strict=True):
        assert chisquare(counts, row).p_value > ALPHA
    assert chisquare(first, q_rows[0]).p_value < 1e-12


def test_verify_block_with_wrong_row_counts_raises():
    with pytest.raises(ValueError, match="K\\+1"):
        verify_block([[1.0]], [[1.0]], [0], np.random.default_rng(0))
