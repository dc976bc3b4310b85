"""specdec_core.sampling: stages, greedy verdicts, bad input, parity with transformers."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.generation.logits_process import (
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from specdec_core.sampling import SamplingConfig, apply, greedy, greedy_equivalence, same_as_greedy

PEAKED = [2.0, 1.0, 0.5, 0.5, -1.0]


def test_stages_start_at_softmax_and_follow_the_order():
    cfg = SamplingConfig(temperature=0.7, top_k=3, top_p=0.8, order=("top_p", "temperature", "top_k"))
    trace = apply(PEAKED, cfg)
    assert [name for name, _ in trace.stages] == ["softmax", "top_p", "temperature", "top_k"]
    z = np.array(PEAKED)
    np.testing.assert_allclose(trace.stages[0][1], np.exp(z) / np.exp(z).sum(), rtol=1e-15)
    for _, probs in trace.stages:
        assert probs.dtype == np.float64
        assert np.all(np.isfinite(probs))
        assert abs(probs.sum() - 1) < 1e-12


def test_temperature_is_a_real_division():
    z = np.array(PEAKED)
    probs = apply(z, SamplingConfig(temperature=0.5)).probs
    expected = np.exp(z / 0.5) / np.exp(z / 0.5).sum()
    np.testing.assert_allclose(probs, expected, rtol=1e-12)
    assert np.argsort(-probs)[0] == 0  # order preserved


def test_filters_renormalise_and_record_what_they_cut():
    trace = apply(PEAKED, SamplingConfig(top_k=2))
    name, probs = trace.stages[2]
    assert name == "top_k"
    assert list(np.flatnonzero(probs)) == [0, 1]
    assert list(np.flatnonzero(trace.removed[2])) == [2, 3, 4]
    base = trace.stages[0][1]
    assert trace.kept_mass[2] == pytest.approx(base[0] + base[1], abs=1e-15)
    np.testing.assert_allclose(probs[:2], base[:2] / (base[0] + base[1]), rtol=1e-12)


def test_top_k_keeps_tokens_tied_at_the_cut():
    probs = apply([3.0, 1.0, 1.0, 0.0], SamplingConfig(top_k=2)).probs
    assert list(np.flatnonzero(probs)) == [0, 1, 2]


def test_off_values_change_nothing():
    trace = apply(PEAKED, SamplingConfig())
    for _, probs in trace.stages[1:]:
        np.testing.assert_array_equal(probs, trace.stages[0][1])


def test_greedy_takes_lowest_index_on_ties():
    assert greedy([1.0, 3.0, 3.0, 2.0]) == 1
    assert greedy([0.0, -np.inf, 0.0]) == 0


def test_temperature_zero_is_the_greedy_switch():
    cfg = SamplingConfig(temperature=0, top_p=0.99, min_tokens_to_keep=3)
    trace = apply(PEAKED, cfg)
    np.testing.assert_array_equal(trace.probs, [1, 0, 0, 0, 0])
    same, reason = greedy_equivalence(PEAKED, cfg)
    assert same and reason.code == "temperature_switch"
    assert "convention" in reason


def test_tiny_temperature_with_a_unique_max_is_greedy():
    same, reason = greedy_equivalence(PEAKED, SamplingConfig(temperature=1e-6))
    assert same and reason.code == "temperature_underflow"


def test_small_but_representable_temperature_is_not_greedy():
    same, reason = greedy_equivalence(PEAKED, SamplingConfig(temperature=0.01))
    assert not same and reason.code == "several"


def test_temperature_and_top_k_never_split_a_tie_at_the_top():
    tied = [2.0, 2.0, 0.0]
    for cfg in (SamplingConfig(temperature=1e-8), SamplingConfig(top_k=1), SamplingConfig(top_p=0.6)):
        same, reason = greedy_equivalence(tied, cfg)
        assert not same and reason.code == "tie", cfg
        assert "0, 1" in reason
    same, reason = greedy_equivalence(tied, SamplingConfig(temperature=0))
    assert same and reason.code == "temperature_switch_tie"


def test_a_small_top_p_splits_a_tie_like_transformers_but_not_like_greedy():
    tied = [2.0, 2.0, 0.0]  # p = 0.468, 0.468, 0.063
    for top_p in (0.01, 0.1, 0.4):
        cfg = SamplingConfig(top_p=top_p)
        assert list(apply(tied, cfg).support) == [1]  # the tied token the ascending sort puts last
        theirs = _transformers_probs(np.array(tied), cfg)
        assert list(np.flatnonzero(theirs)) == [1]
        same, reason = greedy_equivalence(tied, cfg)
        assert same and reason.code == "top_p_tie_split"  # one token: deterministic …
        assert not same_as_greedy(same, reason)  # … but not greedy's
        assert reason.params["token"] == 1 and reason.params["greedy"] == 0 == greedy(tied)
    # Three tied at the top, top-k = 1 first (keeps all three), then top-p: the last one stays.
    cfg = SamplingConfig(top_k=1, top_p=0.2)
    assert list(apply([1.0, 1.0, 0.0, 1.0], cfg).support) == [3]
    assert greedy_equivalence([1.0, 1.0, 0.0, 1.0], cfg)[1].params["tied"] == (0, 1, 3)
    # Once top-p exceeds the tied probability the whole group stays.
    assert list(apply(tied, SamplingConfig(top_p=0.5)).support) == [0, 1]


def test_k_equals_one_is_greedy():
    same, reason = greedy_equivalence(PEAKED, SamplingConfig(top_k=1))
    assert same and reason.code == "top_k_one"


def test_top_p_at_or_below_max_prob_is_greedy_and_above_is_not():
    p_max = apply(PEAKED, SamplingConfig()).probs.max()
    same, reason = greedy_equivalence(PEAKED, SamplingConfig(top_p=p_max * 0.999))
    assert same and reason.code == "top_p_threshold"
    same, reason = greedy_equivalence(PEAKED, SamplingConfig(top_p=min(1.0, p_max * 1.01)))
    assert not same and reason.code == "several_top_p"


def test_min_tokens_to_keep_two_blocks_greedy():
    cfg = SamplingConfig(top_p=0.2, min_tokens_to_keep=2)
    same, reason = greedy_equivalence(PEAKED, cfg)
    assert not same and reason.code == "min_tokens_to_keep"
    assert apply(PEAKED, cfg).support.size == 2
    same, _ = greedy_equivalence(PEAKED, SamplingConfig(top_k=1, min_tokens_to_keep=2))
    assert not same


def test_temperature_changes_how_many_tokens_top_p_keeps():
    z = [1.0, 0.5, 0.0, -0.5]
    kept = [apply(z, SamplingConfig(temperature=t, top_p=0.6)).support.size for t in (0.3, 1.0, 3.0)]
    assert kept[0] < kept[1] < kept[2]
    same_low, _ = greedy_equivalence(z, SamplingConfig(temperature=0.3, top_p=0.6))
    same_high, _ = greedy_equivalence(z, SamplingConfig(temperature=3.0, top_p=0.6))
    assert same_low and not same_high


def test_top_k_before_top_p_differs_from_top_p_alone():
    z = [1.0, 0.9, 0.8, 0.7, 0.6]
    alone = apply(z, SamplingConfig(top_p=0.7)).support
    both = apply(z, SamplingConfig(top_k=2, top_p=0.7)).support
    assert alone.size == 4 and both.size == 2
    later = apply(z, SamplingConfig(top_k=2, top_p=0.7, order=("temperature", "top_p", "top_k"))).support
    assert later.size == 2 and not np.array_equal(
        apply(z, SamplingConfig(top_k=2, top_p=0.7)).probs,
        apply(z, SamplingConfig(top_p=0.7)).probs,
    )


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"temperature": -0.1}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
        ({"top_k": -1}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"min_tokens_to_keep": 0}, "min_tokens_to_keep"),
        ({"order": ("top_k", "top_p")}, "order"),
    ],
)
def test_bad_settings_raise_readable_errors(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        SamplingConfig(**kwargs)


@pytest.mark.parametrize("logits", [[1.0, float("nan")], [float("inf"), 0.0], [], [[1.0, 2.0]], ["a"]])
def test_bad_logits_raise(logits):
    with pytest.raises(ValueError, match="logits"):
        apply(logits, SamplingConfig())


def test_all_masked_logits_raise():
    with pytest.raises(ValueError, match="finite"):
        greedy([-np.inf, -np.inf])


def _transformers_probs(z: np.ndarray, cfg: SamplingConfig) -> np.ndarray:
    warpers = {
        "temperature": TemperatureLogitsWarper(cfg.temperature),
        "top_k": TopKLogitsWarper(cfg.top_k, min_tokens_to_keep=cfg.min_tokens_to_keep)
        if cfg.top_k
        else None,
        "top_p": TopPLogitsWarper(cfg.top_p, min_tokens_to_keep=cfg.min_tokens_to_keep)
        if cfg.top_p < 1
        else None,
    }
    chain = LogitsProcessorList([warpers[name] for name in cfg.order if warpers[name] is not None])
    scores = chain(torch.zeros((1, 1), dtype=torch.long), torch.tensor(z[None, :], dtype=torch.float64))
    return torch.softmax(scores, dim=-1)[0].numpy()


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(2, 60),
    temperature=st.floats(0.05, 5.0),
    top_k=st.integers(0, 70),
    top_p=st.floats(0.01, 1.0),
    min_keep=st.integers(1, 4),
    order=st.permutations(["temperature", "top_k", "top_p"]),
)
def test_parity_with_transformers_logits_warpers(seed, size, temperature, top_k, top_p, min_keep, order):
    z = np.random.default_rng(seed).normal(0, 3, size)
    cfg = SamplingConfig(temperature, top_k, top_p, min_keep, tuple(order))
    ours = apply(z, cfg).probs
    theirs = _transformers_probs(z, cfg)
    np.testing.assert_array_equal(ours > 0, theirs > 0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-300)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(2, 40),
    levels=st.integers(1, 4),
    temperature=st.floats(0.05, 5.0),
    top_k=st.integers(0, 6),
    top_p=st.floats(0.01, 1.0),
    min_keep=st.integers(1, 3),
    order=st.permutations(["temperature", "top_k", "top_p"]),
)
def test_parity_with_transformers_logits_warpers_at_ties(
    seed, size, levels, temperature, top_k, top_p, min_keep, order
):
    """Logits on a few integer levels, so most tokens are tied with others."""
    z = np.random.default_rng(seed).integers(0, levels + 1, size).astype(np.float64)
    cfg = SamplingConfig(temperature, top_k, top_p, min_keep, tuple(order))
    ours = apply(z, cfg).probs
    theirs = _transformers_probs(z, cfg)
    if size <= 16:  # torch's CPU sort is stable here: the very same tied tokens survive
        np.testing.assert_array_equal(ours > 0, theirs > 0)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-300)
    else:  # its order among equal values is unspecified: the same values survive
        np.testing.assert_allclose(np.sort(ours), np.sort(theirs), rtol=1e-9, atol=1e-300)
