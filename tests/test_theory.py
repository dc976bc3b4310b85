"""specdec_core.theory against values worked out by hand."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.theory import (
    best_gamma,
    expected_tokens,
    expected_tokens_curve,
    linear_verify_cost,
    speedup,
    speedup_by_gamma,
)


@pytest.mark.parametrize(
    ("alpha", "gamma", "by_hand"),
    [
        (0.9, 4, 1 + 0.9 + 0.81 + 0.729 + 0.6561),  # 4.0951
        (0.9, 7, (1 - 0.9**8) / 0.1),  # 5.6953 — the essay's table says 6.5
        (0.7, 4, 1 + 0.7 + 0.49 + 0.343 + 0.2401),  # 2.7731
        (0.7, 7, (1 - 0.7**8) / 0.3),  # 3.1412 — the essay's table says 3.6
        (0.5, 4, 1.9375),
        (0.0, 5, 1.0),  # a useless draft still yields the corrected token
        (1.0, 4, 5.0),  # the alpha -> 1 limit is gamma + 1
        (0.5, 0, 1.0),
    ],
)
def test_expected_tokens_by_hand(alpha, gamma, by_hand):
    assert expected_tokens(alpha, gamma) == pytest.approx(by_hand, rel=1e-12)


def test_expected_tokens_is_continuous_at_one():
    assert expected_tokens(1 - 1e-12, 6) == pytest.approx(7.0, rel=1e-9)
    curve = expected_tokens(np.linspace(0, 1, 11), 3)
    assert curve.shape == (11,) and np.all(np.diff(curve) > 0) and curve[-1] == 4.0


def test_seed_table_rows_two_are_wrong():
    table = {(0.9, 4): 4.1, (0.9, 7): 6.5, (0.7, 4): 2.8, (0.7, 7): 3.6, (0.5, 4): 1.9}
    wrong = {k for k, v in table.items() if round(expected_tokens(*k), 1) != v}
    assert wrong == {(0.9, 7), (0.7, 7)}


def test_speedup_by_hand():
    # alpha 0.8, gamma 4, draft step = 0.1 target step, verification = 1 step
    e = 1 + 0.8 + 0.64 + 0.512 + 0.4096
    assert speedup(0.8, 4, 0.1) == pytest.approx(e / 1.4, rel=1e-12)
    assert speedup(0.8, 4, 0.1, verify_cost=1.3) == pytest.approx(e / 1.7, rel=1e-12)
    assert speedup(0.8, 4, 0.1, linear_verify_cost(0.075)) == pytest.approx(e / 1.7, rel=1e-12)
    assert speedup(0.02, 4, 0.40) < 1  # the "bad apprentice": first 8 layers of SmolLM2


def test_best_gamma_moves_with_cost():
    assert best_gamma(0.8, 0.0, max_gamma=12) == 12  # free drafts: longer is always better
    cheap, dear = best_gamma(0.8, 0.05), best_gamma(0.8, 0.3)
    assert cheap > dear >= 1
    g = best_gamma(0.8, 0.1)
    assert all(speedup(0.8, g, 0.1) >= speedup(0.8, h, 0.1) for h in range(1, 33))


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: expected_tokens(1.2, 3), "alpha"),
        (lambda: expected_tokens(float("nan"), 3), "alpha"),
        (lambda: expected_tokens(0.5, -1), "gamma"),
        (lambda: speedup(0.5, 3, -0.1), "cost_ratio"),
        (lambda: speedup(0.5, 3, 0.1, verify_cost=0), "verify_cost"),
        (lambda: best_gamma(0.5, 0.1, max_gamma=0), "max_gamma"),
    ],
)
def test_bad_input(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=5),
    st.integers(0, 40),
    st.floats(0.0, 2.0),
    st.floats(0.2, 3.0),
)
def test_the_curve_and_best_gamma_match_one_gamma_at_a_time(alphas, max_gamma, cost_ratio, per_token):
    curve = expected_tokens_curve(np.array(alphas), max_gamma)
    for g in range(max_gamma + 1):
        assert np.array_equal(curve[g], expected_tokens(np.array(alphas), g))  # bit for bit
    assert expected_tokens_curve(alphas[0], max_gamma)[max_gamma] == expected_tokens(alphas[0], max_gamma)
    if max_gamma == 0:
        return
    verify = linear_verify_cost(per_token)
    gammas = np.arange(0, max_gamma + 1)
    table = speedup_by_gamma(np.array(alphas), gammas, cost_ratio, verify)  # row γ, column α
    for g in gammas:
        assert np.allclose(
            table[g], speedup(np.array(alphas), int(g), cost_ratio, verify), rtol=1e-15, atol=0
        )
    for a in alphas:
        values = [speedup(a, g, cost_ratio, verify) for g in range(1, max_gamma + 1)]
        smallest_best = 1 + next(i for i, v in enumerate(values) if v >= max(values) - 1e-12)
        assert best_gamma(a, cost_ratio, verify, max_gamma) == smallest_best
    assert best_gamma(np.array(alphas), cost_ratio, verify, max_gamma).tolist() == [
        best_gamma(a, cost_ratio, verify, max_gamma) for a in alphas
    ]
