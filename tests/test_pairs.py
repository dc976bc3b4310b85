"""specdec_core.course.pairs: the examples, the random pair, checks, normalisation and the URL codec."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.course import pairs
from specdec_core.verify import decompose
from tests.strategies import pairs as pq_pairs


def test_abc_is_the_lecture_example_and_comes_first():
    assert pairs.preset_names()[0] == "abc"
    assert pairs.preset_rows("abc") == [("A", 0.2, 0.1), ("B", 0.4, 0.1), ("C", 0.4, 0.8)]
    assert pairs.preset_names() == ("abc", "equal", "disjoint", "q_zero", "p_zero", "edge", "random")


def test_every_preset_is_a_valid_pair_and_shows_its_case():
    for name in pairs.preset_names():
        for size in (1, 20, 30):
            assert pairs.check(pairs.preset_rows(name, seed=5, size=size)) is None, (name, size)
    case = {name: pairs.to_pair(pairs.preset_rows(name)) for name in pairs.preset_names()}
    assert np.array_equal(case["equal"].p, case["equal"].q)
    assert decompose(case["disjoint"].p, case["disjoint"].q).rejection_mass == 1.0
    for name, never_proposed, never_said in (("q_zero", [2], []), ("p_zero", [], [2]), ("edge", [2], [3])):
        p, q = case[name].p, case[name].q
        assert np.flatnonzero((q == 0) & (p > 0)).tolist() == never_proposed, name
        assert np.flatnonzero((p == 0) & (q > 0)).tolist() == never_said, name


def test_unknown_preset_is_a_plain_error():
    with pytest.raises(ValueError, match="unknown preset"):
        pairs.preset_rows("nope")


@pytest.mark.parametrize("size", [20, 30])
def test_random_pair_is_seeded_sorted_and_exact_on_a_grid(size):
    a, b, c = pairs.random_rows(size, 5), pairs.random_rows(size, 5), pairs.random_rows(size, 6)
    assert a == b and a != c
    pair = pairs.to_pair(a)
    assert len(pair.tokens) == size and len(set(pair.tokens)) == size
    for law in (pair.p, pair.q):
        assert abs(law.sum() - 1) < 1e-12 and np.all(law >= 0)
        np.testing.assert_allclose(law * 10_000, np.round(law * 10_000), atol=1e-9)
        assert all(round(v, 4) == v for v in law)
    assert np.all(np.diff(pair.p) <= 0)
    assert pairs.preset_rows("random", 5, size) == a


@pytest.mark.parametrize("size", [0, 31])
def test_random_pair_size_is_bounded(size):
    with pytest.raises(ValueError, match="1 to 30 tokens"):
        pairs.random_rows(size, 0)


@pytest.mark.parametrize(
    ("rows", "code"),
    [
        ([], "empty"),
        ([("a", 0.5, 0.5)] * 61, "too_many"),
        ([("a", 0.5, 0.5), (" ", 0.5, 0.5)], "blank_label"),
        ([("a", 0.5, None), ("b", 0.5, 1.0)], "missing"),
        ([("a", 0.5, float("nan")), ("b", 0.5, 0.5)], "missing"),
        ([("a", 0.5, float("inf")), ("b", 0.5, 0.5)], "missing"),
        ([("a", 1.5, 0.5), ("b", -0.5, 0.5)], "negative"),
        ([("a", 0.0, 0.5), ("b", 0.0, 0.5)], "zero"),
        ([("a", 0.5, 0.5), ("b", 0.4, 0.5)], "sum"),
    ],
)
def test_check_names_the_problem(rows, code):
    problem = pairs.check(rows)
    assert problem is not None and problem.code == code
    assert problem.normalisable == (code == "sum")
    with pytest.raises(ValueError, match=code):
        pairs.to_pair(rows)


def test_problems_carry_the_details_of_their_message():
    assert pairs.check([("a", 1.5, 0.5), ("b", -0.5, 0.5)]).params == {"row": 2, "column": "p", "value": -0.5}
    assert pairs.check([("a", 1.0, 1.0), ("b", 1.0, None)]).params == {"column": "p", "total": 2.0}
    assert pairs.check([("a", 1.0, 1.0), ("b", 0.0, None)]).params == {"row": 2, "column": "q"}


@settings(max_examples=200, deadline=None)
@given(pq_pairs(), st.sampled_from([0.0, 5e-10, -5e-10, 2e-9, -2e-9, 0.1]))
def test_check_accepts_exactly_what_the_core_accepts(pq, shift):
    p, q = pq
    p = p + shift / p.size
    rows = [(f"t{i}", float(a), float(b)) for i, (a, b) in enumerate(zip(p, q, strict=True))]
    try:
        decompose(p, q)
        core_accepts = True
    except ValueError:
        core_accepts = False
    assert (pairs.check(rows) is None) == core_accepts
    if core_accepts:
        pair = pairs.to_pair(rows)
        assert pair.tokens == tuple(r[0] for r in rows)
        assert np.array_equal(pair.p, p) and np.array_equal(pair.q, q)


def test_normalise():
    rows = pairs.normalise([("a", 1.0, 0.2), ("b", 1.0, 0.3), ("c", 2.0, 0.5)])
    assert rows == [("a", 0.25, 0.2), ("b", 0.25, 0.3), ("c", 0.5, 0.5)] and pairs.check(rows) is None
    rows = pairs.normalise([("a", 2.0, None), ("b", 2.0, 3.0)])
    assert rows == [("a", 0.5, 0.0), ("b", 0.5, 1.0)] and pairs.check(rows) is None
    assert pairs.normalise([("a", 0.0, 1.0)]) == [("a", 0.0, 1.0)]  # no mass to scale: left for check
    assert pairs.check(pairs.normalise([("a", 0.0, 1.0)])).code == "zero"


def test_clean_rows_reads_a_table_editor():
    records = [("a", float("nan"), 0.5), (None, 0.5, None), ("c", 1, 2)]
    assert pairs.clean_rows(records) == [("a", None, 0.5), ("", 0.5, None), ("c", 1.0, 2.0)]


_rows = st.lists(
    st.tuples(
        st.text(max_size=8),
        st.none() | st.floats(0, 1e6, allow_nan=False),
        st.none() | st.floats(-1, 1e6, allow_nan=False),
    ),
    max_size=pairs.MAX_TOKENS,
)


@given(_rows)
def test_table_codec_round_trips_exactly(rows):
    text = pairs.to_json(rows)
    assert pairs.from_json(text) == rows
    assert json.loads(text) == [list(r) for r in rows]


def test_table_codec_rejects_bad_structure():
    assert pairs.from_json('[["x",null,0.5]]') == [("x", None, 0.5)]
    for bad in (
        "nope",
        "{}",
        '[["x",1]]',
        "[[1,0.5,0.5]]",
        '[["x","a",1]]',
        '[["x",true,1]]',
        json.dumps([["t", 0, 0]] * 61),
    ):
        with pytest.raises(ValueError):
            pairs.from_json(bad)
