"""Sampling-lab figures and helpers: the drawn numbers are exactly the trace's numbers."""

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.course.sampling_lab import temperature_scale, temperature_sweep
from specdec_core.sampling import TRANSFORMS, SamplingConfig, apply, greedy
from specdec_core.viz.sampling import prob_label, stages_figure, sweep_figure
from tests.figure_strings import LANGS, figure_text

TEXT = figure_text("sampling_lab")

SCALE = temperature_scale(-4, 1)


@st.composite
def cases(draw):
    """Logits (ties and big gaps included) and any sampling settings the lab can produce."""
    n = draw(st.integers(3, 12))
    pool = st.sampled_from([-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 4.0]) | st.floats(-50, 50)
    logits = draw(st.lists(pool, min_size=n, max_size=n))
    config = SamplingConfig(
        temperature=draw(st.sampled_from((0.0, *SCALE))),
        top_k=draw(st.integers(0, 12)),
        top_p=draw(st.sampled_from([0.01, 0.1, 0.3, 0.5, 0.77, 0.9, 0.99, 1.0])),
        min_tokens_to_keep=draw(st.integers(1, 12)),
        order=draw(st.sampled_from(list(itertools.permutations(TRANSFORMS)))),
    )
    return logits, config


def _by_role(fig):
    out = {}
    for trace in fig.data:
        out[(trace.meta["stage"], trace.meta["role"])] = trace
    return out


def _dense(trace, n):
    full = np.zeros(n)
    if trace is not None:
        full[list(trace.x)] = trace.y
    return full


def _all_numbers_finite(fig):
    for trace in fig.data:
        for axis in ("x", "y"):
            values = getattr(trace, axis)
            if values is not None:
                assert np.all(np.isfinite(np.asarray(values, dtype=float))), (trace.name, axis)


@settings(max_examples=30, deadline=None)
@given(cases())
def test_stage_bars_are_the_trace(case):
    logits, config = case
    trace = apply(logits, config)
    n = len(logits)
    fig = stages_figure(trace, config, [f"t{i}" for i in range(n)], TEXT)
    _all_numbers_finite(fig)
    roles = _by_role(fig)
    rows = [0, len(trace.stages) - 1] if config.is_greedy_switch else range(len(trace.stages))
    assert len(fig.layout.annotations) == len(rows)
    previous = None
    for i in rows:
        probs = trace.stages[i][1]
        assert np.array_equal(_dense(roles.get((i, "prob")), n), probs)
        removed = roles.get((i, "removed"))
        cut = np.flatnonzero(trace.removed[i])
        assert list(removed.x if removed else []) == cut.tolist()
        if previous is not None:
            assert np.array_equal(np.asarray(removed.y if removed else [], dtype=float), previous[cut])
            before = roles.get((i, "before"))
            kept = np.flatnonzero(~trace.removed[i] & (previous > 0))
            assert list(before.x) == kept.tolist()
            assert np.array_equal(np.asarray(before.y), previous[kept])
        else:
            assert removed is None and (i, "before") not in roles
        previous = probs
    assert {key[0] for key in roles} <= set(rows)


def test_switch_draws_softmax_then_the_one_hot_of_the_lowest_tied_index():
    logits = [1.0, 3.0, 3.0, 0.0]
    config = SamplingConfig(temperature=0.0, top_k=3)
    fig = stages_figure(apply(logits, config), config, list("abcd"), TEXT)
    roles = _by_role(fig)
    assert len(fig.layout.annotations) == 2
    assert fig.layout.annotations[1].text == TEXT["stage_switch"].format(step=2)
    last = len(config.order)
    assert list(roles[(last, "prob")].x) == [greedy(logits)] == [1]
    assert list(roles[(last, "prob")].y) == [1.0]


def test_titles_report_kept_mass_and_renormalising_factor():
    config = SamplingConfig(top_k=2)
    trace = apply([1.0, 0.9, 0.8, 0.7, 0.6], config)
    titles = [a.text for a in stages_figure(trace, config, list("abcde"), TEXT).layout.annotations]
    kept = trace.kept_mass[2]
    assert titles[2] == TEXT["stage_top_k"].format(step=3, k=2, kept=kept, scale=1 / kept)
    assert titles[3] == TEXT["stage_top_p_off"].format(step=4)
    assert "0.4607" in titles[2] and "2.171" in titles[2]


@pytest.mark.parametrize(
    ("config", "key", "step"),
    [
        (SamplingConfig(top_k=1), "stage_top_k_none", 3),
        (SamplingConfig(top_k=0), "stage_top_k_off", 3),
        (SamplingConfig(top_p=0.99), "stage_top_p_none", 4),
    ],
)
def test_titles_say_off_only_for_the_off_values(config, key, step):
    title = TEXT[key].format(step=step, k=config.top_k, p=config.top_p)
    trace = apply([3.0, 3.0, 3.0], config)  # a three-way tie: k = 1 and p = 0.99 keep all three
    titles = [a.text for a in stages_figure(trace, config, list("abc"), TEXT).layout.annotations]
    assert title in titles


def test_labels_are_escaped_and_text_follows_the_language():
    config = SamplingConfig(top_k=1)
    zh = {**TEXT, "stage_softmax": "{step} · 对 logits 做 softmax", "legend_prob": "这一步之后的概率"}
    fig = stages_figure(apply([2.0, 1.0, 0.0], config), config, ["<script>", "a&b", "ok"], zh)
    ticks = fig.layout.xaxis3.ticktext or fig.layout.xaxis.ticktext
    assert ticks[0].startswith("&lt;script&gt;") and ticks[1].startswith("a&amp;b")
    assert "<script>" not in fig.to_json()
    assert fig.layout.annotations[0].text == "1 · 对 logits 做 softmax"
    assert fig.data[0].name == "这一步之后的概率"


def test_one_label_per_token_is_required():
    config = SamplingConfig()
    with pytest.raises(ValueError, match="one label per token"):
        stages_figure(apply([1.0, 2.0, 3.0], config), config, ["a", "b"], TEXT)


@settings(max_examples=12, deadline=None)
@given(cases())
def test_sweep_lines_are_the_final_distribution_at_each_temperature(case):
    logits, config = case
    temps = np.array([1e-4, 0.003, 0.05, 0.5, 1.0, 4.0])
    sweep = temperature_sweep(logits, config, temps)
    for t, row in zip(temps, sweep.probs, strict=True):
        assert np.array_equal(row, apply(logits, replace(config, temperature=float(t))).probs)
    assert np.array_equal(sweep.support_size, np.count_nonzero(sweep.probs > 0, axis=1))
    current = None if config.is_greedy_switch else 0.5
    fig = sweep_figure(sweep, [f"t{i}" for i in range(len(logits))], current, TEXT)
    _all_numbers_finite(fig)
    lines = [tr for tr in fig.data if "token" in (tr.meta or {})]
    assert [tr.meta["token"] for tr in lines] == list(range(len(logits)))
    for tr in lines:
        assert np.array_equal(np.asarray(tr.y), sweep.probs[:, tr.meta["token"]])
    support = next(tr for tr in fig.data if (tr.meta or {}).get("role") == "support")
    assert list(support.y) == sweep.support_size.tolist()
    notes = [a.text for a in fig.layout.annotations]
    assert (TEXT["sweep_switch_note"] in notes) == (current is None)
    assert bool(fig.layout.shapes) == (current is not None)


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@settings(max_examples=60, deadline=None)
@given(cases(), st.booleans())
def test_the_vectorised_sweep_equals_apply_at_every_default_temperature(case, masked):
    """The sweep computes all 161 temperatures at once (course.sampling_lab._final_rows):
    every value must be apply's own, bit for bit, masked (-inf) logits included."""
    logits, config = case
    if masked:
        logits = [-np.inf, *logits[1:]]
    sweep = temperature_sweep(logits, replace(config, temperature=1.0) if config.is_greedy_switch else config)
    for t, row in zip(sweep.temperatures, sweep.probs, strict=True):
        assert np.array_equal(row, apply(logits, replace(config, temperature=float(t))).probs)


def test_default_sweep_spans_the_slider_and_shows_underflow():
    sweep = temperature_sweep([4.0, 2.0, 1.5, 1.0, 0.0, -0.5], SamplingConfig())
    assert sweep.temperatures[0] == pytest.approx(1e-4) and sweep.temperatures[-1] == pytest.approx(10)
    assert sweep.support_size[0] == 1 and sweep.support_size[-1] == 6


def test_prob_label_never_rounds_below_one_up_to_one():
    assert prob_label(1.0, "≈1") == "1"
    assert prob_label(0.99999, "≈1") == "≈1"
    assert prob_label(0.771228, "≈1") == "0.771"
    assert prob_label(1.4e-87, "≈1") == "1.4e-87"


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_draws_in_each_language(lang):
    text = figure_text("sampling_lab", lang)
    logits = [2.0, 1.0, 0.5, 0.0]
    for config in (SamplingConfig(temperature=0.7, top_k=2, top_p=0.9), SamplingConfig(temperature=0.0)):
        fig = stages_figure(apply(logits, config), config, list("abcd"), text)
        assert fig.layout.annotations[0].text == text["stage_softmax"].format(step=1)
    sweep = temperature_sweep(logits, SamplingConfig())
    for current in (0.5, None):
        fig = sweep_figure(sweep, list("abcd"), current, text)
        assert fig.layout.xaxis2.title.text == text["sweep_t_axis"]
