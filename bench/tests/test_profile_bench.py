"""bench/profile.py measures this machine's profile through model loading and prints the keys the
issue and RESULTS.md name, as the profile the course then reads."""

import json

import pytest

from bench import profile
from specdec_core.live import machine_profile


@pytest.mark.slow
def test_the_quick_profile_prints_every_key_and_keeps_the_profile(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(machine_profile.PROFILE_ENV, str(tmp_path))
    assert profile.main(["--quick"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["source"] == "measured"
    for key in ("cpu", "threads", "bandwidth_gbs", "compute_gflops"):
        assert out[key], key
    for m in ("smollm2", "gemma"):
        assert out[f"{m}_step_ms"] > 0 and out[f"{m}_floor_ms"] > 0
        assert set(out[f"{m}_verify_ratio"]) == {str(r) for r in machine_profile.VERIFY_ROWS}
        assert 0 < out[f"{m}_draft_c"]["bf16"] < 3
    assert machine_profile.load().as_json() == out
