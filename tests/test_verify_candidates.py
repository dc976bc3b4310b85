"""Several candidates at one position (tree drafts): exact law, acceptance in k, sampled draws."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.stats import chisquare
from specdec_core.verify import (
    acceptance_curve,
    candidate_acceptance,
    candidate_tree,
    greedy_candidates,
    multi_draft_distribution,
    multi_draft_split,
    output_distribution,
    sample,
    verify_candidates,
)
from tests.strategies import distributions, pairs

ALPHA = 1e-3  # significance level of every chi-square test here
P_ABC = np.array([0.2, 0.4, 0.4])
Q_ABC = np.array([0.1, 0.1, 0.8])


@settings(max_examples=300, deadline=None)
@given(pairs(max_size=6), st.integers(0, 4), st.booleans())
def test_law_is_p_for_every_k(pq, k, replacement):
    p, q = pq
    split = multi_draft_split(p, q, k, replacement)
    assert np.all(np.isfinite(split.law)) and np.all(split.accepted >= 0) and np.all(split.residual >= 0)
    np.testing.assert_allclose(split.law, p, atol=1e-12)
    np.testing.assert_allclose(multi_draft_distribution(p, q, k, replacement), p, atol=1e-12)
    assert np.all(np.diff(split.reached) <= 1e-15)  # each candidate is reached no more often


@settings(max_examples=300, deadline=None)
@given(pairs(max_size=6), st.booleans())
def test_acceptance_grows_with_k_and_starts_at_the_overlap(pq, replacement):
    p, q = pq
    curve = acceptance_curve(p, q, 5, replacement)
    assert curve[0] == 0.0
    assert curve[1] == pytest.approx(np.minimum(p, q).sum(), abs=1e-12)
    assert np.all(np.diff(curve) >= -1e-12)
    assert np.all(curve <= 1 + 1e-12)
    np.testing.assert_allclose(
        multi_draft_distribution(p, q, 1, replacement), output_distribution(p, q), atol=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(pairs(max_size=6))
def test_trying_all_of_q_without_replacement_accepts_p_on_its_support(pq):
    p, q = pq
    support = q > 0
    split = multi_draft_split(p, q, int(support.sum()), replacement=False)
    np.testing.assert_allclose(split.accepted[support], p[support], atol=1e-12)
    np.testing.assert_allclose(split.residual[support], 0.0, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 8).flatmap(lambda n: st.tuples(distributions(size=n), st.permutations(range(n)))),
    st.integers(0, 4),
)
def test_point_mass_candidates_as_from_an_ngram_draft(p_perm, k):
    p, order = p_perm
    k = min(k, p.size)
    rows = np.eye(p.size)[list(order[:k])]  # k distinct continuations, each a one-hot q
    split = multi_draft_split(p, rows, k)
    np.testing.assert_allclose(split.law, p, atol=1e-12)
    chosen = list(order[:k])
    np.testing.assert_allclose(split.accepted[chosen], p[chosen], atol=1e-12)  # each stands with its p
    assert split.acceptance == pytest.approx(p[chosen].sum(), abs=1e-12)


def test_seed_example_with_and_without_replacement():
    assert acceptance_curve(P_ABC, Q_ABC, 3, True) == pytest.approx([0, 0.6, 0.68, 0.744], abs=1e-12)
    assert acceptance_curve(P_ABC, Q_ABC, 3, False) == pytest.approx([0, 0.6, 0.9, 1.0], abs=1e-12)
    assert candidate_acceptance(P_ABC, P_ABC, 3) == pytest.approx(1.0)  # p = q: the first one stands


def _draw(q, k, replacement, rng):
    if replacement:
        return [sample(q, rng) for _ in range(k)]
    out, rest = [], q.copy()
    for _ in range(k):
        if rest.sum() <= 0:
            break
        x = sample(rest / rest.sum(), rng)
        out.append(x)
        rest[x] = 0.0
    return out


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_sampled_draws_follow_the_exact_split(replacement, k):
    p = np.array([0.05, 0.3, 0.25, 0.0, 0.4])
    q = np.array([0.4, 0.05, 0.05, 0.3, 0.2])
    split = multi_draft_split(p, q, k, replacement)
    rng = np.random.default_rng(k + 10 * replacement)
    n = 8_000
    counts = np.zeros(2 * p.size)
    for _ in range(n):
        res = verify_candidates(p, q, _draw(q, k, replacement, rng), rng, replacement=replacement)
        counts[res.token + (p.size if res.accepted_index is None else 0)] += 1
    joint = np.concatenate([split.accepted, split.residual])
    assert chisquare(counts, joint).p_value > ALPHA
    assert chisquare(counts[: p.size] + counts[p.size :], p).p_value > ALPHA


def test_sampled_point_masses_follow_p():
    p = np.array([0.1, 0.5, 0.15, 0.25])
    rows = np.eye(4)[[1, 3]]
    rng = np.random.default_rng(3)
    counts = np.zeros(4)
    for _ in range(8_000):
        counts[verify_candidates(p, rows, [1, 3], rng).token] += 1
    assert chisquare(counts, p).p_value > ALPHA


def test_a_candidate_its_q_cannot_draw_or_a_repeat_is_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="probability 0"):
        verify_candidates([0.5, 0.5], [1.0, 0.0], [1], rng)
    with pytest.raises(ValueError, match="distinct"):
        verify_candidates([0.5, 0.5], [0.5, 0.5], [0, 0], rng, replacement=False)
    with pytest.raises(ValueError, match="probability 0"):  # q without x_1 has nothing left
        verify_candidates([0.5, 0.5], [1.0, 0.0], [0, 1], rng, replacement=False)
    with pytest.raises(ValueError, match="one q row per candidate"):
        verify_candidates([0.5, 0.5], np.eye(2), [0, 1], rng, replacement=False)
    with pytest.raises(ValueError, match="sums to"):
        multi_draft_distribution([0.5, 0.6], [0.5, 0.5], 2)


def test_equal_laws_accept_the_first_candidate_and_zero_mass_residual_is_skipped():
    rng = np.random.default_rng(1)
    p = np.array([0.3, 0.7])
    for _ in range(200):
        res = verify_candidates(p, p, [1, 0], rng, replacement=False)
        assert res.accepted_index == 0 and res.tried == 1


def test_greedy_candidates_take_the_argmax_lowest_index_on_a_tie():
    res = greedy_candidates([0.1, 2.0, 2.0, -1.0], [2, 1])
    assert res.token == 1 and res.accepted_index == 1 and res.tried == 2
    res = greedy_candidates([0.1, 2.0, 2.0, -1.0], [2, 3])
    assert res.token == 1 and res.accepted_index is None


@settings(max_examples=100, deadline=None)
@given(pairs(max_size=4), st.integers(1, 2), st.booleans())
def test_candidate_tree_leaves_add_up_to_p(pq, k, replacement):
    p, q = pq
    t = candidate_tree(p, q, k, replacement)
    np.testing.assert_allclose(t.leaf_totals, p, atol=1e-12)
    assert sum(n.mass for n in t.leaves) == pytest.approx(1.0, abs=1e-12)
    children: dict[int, float] = {}
    for n in t.nodes[1:]:
        children[n.parent] = children.get(n.parent, 0.0) + n.mass
    for pid, total in children.items():
        assert total == pytest.approx(t.nodes[pid].mass, abs=1e-12)


def test_the_exact_law_without_replacement_refuses_too_many_orders_even_at_its_last_level(monkeypatch):
    import specdec_core.verify.candidates as candidates

    p, q = np.full(6, 1 / 6), np.array([0.3, 0.3, 0.2, 0.1, 0.05, 0.05])
    full = multi_draft_split(p, q, 2, replacement=False)  # 1 root + 3 orders + their leaves
    assert np.allclose(full.law, p, atol=1e-12)
    monkeypatch.setattr(candidates, "MAX_STATES", 4)  # the root and three first rejections fit
    with pytest.raises(ValueError, match="rejection orders"):
        multi_draft_split(p, q, 2, replacement=False)  # the leaves (last rejections) do not


def _split_by_walking_every_order(p, q, k):
    """Reference: the law without replacement by a depth-first walk of every rejection order."""
    accepted, residual, reached = np.zeros_like(p), np.zeros_like(p), np.zeros(k + 1)

    def walk(p_i, q_i, mass, i):
        if i == k or q_i is None:
            reached[i] += mass if i == k else 0.0
            residual[:] += mass * p_i
            return
        reached[i] += mass
        accepted[:] += mass * np.minimum(p_i, q_i)
        deficit = np.maximum(p_i - q_i, 0.0)
        if deficit.sum() <= 0:
            return
        for x in np.flatnonzero(q_i > p_i):
            rest = q_i.copy()
            rest[x] = 0.0
            walk(
                deficit / deficit.sum(),
                rest / rest.sum() if rest.sum() > 0 else None,
                mass * (q_i[x] - p_i[x]),
                i + 1,
            )

    walk(p, q, 1.0, 0)
    return accepted, residual, reached


@settings(max_examples=300, deadline=None)
@given(pairs(max_size=7), st.integers(0, 4))
def test_the_batched_law_without_replacement_matches_a_walk_of_every_order(pq, k):
    p, q = pq
    split = multi_draft_split(p, q, k, replacement=False)
    accepted, residual, reached = _split_by_walking_every_order(p, q, k)
    np.testing.assert_allclose(split.accepted, accepted, rtol=0, atol=1e-12)
    np.testing.assert_allclose(split.residual, residual, rtol=0, atol=1e-12)
    np.testing.assert_allclose(split.reached, reached, rtol=0, atol=1e-12)


def test_small_batches_give_the_same_law_without_replacement(monkeypatch):
    import specdec_core.verify.candidates as candidates

    rng = np.random.default_rng(7)
    p, q = rng.dirichlet(np.ones(9)), rng.dirichlet(np.ones(9))
    whole = multi_draft_split(p, q, 3, replacement=False)
    monkeypatch.setattr(candidates, "_BATCH_CELLS", 1)  # one order per batch
    one_by_one = multi_draft_split(p, q, 3, replacement=False)
    np.testing.assert_allclose(one_by_one.law, whole.law, rtol=0, atol=1e-14)
    np.testing.assert_allclose(one_by_one.reached, whole.reached, rtol=0, atol=1e-14)
    np.testing.assert_allclose(whole.law, p, atol=1e-12)
