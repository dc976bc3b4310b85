"""specdec_core.pairs: presets, codecs, table edits."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_core import pairs


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
