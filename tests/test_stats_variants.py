"""Chi-square, total variation, and the exact rule beside its broken variants."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.stats import chi2_sf, chisquare, total_variation
from specdec_core.variants import FEW_OUTCOMES, MAX_TRIALS, VARIANTS, _draws, emitted_law, simulate
from specdec_core.verify import inverse_cdf

P = np.array([0.2, 0.4, 0.4])
Q = np.array([0.1, 0.1, 0.8])


@pytest.mark.parametrize(("stat", "dof"), [(3.0, 2), (10.0, 5), (0.5, 1), (50.0, 3), (120.0, 80), (1e-3, 3)])
def test_chi2_sf_matches_torch(stat, dof):
    ref = torch.special.gammaincc(
        torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)
    )
    assert chi2_sf(stat, dof) == pytest.approx(float(ref), rel=1e-8)


def test_chisquare_pools_small_bins_and_flags_impossible_counts():
    law = np.array([0.5, 0.49, 0.005, 0.005])
    res = chisquare(np.array([50, 49, 1, 0]), law)
    assert res.dof == 2  # the two rare bins were pooled
    assert chisquare(np.array([5, 5, 0]), np.array([0.5, 0.5, 0.0])).p_value == pytest.approx(1.0)
    impossible = chisquare(np.array([5, 4, 1]), np.array([0.5, 0.5, 0.0]))
    assert impossible.p_value == 0.0 and math.isinf(impossible.statistic)


def test_total_variation():
    assert total_variation(P, Q) == pytest.approx(0.4)
    assert total_variation(P, P) == 0.0


def test_broken_variants_have_the_laws_worked_out_by_hand():
    assert np.allclose(emitted_law(P, Q, "exact"), P)
    # resample from p: accepted mass (0.1, 0.1, 0.4) + 0.4 * p
    assert np.allclose(emitted_law(P, Q, "resample_from_p"), [0.18, 0.26, 0.56])
    # argmax match (argmax p = B, lowest index of the tie B/C): q(B) on B, the rest from p
    assert np.allclose(emitted_law(P, Q, "argmax_match"), [0.18, 0.46, 0.36])
    # a greedy draft (always C) that reports q: C accepted half the time, else residual
    assert np.allclose(emitted_law(P, Q, "draft_mismatch", [0, 0, 1.0]), [0.125, 0.375, 0.5])
    for variant in VARIANTS[1:]:
        law = emitted_law(P, Q, variant, [0, 0, 1.0])
        assert total_variation(law, P) > 0.05 and abs(law.sum() - 1) < 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
def test_monte_carlo_matches_each_variants_law(variant):
    q_actual = [0.0, 0.0, 1.0] if variant == "draft_mismatch" else None
    sim = simulate(P, Q, MAX_TRIALS, np.random.default_rng(11), variant, q_actual)
    assert sim.counts.sum() == MAX_TRIALS
    assert chisquare(sim.counts, emitted_law(P, Q, variant, q_actual)).p_value > 1e-3
    p_value_vs_p = chisquare(sim.counts, P).p_value
    assert (p_value_vs_p > 1e-3) if variant == "exact" else (p_value_vs_p < 1e-12)


def test_simulate_edge_cases():
    sim = simulate([0.5, 0.5], [0.5, 0.5], 1000, np.random.default_rng(0))
    assert sim.accepted == 1000
    with pytest.raises(ValueError, match="trials"):
        simulate(P, Q, MAX_TRIALS + 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="q_actual"):
        simulate(P, Q, 10, np.random.default_rng(0), "draft_mismatch")
    with pytest.raises(ValueError, match="unknown variant"):
        emitted_law(P, Q, "nope")


@settings(max_examples=200, deadline=None)
@given(
    weights=st.lists(st.integers(0, 20), min_size=1, max_size=FEW_OUTCOMES + 6).filter(any),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_fast_draws_pick_what_inverse_cdf_picks(weights, seed):
    """The comparison-pass draws (few outcomes) against the reference binary search, uniform
    by uniform; zero weights (leading, inner, trailing) are never picked."""
    dist = np.array(weights, dtype=np.float64) / 7.0
    drawn = _draws(dist, 2000, np.random.default_rng(seed))
    expected = inverse_cdf(dist, np.random.default_rng(seed).random(2000))
    assert np.array_equal(drawn, expected)
    assert (dist[drawn] > 0).all()


def test_simulate_counts_every_trial_once_for_each_variant_and_size():
    for size in (1, 2, FEW_OUTCOMES, FEW_OUTCOMES + 1):
        p = np.arange(1, size + 1, dtype=np.float64)
        p /= p.sum()
        q = p[::-1].copy()
        for variant in VARIANTS:
            q_actual = q[::-1].copy() if variant == "draft_mismatch" else None
            sim = simulate(p, q, 5000, np.random.default_rng(size), variant, q_actual)
            assert sim.counts.dtype == np.int64 and sim.counts.shape == (size,)
            assert sim.counts.sum() == 5000 and 0 <= sim.accepted <= 5000
