"""specdec_core.pairs: presets, codecs, table edits, draft laws, breakdown, Monte Carlo."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import pairs
from tests.strategies import pairs as pq_pairs


def test_abc_preset_is_the_lecture_example():
    pair = pairs.preset("abc")
    assert pair.tokens == ("A", "B", "C")
    b = pairs.breakdown(pair.p, pair.q)
    d = b.decomposition
    np.testing.assert_allclose(b.alpha, [1, 1, 0.5])
    np.testing.assert_allclose(b.direct, [0.1, 0.1, 0.4])
    np.testing.assert_allclose(d.residual, [0.25, 0.75, 0])
    assert d.rejection_mass == pytest.approx(0.4) and d.acceptance_rate == pytest.approx(0.6)
    np.testing.assert_allclose(b.emitted, pair.p, atol=1e-15)


def test_each_preset_shows_its_case():
    equal = pairs.breakdown(*_pq("equal"))
    assert equal.decomposition.rejection_mass == 0 and equal.decomposition.residual is None
    assert np.all(equal.via_residual == 0) and np.all(np.isfinite(equal.emitted))
    assert pairs.breakdown(*_pq("disjoint")).decomposition.acceptance_rate == 0
    assert pairs.breakdown(*_pq("q_zero")).never_proposed.tolist() == [2]
    assert pairs.breakdown(*_pq("p_zero")).always_rejected.tolist() == [2]
    assert set(pairs.preset_names()) == {"abc", "equal", "disjoint", "q_zero", "p_zero", "random"}


def _pq(name):
    pair = pairs.preset(name)
    return pair.p, pair.q


def test_unknown_preset_is_a_plain_error():
    with pytest.raises(ValueError, match="unknown preset"):
        pairs.preset("nope")


def test_random_pair_is_seeded_sorted_and_exact_on_a_grid():
    a, b, c = pairs.random_pair(20, 5), pairs.random_pair(20, 5), pairs.random_pair(20, 6)
    assert np.array_equal(a.p, b.p) and np.array_equal(a.q, b.q)
    assert not np.array_equal(a.p, c.p)
    assert len(a.tokens) == 20 and len(set(a.tokens)) == 20
    for law in (a.p, a.q):
        assert abs(law.sum() - 1) < 1e-12 and np.all(law >= 0)
        np.testing.assert_allclose(law * 1000, np.round(law * 1000), atol=1e-9)
    assert np.all(np.diff(a.p) <= 0)
    assert pairs.preset("random", 5).p.tolist() == a.p.tolist()


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=40))
def test_float_lists_round_trip_exactly(values):
    assert pairs.parse_floats(pairs.format_floats(values)) == tuple(float(v) for v in values)


@given(st.lists(st.text(max_size=8), min_size=1, max_size=40))
def test_token_lists_round_trip(tokens):
    assert pairs.parse_tokens(pairs.format_tokens(tokens)) == tuple(tokens)


@pytest.mark.parametrize("raw", ["a,b", "0.1,nan", "inf", "", ",".join(["0.1"] * 41)])
def test_bad_float_lists_are_rejected(raw):
    with pytest.raises(ValueError):
        pairs.parse_floats(raw)


def test_make_pair_checks_lengths():
    with pytest.raises(ValueError, match="one entry per token"):
        pairs.make_pair(["a", "b"], [0.5, 0.5], [1.0])
    with pytest.raises(ValueError, match="1 to 40 tokens"):
        pairs.make_pair(["t"] * 41, [1 / 41] * 41, [1 / 41] * 41)


def test_table_edits_change_add_and_delete_rows():
    pair = pairs.preset("abc")
    edits = {
        "edited_rows": {0: {"p": 0.3}, 2: {"token": "<C>", "q": None}},
        "added_rows": [{"token": "D", "p": 0.1}],
        "deleted_rows": [1],
    }
    out = pairs.apply_edits(pair, edits)
    assert out.tokens == ("A", "<C>", "D")
    assert out.p.tolist() == [0.3, 0.4, 0.1]
    assert out.q.tolist() == [0.1, 0.0, 0.0]
    assert pairs.apply_edits(pair, {}).tokens == pair.tokens


def test_normalise():
    np.testing.assert_allclose(pairs.normalise([1, 1, 2]), [0.25, 0.25, 0.5])
    with pytest.raises(ValueError, match="negative"):
        pairs.normalise([1, -1])
    with pytest.raises(ValueError, match="adds up to 0"):
        pairs.normalise([0, 0])


def test_draft_laws():
    q = np.array([0.3, 0.3, 0.25, 0.15, 0.0])
    np.testing.assert_array_equal(pairs.draft_law(q, "greedy"), [1, 0, 0, 0, 0])  # tie → lowest index
    np.testing.assert_allclose(pairs.draft_law(q, "sharpened"), q**2 / np.sum(q**2))
    np.testing.assert_allclose(pairs.draft_law(q, "top_k"), [0.5, 0.5, 0, 0, 0])
    with pytest.raises(ValueError, match="unknown draft law"):
        pairs.draft_law(q, "psychic")
    with pytest.raises(ValueError, match="sums to"):
        pairs.draft_law([0.5, 0.6], "greedy")


@settings(max_examples=150, deadline=None)
@given(pq_pairs())
def test_breakdown_adds_up_to_p_for_any_pair(pair):
    p, q = pair
    b = pairs.breakdown(p, q)
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
    laws = pairs.variant_laws(p, q, pairs.draft_law(q, "greedy"))
    tv = {name: round(dist, 12) for name, (_, dist) in laws.items()}
    assert tv == {"exact": 0.0, "resample_from_p": 0.16, "argmax_match": 0.06, "draft_mismatch": 0.1}
    np.testing.assert_allclose(laws["draft_mismatch"][0], [0.125, 0.375, 0.5])


def test_monte_carlo_exact_fits_and_broken_fails():
    p, q = _pq("abc")
    exact = pairs.monte_carlo(p, q, 100_000, seed=0)
    assert exact.chi.p_value > 1e-3 and exact.trials == 100_000 and exact.counts.sum() == 100_000
    assert exact.acceptance == pytest.approx(0.6, abs=0.01)
    np.testing.assert_allclose(exact.spread, 2 * np.sqrt(p * (1 - p) / 100_000))
    assert np.all(np.abs(exact.frequencies - p) < 2.5 * exact.spread)
    broken = pairs.monte_carlo(p, q, 1_000_000, seed=0, variant="resample_from_p")
    assert broken.chi.p_value < 1e-12 and broken.tv == pytest.approx(0.16, abs=0.005)
    again = pairs.monte_carlo(p, q, 100_000, seed=0)
    assert np.array_equal(again.counts, exact.counts)
