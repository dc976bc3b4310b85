"""Helpers of the sampling lab: temperature scale, seeded logits, summaries, table text."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_core.course.sampling_lab import (
    format_logit_table,
    outcome,
    parse_logit_table,
    random_logits,
    snap_temperature,
    temperature_scale,
)
from specdec_core.sampling import SamplingConfig, apply

SCALE = temperature_scale(-4, 1)


def test_temperature_scale_is_round_log_spaced_and_snaps():
    assert SCALE[0] == 0.0001 and SCALE[-1] == 10.0 and 1.0 in SCALE and 0.5 in SCALE
    ratios = np.diff(np.log10(SCALE))
    assert np.all(ratios > 0) and ratios.max() < 0.13
    assert snap_temperature(0.0025, SCALE) == 0.0025
    assert snap_temperature(0.37, SCALE) == 0.4
    for bad in (0.0, 20.0, float("nan")):
        with pytest.raises(ValueError):
            snap_temperature(bad, SCALE)


def test_random_logits_are_seeded():
    assert np.array_equal(random_logits(7, 3), random_logits(7, 3))
    assert not np.array_equal(random_logits(7, 3), random_logits(7, 4))
    assert np.array_equal(random_logits(7, 3), np.round(random_logits(7, 3), 2))
    with pytest.raises(ValueError):
        random_logits(0, 1)


def test_outcome_summarises_the_final_distribution():
    logits = [4.0, 2.0, 1.5, 1.0, 0.0, -0.5]
    out = outcome(logits, apply(logits, SamplingConfig(temperature=0.01)))
    assert out.support_size == 6 and out.greedy_token == 0
    # 1 - e^-200 rounds to 1.0 in float64, yet the last token keeps e^-450 > 0.
    assert out.p_max == 1.0
    assert out.p_min_sampleable == pytest.approx(np.exp(-4.5 / 0.01) / (1 + np.exp(-200)), rel=1e-9)


label_text = st.text(st.characters(codec="utf-8"), max_size=12)


@given(st.lists(st.tuples(label_text, st.floats(-100, 100)), min_size=1, max_size=12))
def test_logit_table_text_round_trips(rows):
    labels = [r[0] for r in rows]
    values = [r[1] for r in rows]
    back_labels, back_values = parse_logit_table(format_logit_table(labels, values))
    assert back_labels == labels
    assert np.array_equal(back_values, np.asarray(values, dtype=float))


@pytest.mark.parametrize("bad", ["a:1,b", "a:x", "a:1\\", "a:nan"])
def test_logit_table_text_rejects_garbage(bad):
    with pytest.raises(ValueError):
        parse_logit_table(bad)


def test_logit_table_text_is_compact():
    assert format_logit_table(["mat", "a,b"], [4.0, -0.5]) == "mat:4,a\\,b:-0.5"
    assert json.dumps(parse_logit_table("mat:4,a\\,b:-0.5")[0]) == '["mat", "a,b"]'
