"""verify.project / verify.coverage: a draft's law over its own vocabulary, seen in the target's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_core.verify import coverage, output_distribution, project
from tests.strategies import distributions


@st.composite
def draft_and_map(draw, max_draft: int = 10, max_target: int = 8):
    """(q, to_target, V): a draft law, a map with some −1 and some shared targets, and q
    with mass on at least one mapped token."""
    v = draw(st.integers(1, max_target))
    q = draw(distributions(min_size=1, max_size=max_draft))
    m = np.array(draw(st.lists(st.integers(-1, v - 1), min_size=q.size, max_size=q.size)))
    if q[m >= 0].sum() <= 0:
        i = int(np.argmax(q))
        m[i] = draw(st.integers(0, v - 1))
    return q, m, v


@given(draft_and_map())
def test_projection_is_a_distribution_zero_off_the_image(args):
    q, m, v = args
    r = project(q, m, v)
    assert r.dtype == np.float64 and r.shape == (v,)
    assert np.all(r >= 0) and abs(r.sum() - 1) < 1e-12
    off = np.setdiff1d(np.arange(v), m[m >= 0])
    assert np.all(r[off] == 0)
    mass = q[m >= 0].sum()
    for j in range(v):
        assert r[j] == pytest.approx(q[m == j].sum() / mass, abs=1e-12)


@given(draft_and_map(), st.data())
def test_verifying_against_the_projection_emits_p(args, data):
    q, m, v = args
    p = data.draw(distributions(size=v))
    np.testing.assert_allclose(output_distribution(p, project(q, m, v)), p, atol=1e-12, rtol=0)


@given(draft_and_map())
def test_coverage_is_the_mapped_mass(args):
    q, m, _ = args
    c = coverage(q, m)
    assert 0.0 <= c <= 1.0
    assert c == pytest.approx(q[m >= 0].sum(), abs=1e-12)


def test_identity_map_changes_nothing_and_a_subset_mask_renormalises():
    q = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(project(q, [0, 1, 2, 3], 4), q)
    assert coverage(q, [0, 1, 2, 3]) == 1.0
    np.testing.assert_allclose(project(q, [0, -1, 2, -1], 6), [0.25, 0, 0.75, 0, 0, 0])
    assert coverage(q, [0, -1, 2, -1]) == pytest.approx(0.4)
    np.testing.assert_allclose(project(q, [1, 1, -1, 0], 2), [0.4 / 0.7, 0.3 / 0.7])


@pytest.mark.parametrize(
    ("q", "m", "v", "message"),
    [
        ([0.5, 0.6], [0, 1], 2, "sums to"),
        ([0.5, np.nan], [0, 1], 2, "NaN"),
        ([1.5, -0.5], [0, 1], 2, "negative"),
        ([0.5, 0.5], [0, 1, 1], 2, "same length"),
        ([0.5, 0.5], [0, 2], 2, r"to_target\[1\] = 2 is outside"),
        ([0.5, 0.5], [0, -2], 2, r"to_target\[1\] = -2 is outside"),
        ([0.5, 0.5], [0, 0.5], 2, "whole-number"),
        ([0.5, 0.5], [0, 1], 0, "target_size"),
        ([1.0, 0.0], [-1, 0], 2, "no mass"),
    ],
)
def test_bad_input_is_refused_in_plain_words(q, m, v, message):
    with pytest.raises(ValueError, match=message):
        project(q, m, v)


def test_coverage_checks_its_input_too():
    with pytest.raises(ValueError, match="same length"):
        coverage([0.5, 0.5], [0])
    with pytest.raises(ValueError, match="sums to"):
        coverage([0.5, 0.4], [0, 1])
    assert coverage([1.0, 0.0], [-1, 0]) == 0.0
