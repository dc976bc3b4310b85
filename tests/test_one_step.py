"""specdec_core.course.overlap: the breakdown of one step, draft laws, broken variants, Monte Carlo."""

import numpy as np
import pytest
from hypothesis import given, settings

from specdec_core.course import overlap as one_step
from specdec_core.course import pairs
from tests.strategies import pairs as pq_pairs


def _pq(name):
    pair = pairs.to_pair(pairs.preset_rows(name))
    return pair.p, pair.q


def test_abc_preset_is_the_lecture_example():
    pair = pairs.to_pair(pairs.preset_rows("abc"))
    assert pair.tokens == ("A", "B", "C")
    b = one_step.breakdown(pair.p, pair.q)
    d = b.decomposition
    np.testing.assert_allclose(b.alpha, [1, 1, 0.5])
    np.testing.assert_allclose(b.direct, [0.1, 0.1, 0.4])
    np.testing.assert_allclose(d.residual, [0.25, 0.75, 0])
    assert d.rejection_mass == pytest.approx(0.4) and d.acceptance_rate == pytest.approx(0.6)
    np.testing.assert_allclose(b.emitted, pair.p, atol=1e-15)


def test_each_preset_shows_its_case():
    equal = one_step.breakdown(*_pq("equal"))
    assert equal.decomposition.rejection_mass == 0 and equal.decomposition.residual is None
    assert np.all(equal.via_residual == 0) and np.all(np.isfinite(equal.emitted))
    assert one_step.breakdown(*_pq("disjoint")).decomposition.acceptance_rate == 0
    assert one_step.breakdown(*_pq("q_zero")).never_proposed.tolist() == [2]
    assert one_step.breakdown(*_pq("p_zero")).always_rejected.tolist() == [2]
    edge = one_step.breakdown(*_pq("edge"))
    assert edge.never_proposed.tolist() == [2] and edge.always_rejected.tolist() == [3]


def test_draft_laws():
    q = np.array([0.3, 0.3, 0.25, 0.15, 0.0])
    np.testing.assert_array_equal(one_step.draft_law(q, "greedy"), [1, 0, 0, 0, 0])  # tie → lowest index
    np.testing.assert_allclose(one_step.draft_law(q, "sharpened"), q**2 / np.sum(q**2))
    np.testing.assert_allclose(one_step.draft_law(q, "top_k"), [0.5, 0.5, 0, 0, 0])
    with pytest.raises(ValueError, match="unknown draft law"):
        one_step.draft_law(q, "psychic")
    with pytest.raises(ValueError, match="sums to"):
        one_step.draft_law([0.5, 0.6], "greedy")


@settings(max_examples=150, deadline=None)
@given(pq_pairs())
def test_breakdown_adds_up_to_p_for_any_pair(pair):
    p, q = pair
    b = one_step.breakdown(p, q)
    d = b.decomposition
    np.testing.assert_allclose(b.direct, d.overlap, atol=1e-15)
    np.testing.assert_allclose(b.via_residual, d.deficit, atol=1e-12)
    np.testing.assert_allclose(b.direct + b.via_residual, p, atol=1e-12)
    assert b.max_error < 1e-12
    for arr in (b.alpha, b.direct, b.via_residual, b.emitted):
        assert np.all(np.isfinite(arr))
    assert np.all(b.alpha[~b.proposed] == 0)


def test_variant_laws_on_abc():
    p, q = _pq("abc")
    laws = one_step.variant_laws(p, q, one_step.draft_law(q, "greedy"))
    tv = {name: round(dist, 12) for name, (_, dist) in laws.items()}
    assert tv == {
        "exact": 0.0,
        "resample_from_p": 0.16,
        "argmax_match": 0.06,
        "draft_mismatch": 0.1,
        "accept_all": 0.4,  # keeping every draft emits q: TV(p, q) = R
    }
    np.testing.assert_allclose(laws["draft_mismatch"][0], [0.125, 0.375, 0.5])


def test_monte_carlo_exact_fits_and_broken_fails():
    p, q = _pq("abc")
    exact = one_step.monte_carlo(p, q, 100_000, seed=0)
    assert exact.chi.p_value > 1e-3 and exact.trials == 100_000 and exact.counts.sum() == 100_000
    assert exact.acceptance == pytest.approx(0.6, abs=0.01)
    np.testing.assert_allclose(exact.spread, 2 * np.sqrt(p * (1 - p) / 100_000))
    assert np.all(np.abs(exact.frequencies - p) < 2.5 * exact.spread)
    broken = one_step.monte_carlo(p, q, 1_000_000, seed=0, variant="resample_from_p")
    assert broken.chi.p_value < 1e-12 and broken.tv == pytest.approx(0.16, abs=0.005)
    again = one_step.monte_carlo(p, q, 100_000, seed=0)
    assert np.array_equal(again.counts, exact.counts)
