"""The machine profile: published references, the memory-bound reference, this machine's file."""

from __future__ import annotations

import json

import pytest

from specdec_core.live import machine_profile as mp
from specdec_core.models import MarkovChainLM


def test_the_references_are_the_data_sheets_with_their_sources():
    refs = {h.key: h for h in mp.hardware_references()}
    assert refs["a100"].bandwidth_gbs == 2039.0 and refs["a100"].compute_gflops == 312_000.0
    assert refs["h100"].bandwidth_gbs == 3350.0 and refs["h100"].compute_gflops == 989_000.0
    assert refs["laptop"].bandwidth_gbs > 0 and refs["laptop"].compute_gflops > 0
    for h in refs.values():
        assert "data sheet" in h.source or "derived" in h.source
    assert mp.reference("h100") == refs["h100"]
    with pytest.raises(KeyError):
        mp.reference("nowhere")


def test_memory_bound_prices_every_cost_from_weight_bytes():
    h100 = mp.reference("h100")
    ref = mp.memory_bound(h100, {"m": mp.ModelSize(1_000_000_000, 10, 90_000_000, 2.0)})
    assert ref.source == mp.MEMORY_BOUND
    assert ref.step_ms["m"] == pytest.approx(2e9 / 3350e9 * 1e3)
    assert ref.floor_ms == ref.step_ms
    # a GPU at batch 1: 17 rows are far below the ridge (989 TFLOPS ÷ 3.35 TB/s), one step each
    assert ref.verify_ratio["m"] == {r: 1.0 for r in mp.VERIFY_ROWS}
    assert ref.draft_c["m"] == {}
    cpu = mp.Hardware("cpu", "a CPU", "made up", bandwidth_gbs=100.0, compute_gflops=100.0)
    slow = mp.memory_bound(cpu, {"m": mp.ModelSize(1_000_000, 10, 90_000, 4.0)})
    # 2·10⁶·r FLOPs at 100 GFLOP/s against 4·10⁶ bytes at 100 GB/s: r/2 steps once r > 2
    assert slow.verify_ratio["m"][17] == pytest.approx(8.5)
    assert slow.verify_ratio["m"][2] == 1.0


def test_the_reference_drafts_cost_their_bytes():
    ref = mp.memory_bound(mp.reference("a100"))
    assert ref.draft_c["smollm2"]["bf16"] == 0.5
    assert ref.draft_c["gemma"]["smollm2"] == pytest.approx(134_515_008 / 268_098_176)
    # SmolLM2's first 8 of 30 layers: the embedding and 8 layers of 3,540,096 weights
    assert ref.draft_c["smollm2"]["layerskip:8"] == pytest.approx(
        (134_515_008 - 22 * 3_540_096) / 134_515_008
    )
    assert ref.draft_c["smollm2"]["layerskip:8"] < ref.draft_c["smollm2"]["layerskip:24"] < 1


def test_nothing_measured_loads_none():
    assert mp.load() is None


def test_a_saved_profile_loads_back(pinned_profile):
    got = mp.load()
    assert got == pinned_profile
    assert got.hardware().label == "Pinned CPU, 4 cores"
    assert got.verify_steps("smollm2", 1) == 1.0
    assert got.verify_steps("smollm2", 4) == pytest.approx(1.2)
    assert got.verify_steps("smollm2", 21) == pytest.approx(2.6 + 0.9 / 8 * 4)


def test_the_json_has_the_bench_keys(pinned_profile):
    out = pinned_profile.as_json()
    for key in ("source", "cpu", "threads", "bandwidth_gbs", "compute_gflops"):
        assert key in out
    for m in ("smollm2", "gemma"):
        assert set(out[f"{m}_verify_ratio"]) == {str(r) for r in mp.VERIFY_ROWS}
        assert out[f"{m}_step_ms"] > 0 and out[f"{m}_floor_ms"] > 0
    assert out["smollm2_draft_c"]["bf16"] == 0.71
    json.dumps(out)


def test_a_profile_of_another_machine_key_is_not_read(pinned_profile, monkeypatch):
    monkeypatch.setenv("SPECDEC_TORCH_THREADS", "7")
    assert mp.load() is None


def test_a_broken_file_reads_as_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv(mp.PROFILE_ENV, str(tmp_path))
    mp.profile_file().parent.mkdir(parents=True, exist_ok=True)
    mp.profile_file().write_text("{ not json")
    assert mp.load() is None


def test_models_not_timed_at_load_are_left_out():
    chain = MarkovChainLM([[0.5, 0.5], [0.5, 0.5]])
    assert mp.record_target("toy", chain) is None
    assert mp.record_target("bundled", chain) is None
    assert mp.record_draft("bundled", chain, "bf16", chain) is None
    assert mp.load() is None


def test_differs_is_relative_to_the_larger():
    assert not mp.differs(1.0, 0.9)
    assert mp.differs(1.0, 0.8)
    assert not mp.differs(0.0, 0.0)
    assert mp.draft_name("layerskip", 8) == "layerskip:8" and mp.draft_name("bf16", 8) == "bf16"
