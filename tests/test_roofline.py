"""The roofline lesson's maths (specdec_core.course.roofline): hand-worked passes, the cost
lesson's formula at batch 1, the batch where speculation stops paying, long contexts, its quiz
numbers recomputed, and its figures built in both languages."""

from __future__ import annotations

import json
import re
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from specdec_core.course import cost
from specdec_core.course import roofline as r
from specdec_core.live.machine_profile import HARDWARE_FILE, reference
from specdec_core.theory import expected_tokens, speedup
from specdec_core.viz import roofline as viz

M = r.MODELS
#: The imaginary device of the lesson's worked example and the one of its transfer questions.
WORKED = r.Machine(1000.0, 100_000.0)
QUIZ = r.Machine(1600.0, 400_000.0)


def _setup(machine=WORKED, batch=1, context=0, gamma=4, alpha=0.8, target="llama_8b", draft="llama_1b"):
    return r.Setup(machine, M[target], M[draft], 2.0, batch, context, gamma, alpha)


def test_a_plain_step_at_batch_one_reads_its_weights():
    """8.03e9 bf16 weights = 16.06 GB at 1,000 GB/s: 16.06 ms; 16.06 GFLOP at 100 TFLOP/s: 0.16 ms."""
    step = r.forward(M["llama_8b"], 2.0, WORKED, 1, 1, 0)
    assert step.bytes == pytest.approx(16.06e9)
    assert step.flops == pytest.approx(16.06e9)
    assert step.seconds == pytest.approx(0.01606)
    assert step.memory_bound and step.intensity == pytest.approx(1.0)
    assert WORKED.ridge == 100.0


def test_a_pass_past_the_ridge_costs_its_flops():
    """Batch 64 × 5 tokens = 320 tokens × 16.06 GFLOP at 100 TFLOP/s = 51.392 ms."""
    verify = r.forward(M["llama_8b"], 2.0, WORKED, 64, 5, 0)
    assert not verify.memory_bound
    assert verify.intensity == pytest.approx(320.0)
    assert verify.seconds == pytest.approx(0.051392)


def test_the_kv_cache_adds_bytes_per_sequence_and_attention_flops():
    """Llama 3.1 8B: 2 × 32 layers × 1,024 × 2 bytes = 131,072 bytes per cached position."""
    assert M["llama_8b"].kv_bytes_per_token == 131_072.0
    step = r.forward(M["llama_8b"], 2.0, WORKED, 4, 1, 1000)
    assert step.kv_bytes == 4 * 1000 * 131_072.0
    assert step.flops == pytest.approx(4 * (2 * 8.03e9 + 4 * 32 * 4096 * 1000))


def test_the_worked_example_of_the_lesson():
    one, many = r.evaluate(_setup(batch=1)), r.evaluate(_setup(batch=64))
    assert one.tokens == pytest.approx(3.3616)
    assert one.round_s == pytest.approx(4 * 0.00248 + 0.01606)
    assert one.speedup == pytest.approx(3.3616 * 16.06 / 25.98)
    assert f"{one.speedup:.1f}" == "2.1" and f"{one.cost_ratio:.2f}" == "0.15"
    assert many.round_s * 1000 == pytest.approx(61.312)
    assert f"{many.speedup:.2f}" == "0.88"
    assert r.break_even_batch(_setup(), 1024) == 55
    for lang in ("en", "zh"):
        worked = (LESSONS / lang / "roofline.md").read_text("utf-8").split("section: worked")[1]
        for number in ("3.36", "2.1", "0.88", "55", "51", "61", "26", "0.15"):
            assert number in worked, (lang, number)


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("context", [0, 2048])
def test_the_speedup_is_the_cost_lessons_formula_with_measured_costs(batch, context):
    """At batch 1 (and any batch): S = theory.speedup(α, γ, c, verify cost) with c and the
    verification cost in plain steps, and course.cost agrees."""
    setup = _setup(machine=r.Machine(2039.0, 312_000.0), batch=batch, context=context, gamma=3, alpha=0.7)
    v = r.evaluate(setup)
    assert v.speedup == pytest.approx(speedup(0.7, 3, v.cost_ratio, v.verify_cost), rel=1e-12)
    summary = cost.cost_summary(0.7, 3, v.cost_ratio, v.verify_cost, 8)
    assert summary.speedup == pytest.approx(v.speedup, rel=1e-12)
    assert v.verify_cost == pytest.approx(1.0)  # batch ≤ 3: verification is memory-bound


def test_speedup_by_batch_matches_evaluate_and_break_even_is_the_first_loss():
    setup = _setup(machine=QUIZ, context=1024, gamma=3, alpha=0.7)
    batches = np.array([1, 7, 64, 300, 1000])
    curve = r.speedup_by_batch(setup, batches)
    for b, value in zip(batches, curve, strict=True):
        assert value == pytest.approx(r.evaluate(_setup(QUIZ, int(b), 1024, 3, 0.7)).speedup, rel=1e-12)
    even = r.break_even_batch(setup, 4096)
    assert even is not None
    assert r.speedup_by_batch(setup, np.array([even - 1, even])).tolist() == pytest.approx(
        [
            r.evaluate(_setup(QUIZ, even - 1, 1024, 3, 0.7)).speedup,
            r.evaluate(_setup(QUIZ, even, 1024, 3, 0.7)).speedup,
        ]
    )
    assert (
        r.evaluate(_setup(QUIZ, even - 1, 1024, 3, 0.7)).speedup
        >= 1.0
        > r.evaluate(_setup(QUIZ, even, 1024, 3, 0.7)).speedup
    )
    assert r.break_even_batch(setup, even - 1) is None


def test_a_long_context_keeps_large_batches_memory_bound():
    """MagicDec's point: with 64k tokens cached per sequence every pass stays memory-bound, the
    verification costs one plain step at any batch, and speculation pays where it lost."""
    short, long = _setup(QUIZ, 2048, 1024, 3, 0.7), _setup(QUIZ, 2048, 65536, 3, 0.7)
    assert r.evaluate(short).speedup < 1.0
    v = r.evaluate(long)
    assert v.plain.memory_bound and v.verify.memory_bound and v.verify_cost == pytest.approx(1.0)
    assert v.speedup > 1.0 and r.break_even_batch(long, 2048) is None
    assert r.kv_share(long) > 0.99 > r.kv_share(_setup(QUIZ, 1, 1024, 3, 0.7))


def test_the_roofline_curve_is_flat_then_rises_through_the_passes():
    setup = _setup(QUIZ, 8, 512, 4, 0.8)
    assert r.curve_tokens(setup) == 4 * 251  # four times past the ridge of 250 FLOPs per byte
    intensity, seconds = r.roofline_curve(setup.target, 2.0, QUIZ, 8, 512, r.curve_tokens(setup))
    assert np.all(np.diff(intensity) > 0) and np.all(np.diff(seconds) >= 0)
    assert seconds[0] == seconds[np.searchsorted(intensity, QUIZ.ridge * 0.5)]
    assert seconds[-1] > 10 * seconds[0]
    v = r.evaluate(setup)
    for point in (v.plain, v.verify):
        assert np.interp(point.intensity, intensity, seconds) == pytest.approx(point.seconds, rel=1e-9)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="bandwidth"):
        r.Machine(0.0, 1.0)
    with pytest.raises(ValueError, match="batch"):
        r.forward(M["llama_1b"], 2.0, WORKED, 0, 1, 0)
    with pytest.raises(ValueError, match="γ"):
        r.evaluate(_setup(gamma=0))


# -- the quiz: every number recomputed, in both languages ---------------------------------------------
def _quiz(lang: str) -> list[dict]:
    return tomllib.loads((LESSONS / lang / "roofline.toml").read_text("utf-8"))["quiz"]


def _right(lang: str, i: int) -> str:
    q = _quiz(lang)[i]
    return q["options"][q["answer"]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_numbers_are_recomputed(lang):
    ridge = QUIZ.ridge
    step_ms = r.forward(M["llama_8b"], 2.0, QUIZ, 1, 1, 0).seconds * 1000
    assert f"{ridge:.0f}" in _right(lang, 0) and f"{step_ms:.0f} ms" in _right(lang, 0)
    assert f"{r.evaluate(_setup(QUIZ, 512, 1024, 3, 0.7)).speedup:.2f}×" == _right(lang, 1)
    assert f"{r.evaluate(_setup(QUIZ, 1, 1024, 3, 0.7)).speedup:.2f}×" in _quiz(lang)[1]["options"]
    assert f"{expected_tokens(0.7, 3):.2f}×" in _quiz(lang)[1]["options"]
    short = r.evaluate(_setup(QUIZ, 256, 1024, 3, 0.7)).speedup
    long = r.evaluate(_setup(QUIZ, 256, 65536, 3, 0.7)).speedup
    assert f"{short:.2f}×" in _quiz(lang)[2]["question"] and f"{long:.2f}×" in _right(lang, 2)
    h100 = reference("h100")
    on_h100 = _setup(r.Machine(h100.bandwidth_gbs, h100.compute_gflops), 1, 1024, 4, 0.8, "llama_70b")
    sliders = np.array([2**i for i in range(11)])
    values = r.speedup_by_batch(on_h100, sliders)
    first = int(sliders[np.flatnonzero(values < 1.0)[0]])
    assert _right(lang, 3) == f"{first:,}"


def test_no_hardware_figure_is_written_in_the_lesson():
    """The data-sheet peaks live in assets/hardware.json only: the lesson text never repeats them."""
    figures = set()
    for h in json.loads(HARDWARE_FILE.read_text("utf-8"))["hardware"]:
        bandwidth, compute = h["bandwidth_gbs"], h["compute_gflops"]
        figures |= {f"{bandwidth:g} GB/s", f"{bandwidth:,.0f} GB/s", f"{bandwidth / 1000:g} TB/s"}
        figures |= {f"{compute:g} GFLOP", f"{compute:,.0f} GFLOP", f"{compute / 1000:g} TFLOP"}
    for lang in ("en", "zh"):
        for name in ("roofline.md", "roofline.toml"):
            shown = (LESSONS / lang / name).read_text("utf-8")
            found = {f for f in figures if re.search(rf"(?<![\d.,]){re.escape(f)}", shown)}
            assert not found, (lang, name, found)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figures_build_in_both_languages(lang):
    text = tomllib.loads((LESSONS / lang / "roofline.toml").read_text("utf-8"))["fig"]
    setup = _setup(QUIZ, 64, 4096, 4, 0.8)
    v = r.evaluate(setup)
    roof = viz.roofline_figure(
        r.roofline_curve(setup.target, 2.0, QUIZ, 64, 4096, 1000),
        r.roofline_curve(setup.draft, 2.0, QUIZ, 64, 4096, 1000),
        QUIZ.ridge,
        viz.Point(v.plain.intensity, v.plain.seconds),
        viz.Point(v.verify.intensity, v.verify.seconds),
        viz.Point(v.draft.intensity, v.draft.seconds),
        text,
    )
    assert roof.layout.shapes[0].x0 == QUIZ.ridge
    assert [d.y[0] for d in roof.data[2:]] == pytest.approx(
        [p.seconds * 1000 for p in (v.plain, v.verify, v.draft)]
    )
    batches = np.arange(1, 1025)
    lines = [(c, r.speedup_by_batch(setup, batches, c), c == 4096) for c in (1024, 4096)]
    even = r.break_even_batch(setup, 1024)
    fig = viz.batch_figure(batches, lines, 64, even, text)
    assert fig.data[1].line.width == 4 and fig.data[2].y[0] == pytest.approx(lines[1][1][63])
    assert all(np.isfinite(np.asarray(d.y, dtype=float)).all() for d in fig.data)
