"""Kernels chosen by measurement: every candidate is exact, the fastest one is kept, the choice is
measured once per machine key, and greedy output does not depend on which kernel won."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from specdec_core.engine import autoregressive, draft_cost_ratio, estimate_cost_ratio, generate
from specdec_core.models.hf import HFCausalLM, kernel_choice, kernels
from specdec_core.sampling import SamplingConfig
from support.greedy_check import assert_same_greedy_output

GREEDY = SamplingConfig(temperature=0)


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


@pytest.fixture
def fresh_choices(tmp_path, monkeypatch):
    """An empty cache folder and no choice recorded in this process (restored afterwards)."""
    monkeypatch.setenv("SPECDEC_CACHE_DIR", str(tmp_path))
    saved = dict(kernels._CHOICES)
    kernels.forget_choices()
    yield tmp_path
    kernels.forget_choices()
    kernels._CHOICES.update(saved)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_every_candidate_equals_f_linear_to_rounding(dtype):
    torch.manual_seed(0)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    w, bias = torch.randn(96, 40).to(dtype), torch.randn(96).to(dtype)
    names = kernels.candidates(w)
    assert "linear" in names and len(names) >= 2  # something to choose from on this build
    with torch.inference_mode():
        for rows in (*kernel_choice.BODY_ROWS, 40):
            x = torch.randn(rows, 40).to(dtype)
            want = F.linear(x, w, bias)
            for name, product in names.items():
                got = product(x, w, bias)
                assert got.shape == want.shape and got.dtype == dtype and got.is_contiguous(), name
                torch.testing.assert_close(got, want, atol=tol, rtol=tol, msg=f"{name}, {rows} rows")


def _sleeper(seconds_by_rows, name=None, calls=None):
    def product(x, w, bias=None):
        time.sleep(seconds_by_rows(x.shape[0]))
        if calls is not None:
            calls.append(name)
        return F.linear(x, w, bias)

    return product


def test_the_chooser_keeps_the_fastest_of_kernels_with_known_times():
    calls = {"slow": 0, "fast": 0, "middle": 0}

    def contender(name, seconds):
        def run():
            calls[name] += 1
            time.sleep(seconds)

        return run

    name, best = kernel_choice.fastest(
        {
            "slow": contender("slow", 0.012),
            "fast": contender("fast", 0.001),
            "middle": contender("middle", 0.005),
        }
    )
    assert name == "fast" and best["fast"] < best["middle"] < best["slow"]
    assert calls["slow"] == 2 < calls["fast"]  # far behind after two samples: dropped


def test_calibration_records_the_fastest_kernel_per_row_count(fresh_choices, monkeypatch):
    calls: list[str] = []
    fakes = {
        "linear": _sleeper(lambda rows: 0.004, "linear", calls),
        "packed": _sleeper(lambda rows: 0.008 if rows < 3 else 0.0005, "packed", calls),
        "thin": _sleeper(lambda rows: 0.0005 if rows < 3 else 0.008, "thin", calls),
    }
    monkeypatch.setitem(kernels.KERNELS, torch.float32, fakes)
    w = torch.randn(24, 16)
    got = kernel_choice.calibrate([(w, (1, 2, 5))])
    assert got == {"24x16/float32": {1: "thin", 2: "thin", 5: "packed"}}
    assert [kernels.chosen(w, r) for r in (1, 2, 3, 4, 5, 6)] == [
        "thin",
        "thin",
        "packed",
        "packed",
        "packed",
        "linear",
    ]
    calls.clear()  # the forward pass's product takes the recorded kernel
    with torch.inference_mode(), kernels.row_kernel(5, torch.float32) as product:
        product(torch.randn(5, 16), w)
    with torch.inference_mode(), kernels.row_kernel(1, torch.float32) as product:
        product(torch.randn(1, 16), w)
    assert calls == ["packed", "thin"]


def test_the_choice_is_measured_once_per_machine_key(fresh_choices, monkeypatch):
    measured = []
    real = kernel_choice.measure
    monkeypatch.setattr(
        kernel_choice, "measure", lambda ws, rows: measured.append(list(rows)) or real(ws, rows)
    )
    w = torch.randn(32, 8)
    first = kernel_choice.calibrate([(w, (1, 2))])
    assert measured == [[1, 2]] and kernel_choice.cache_file().exists()
    kernels.forget_choices()  # a new process on the same machine: read from the file
    assert kernel_choice.calibrate([(torch.randn(32, 8), (1, 2))]) == first and measured == [[1, 2]]
    kernel_choice.calibrate([(w, (1, 2, 3))])  # a new row count: only it is measured
    assert measured == [[1, 2], [3]]
    file = kernel_choice.cache_file()
    monkeypatch.setenv(
        "OMP_WAIT_POLICY",
        "ACTIVE" if kernel_choice.machine_key()["omp_wait_policy"] != "ACTIVE" else "PASSIVE",
    )
    assert kernel_choice.cache_file() != file  # another key: measured afresh
    kernels.forget_choices()
    kernel_choice.calibrate([(w, (1,))])
    assert measured[-1] == [1]


def test_a_models_step_is_timed_once_and_prices_its_draft(fresh_choices, tiny, monkeypatch):
    from specdec_core.models import LayerSkipDraft, NGramDraft

    timed = []
    real = HFCausalLM._time_costs
    monkeypatch.setattr(HFCausalLM, "_time_costs", lambda self: timed.append(self.name) or real(self))
    target = HFCausalLM(tiny.module, tiny.tokenizer, name="tiny target")
    again = HFCausalLM(tiny.module, tiny.tokenizer, name="tiny target")
    assert timed == ["tiny target"] and again.step_seconds == target.step_seconds > 0
    assert again.verify_steps == target.verify_steps and set(target.verify_steps) == {1, 2, 4, 8, 16}
    draft = LayerSkipDraft(target, 2)
    assert draft_cost_ratio(target, draft) == pytest.approx(draft.step_seconds / target.step_seconds)
    draft.step_seconds = None  # not timed: the weight-bytes estimate
    assert draft_cost_ratio(target, draft) == estimate_cost_ratio(target, draft)
    assert draft_cost_ratio(target, NGramDraft.for_model(target)) == 0.0


def test_rounds_are_priced_with_the_targets_measured_verification(tiny, monkeypatch):
    from specdec_core.engine import gamma

    monkeypatch.setattr(tiny, "verify_steps", {1: 1.1, 4: 1.4, 8: 2.2})
    cost = gamma.target_verify_cost(tiny)
    assert [cost(g) for g in (0, 1, 2, 4, 6, 8, 10)] == pytest.approx([1.0, 1.1, 1.2, 1.4, 1.8, 2.2, 2.6])
    seen = []
    real = gamma.make_controller
    monkeypatch.setattr("specdec_core.engine.loop.make_controller", lambda *a: seen.append(a[-1]) or real(*a))
    list(generate(tiny, tiny, tiny.encode("the quick"), GREEDY, 2, 4, 0, True))
    assert seen[0](6) == pytest.approx(1.8)  # the controller got the measured table
    monkeypatch.setattr(tiny, "verify_steps", {})
    assert gamma.target_verify_cost(tiny) is gamma.default_verify_cost  # not timed: the default


def test_a_run_keeps_one_draft_cost_from_start_to_end(tiny):
    """Same seed, same inputs, same events: the cost is read once, before the first round."""
    from specdec_core.models import LayerSkipDraft

    draft = LayerSkipDraft(tiny, 2)
    ids = tiny.encode("the quick brown fox")
    runs = [
        [e.to_dict(timings=False) for e in generate(tiny, draft, ids, SamplingConfig(), 3, 16, 5, True)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", ["linear", "packed", "thin"])
def test_greedy_output_is_the_same_whichever_kernel_wins(name, tiny, tiny_hf_folders):
    reference = HFCausalLM.load(tiny_hf_folders["target"], fast=False)
    ids = tiny.encode("the quick brown fox jumps")
    want = [t for e in autoregressive(reference, ids, GREEDY, 20) for t in e.committed]
    saved = dict(kernels._CHOICES)
    try:
        for shape, dtype, by_rows in kernels.all_recorded():
            if dtype == torch.float32:  # the float32 candidates (other models' bf16 stay)
                kernels.record(shape, dtype, {r: name for r in by_rows})
        got = [t for e in autoregressive(tiny, ids, GREEDY, 20) for t in e.committed]
        from specdec_core.models import LayerSkipDraft

        spec = [
            t for e in generate(tiny, LayerSkipDraft(tiny, 2), ids, GREEDY, 4, 20, 0) for t in e.committed
        ]
    finally:
        kernels.forget_choices()
        kernels._CHOICES.update(saved)
    assert assert_same_greedy_output(reference, ids, want, got) >= 10
    assert assert_same_greedy_output(reference, ids, want, spec) >= 10


def test_the_choice_is_shown_as_runs_of_row_counts(fresh_choices):
    assert kernel_choice.runs({1: "linear", 2: "linear", 3: "packed", 5: "packed", 6: "thin"}) == (
        "1–2: linear, 3: packed, 5: packed, 6: thin"
    )
    kernels.record((8, 4), torch.float32, {1: "linear", 2: "packed"})
    assert kernel_choice.summary() == [
        {"weight": "8×4", "dtype": "float32", "kernels": "1: linear, 2: packed"}
    ]
    with pytest.raises(ValueError, match=r"no torch\.float32 kernel named"):
        kernels.record((8, 4), torch.float32, {1: "fastest"})


@pytest.mark.slow
def test_greedy_output_of_the_bundled_model_is_the_same_whichever_kernel_wins(bundled_model):
    ids = bundled_model.encode("List three colours of the rainbow.", chat=True)
    reference = HFCausalLM(bundled_model.module, bundled_model.tokenizer, name="own forward", fast=False)
    want = [t for e in autoregressive(reference, ids, GREEDY, 16) for t in e.committed]
    saved = dict(kernels._CHOICES)
    try:
        for name in ("linear", "packed", "thin"):
            for shape, dtype, by_rows in kernels.all_recorded():
                if dtype == torch.float32:  # the float32 candidates (other models' bf16 stay)
                    kernels.record(shape, dtype, {r: name for r in by_rows})
            got = [t for e in autoregressive(bundled_model, ids, GREEDY, 16) for t in e.committed]
            assert assert_same_greedy_output(reference, ids, want, got) >= 8, name
    finally:
        kernels.forget_choices()
        kernels._CHOICES.update(saved)
    assert np.isfinite(bundled_model.step_seconds)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_about_page_shows_this_machines_kernel_choice(lang, fresh_choices):
    from support.apptest import open_page

    at = open_page("about", lang=lang)
    assert not at.exception and len(at.dataframe) == 0 and len(at.info) == 1  # nothing loaded yet
    kernels.record((8, 4), torch.float32, {1: "linear", 2: "linear", 3: "packed"})
    at = open_page("about", lang=lang)
    assert not at.exception and len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert list(table.iloc[0]) == ["8×4", "float32", "1–2: linear, 3: packed"]
    assert kernel_choice.cpu_model() in at.caption[-1].value
