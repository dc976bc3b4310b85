"""The engine's fast paths equal the reference maths: transforms, greedy verification, gamma."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core.engine.processing as processing
from specdec_core.engine import (
    HeuristicGamma,
    TheoryGamma,
    TopTokens,
    estimate_cost_ratio,
    make_controller,
    verify_greedy,
)
from specdec_core.engine.processing import greedy_choices, process_rows
from specdec_core.models import MarkovChainLM, NGramDraft
from specdec_core.sampling import TRANSFORMS, SamplingConfig, apply
from specdec_core.theory import best_gamma
from specdec_core.verify import verify_block, verify_rows

configs = st.builds(
    SamplingConfig,
    temperature=st.sampled_from([0.0, 0.2, 0.7, 1.0, 2.5]),
    top_k=st.integers(0, 6),
    top_p=st.sampled_from([1.0, 0.95, 0.8, 0.5, 0.2, 0.01]),
    min_tokens_to_keep=st.integers(1, 3),
    order=st.permutations(TRANSFORMS).map(tuple),
)


@st.composite
def logit_blocks(draw):
    """(rows, V) logits with ties (rounded values) and masked tokens (-inf)."""
    v = draw(st.integers(2, 40))
    n = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    z = np.round(rng.normal(size=(n, v)) * draw(st.sampled_from([0.5, 3.0, 20.0])), draw(st.integers(0, 2)))
    z[rng.random(z.shape) < 0.15] = -np.inf
    z[:, 0] = np.where(np.isfinite(z[:, 0]), z[:, 0], 1.0)
    return z


@settings(max_examples=300, deadline=None)
@given(logit_blocks(), configs, st.sampled_from([3, 5, 1024]))
def test_block_transforms_equal_sampling_apply_exactly(z, cfg, window):
    """Bit for bit, with the top-p window shortcut taken (small windows) or not."""
    processing._TOP_P_WINDOW = window
    try:
        fast = process_rows(torch.from_numpy(z), cfg)
    finally:
        processing._TOP_P_WINDOW = 1024
    for i, row in enumerate(z):
        np.testing.assert_array_equal(fast[i], apply(row, cfg).probs)


@pytest.mark.parametrize(
    "cfg",
    [
        SamplingConfig(0.7),
        SamplingConfig(1.0, 50, 0.9),
        SamplingConfig(1.3, 0, 0.95, 3),
        SamplingConfig(0.0),
        SamplingConfig(1.0, 0, 0.999, order=("top_p", "temperature", "top_k")),
        SamplingConfig(1.0, 0, 1 - 1e-16),
    ],
)
def test_full_vocabulary_rows_match_exactly(cfg):
    rng = np.random.default_rng(1)
    z = rng.standard_t(3, size=(3, 49152)) * 2.5  # heavy-tailed like real logits
    z[0, :4] = z[0].max() + 1  # a four-way tie at the top
    z[1] = rng.normal(size=49152)  # flat: the nucleus is thousands of tokens (full sort)
    fast = process_rows(torch.from_numpy(z).float(), cfg)
    for i in range(3):
        np.testing.assert_array_equal(fast[i], apply(z[i].astype(np.float32).astype(np.float64), cfg).probs)


def test_the_top_p_window_is_used_on_peaked_rows(monkeypatch):
    calls = []
    monkeypatch.setattr(processing, "top_p_removed", lambda *a: calls.append(a) or np.zeros(a[0].size, bool))
    z = np.random.default_rng(2).normal(size=(2, 5000)) * 4
    process_rows(z, SamplingConfig(1.0, 0, 0.6, 2))
    assert calls == []  # decided inside the window, no full sort
    process_rows(np.zeros((1, 5000)), SamplingConfig(1.0, 0, 0.6))
    assert len(calls) == 1  # a flat row: the nucleus is wider than the window


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_greedy_verify_makes_verify_blocks_decisions_with_the_same_draws(k, v, seed):
    rng = np.random.default_rng(seed)
    choice = rng.integers(0, v, size=k + 1).tolist()
    drafts = [c if rng.random() < 0.6 else int(rng.integers(0, v)) for c in choice[:k]]
    eye = np.eye(v)
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    fast = verify_greedy(choice, drafts, a)
    ref = verify_block(eye[choice], eye[drafts], drafts, b)
    assert fast == ref
    assert a.random() == b.random()  # both consumed the stream identically


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), st.integers(2, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_on_demand_verification_makes_verify_blocks_decisions_with_the_same_draws(k, v, seed, close):
    """Rows read lazily, left to right: same result, same rng stream, rows after a rejection unread."""
    rng = np.random.default_rng(seed)
    p_rows = rng.dirichlet(np.full(v, 0.5), size=k + 1)
    q_rows = 0.7 * p_rows[:k] + 0.3 * rng.dirichlet(np.full(v, 0.5), size=k) if close else None
    if q_rows is None:
        q_rows = rng.dirichlet(np.full(v, 0.5), size=k)
    if k and rng.random() < 0.3:
        q_rows[0] = p_rows[0]  # R = 0 at the first position
    drafts = [int(rng.choice(v, p=q)) for q in q_rows]
    read: list[int] = []

    def p_row(i):
        read.append(i)
        return p_rows[i]

    a, b = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    lazy, used = verify_rows(p_row, list(q_rows), drafts, a)
    ref = verify_block(p_rows, q_rows if k else np.zeros((0, v)), drafts, b)
    assert lazy == ref
    assert a.random() == b.random()
    assert read == list(range(len(ref.tokens)))  # one row per committed token, in order
    np.testing.assert_array_equal(np.array(used), p_rows[: len(ref.tokens)])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 6), st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_greedy_choices_read_rows_only_up_to_the_first_mismatch(k, v, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(k + 1, v))
    full = np.argmax(logits, axis=1).tolist()
    drafts = [c if rng.random() < 0.7 else int(rng.integers(0, v)) for c in full[:k]]
    read: list[int] = []

    def row(i):
        read.append(i)
        return torch.from_numpy(logits[i : i + 1])

    choice = greedy_choices(row, drafts)
    mismatch = next((i for i, x in enumerate(drafts) if x != full[i]), k)
    assert choice == full[: mismatch + 1] and read == list(range(mismatch + 1))
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    assert verify_greedy(choice, drafts, a) == verify_greedy(full, drafts, b)
    assert a.random() == b.random()


def test_top_tokens_keep_exact_mass():
    p = np.array([0.1, 0.4, 0.0, 0.4, 0.1])
    row = TopTokens.from_probs(p, 3)
    assert row.ids == [1, 3, 0] and row.probs == [0.4, 0.4, 0.1]
    assert row.other == pytest.approx(0.1) and row.prob(2) is None and row.prob(3) == 0.4
    assert TopTokens.from_probs(p, 10).ids == [1, 3, 0, 4]  # zeros are left out
    assert TopTokens.from_dict(row.to_dict()) == row


def test_heuristic_gamma_follows_transformers_rule_within_bounds():
    c = HeuristicGamma(4, 1, 8)
    c.update(4, 4, False)
    assert c.next_gamma() == 6
    c.update(6, 6, False)
    c.update(8, 8, False)
    assert c.next_gamma() == 8
    c.update(8, 2, True)
    assert c.next_gamma() == 7
    c.update(0, 0, False)  # nothing proposed: no evidence
    assert c.next_gamma() == 7
    for _ in range(10):
        c.update(3, 0, True)
    assert c.next_gamma() == 1
    assert make_controller(3, False).next_gamma() == 3
    with pytest.raises(ValueError):
        make_controller(3, "sometimes")


def test_theory_gamma_follows_the_cost_model_and_switches_a_bad_draft_off():
    good = TheoryGamma(4, cost_ratio=0.3)
    for _ in range(30):
        good.update(5, 4, True)  # four of five drafts stand each round
    assert good.alpha == pytest.approx(0.8, abs=0.02)
    assert 0 < good.next_gamma() == best_gamma(good.alpha, 0.3, good.verify_cost, max_gamma=16) < 8
    free = TheoryGamma(4, cost_ratio=0.0)
    free.update(4, 4, False)
    assert free.next_gamma() > 8  # an accepted lookup is nearly free: draft long
    free = TheoryGamma(4, cost_ratio=0.0)
    for _ in range(80):  # α̂ must fall below ≈ 0.04 (γ = 1 verifies in 1.04 steps): a free draft stops paying
        free.update(max(free.next_gamma(), 1), 0, True)
    assert free.next_gamma() == 0  # it keeps missing: plain target steps
    near = {m: TheoryGamma(4, cost_ratio=0.8, off_margin=m) for m in (0.0, 0.05)}
    for c in near.values():
        for _ in range(40):
            c.update(5, 4, True)  # α̂ ≈ 0.8 at 0.8 steps a draft: just below break-even
        assert c.alpha == pytest.approx(0.8, abs=0.005)
    assert near[0.0].next_gamma() == 0  # predicted 0.98× at best (γ = 1): off at once
    assert near[0.05].next_gamma() == 1  # within the margin: keeps drafting, no on/off flapping
    lookup = TheoryGamma(4, cost_ratio=0.0)
    for _ in range(3):
        lookup.update(2, 0, True)
    before = (lookup.next_gamma(), lookup.alpha)
    assert before[0] > 0
    for _ in range(50):
        lookup.update(0, 0, False)  # asked for drafts, none proposed: no evidence either way
    assert (lookup.next_gamma(), lookup.alpha) == before
    idle = 0
    while free.next_gamma() == 0:
        free.update(0, 0, False)  # no evidence: old misses fade, it tries again
        idle += 1
    assert 1 <= idle <= 20

    def idle_rounds(controller: TheoryGamma) -> int:
        for _ in range(200):  # misses until it switches off
            controller.update(max(controller.next_gamma(), 1), 0, True)
            if controller.next_gamma() == 0:
                break
        assert controller.next_gamma() == 0
        n = 0
        while controller.next_gamma() == 0:
            controller.update(0, 0, False)
            n += 1
        return n

    # a model draft must read every token it missed before it can draft again: it forgets
    # its misses more slowly while switched off; a lookup restarts for free and does not
    slow = idle_rounds(TheoryGamma(4, cost_ratio=0.4))
    assert slow > 2 * idle_rounds(TheoryGamma(4, cost_ratio=0.4, idle_memory=0.8))
    assert idle_rounds(TheoryGamma(4, cost_ratio=0.0, idle_memory=0.99)) == idle_rounds(TheoryGamma(4, 0.0))
    assert make_controller(4, True, cost_ratio=0.3).state()["controller"] == "theory"


def test_theory_gamma_counts_its_memory_in_drafts_not_rounds():
    short, long = TheoryGamma(4, cost_ratio=0.69), TheoryGamma(4, cost_ratio=0.69)
    for _ in range(20):
        short.update(1, 1, False)  # 20 drafts in 20 rounds of γ = 1 …
    long.update(20, 20, False)  # … or in one round: the same evidence
    for c in (short, long):
        c.update(1, 0, True)
    # with a per-round memory the short rounds would keep only ≈ 5 drafts: α̂ ≈ 0.82, γ = 0
    assert short.alpha > 0.9 and long.alpha > 0.9 and abs(short.alpha - long.alpha) < 0.03
    assert short.next_gamma() == long.next_gamma() >= 1  # still drafting


def test_cost_ratio_estimates():
    chain = MarkovChainLM.random(3, seed=0)
    assert estimate_cost_ratio(chain, NGramDraft.for_model(chain)) == 0.0
    assert estimate_cost_ratio(chain, chain) == 0.25


def test_default_verify_cost_follows_the_measured_table_between_and_past_its_points():
    from specdec_core.engine.gamma import VERIFY_STEPS, default_verify_cost

    assert default_verify_cost(0) == 1.0  # a plain step
    for gamma, steps in VERIFY_STEPS.items():
        assert default_verify_cost(gamma) == pytest.approx(steps)
    assert default_verify_cost(7) == pytest.approx((VERIFY_STEPS[6] + VERIFY_STEPS[8]) / 2)
    slope = (VERIFY_STEPS[16] - VERIFY_STEPS[12]) / 4
    assert default_verify_cost(20) == pytest.approx(VERIFY_STEPS[16] + 4 * slope)
    costs = [default_verify_cost(g) for g in range(0, 40)]
    assert all(b > a for a, b in itertools.pairwise(costs))  # each extra token costs something
