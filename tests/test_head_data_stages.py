"""The data stages of train/ (generate, features) on a tiny random Llama: seeded and resumable.

A stage stopped part-way and rerun must skip what it finished and redo what it had not, with
the same tokens and features an uninterrupted run writes; that is what lets the model card's
commands reproduce the shipped head's data.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from specdec_core.models import HFCausalLM
from train.prompts import Prompt

PROMPTS = [
    Prompt("Tell me about the quick fox.", "chat", "train"),
    Prompt("Why does the dog sleep?", "explain", "train"),
    Prompt("List three cats.", "list", "train"),
    Prompt("Repeat: the cat sat on the mat.", "copy", "train"),
    Prompt("Write about a brown dog.", "chat", "train"),
]


@pytest.fixture
def stages(tiny_hf_folders, tmp_path, monkeypatch):
    """generate and features writing under `tmp_path`, on the tiny target, with five prompts."""
    import specdec_core.models
    from train import features, generate, paths, prompts

    model = HFCausalLM.load(tiny_hf_folders["target"], device="cpu")
    monkeypatch.setattr(specdec_core.models, "load_bundled", lambda: model)
    monkeypatch.setattr(prompts, "build", lambda split, seed=0: list(PROMPTS))

    def use(folder):
        monkeypatch.setattr(paths, "GENERATED", folder / "data")
        monkeypatch.setattr(paths, "WORK", folder / "work")

    return generate, features, use


def _shards(folder, split="train"):
    return {p.name: json.loads(p.read_text()) for p in sorted((folder / "data" / split).glob("shard_*.json"))}


def test_generation_stopped_part_way_resumes_to_the_same_answers(stages, tmp_path):
    generate, _, use = stages
    use(tmp_path / "whole")
    generate.run("train", batch=2, max_new_tokens=6)
    whole = _shards(tmp_path / "whole")
    assert list(whole) == ["shard_0000.json", "shard_0001.json", "shard_0002.json"]
    assert [w["sampled"] for w in whole.values()] == [False, True, False]  # greedy and T = 0.7 shards
    assert all(r["answer"] for w in whole.values() for r in w["records"])

    use(tmp_path / "parts")
    generate.run("train", batch=2, max_new_tokens=6, limit=2)  # stopped after the first shard
    first = generate.shard_path("train", 0).stat().st_mtime_ns
    generate.run("train", batch=2, max_new_tokens=6)  # the rerun skips it and does the rest
    assert generate.shard_path("train", 0).stat().st_mtime_ns == first
    parts = _shards(tmp_path / "parts")
    for name, shard in whole.items():
        assert parts[name]["records"] == shard["records"], name  # sampled shards too: seeded per shard


def test_features_stopped_part_way_resume_to_the_same_arrays(stages, tmp_path):
    generate, features, use = stages
    use(tmp_path)
    generate.run("train", batch=2, max_new_tokens=6)
    features.run("train")
    whole = {p.name: dict(np.load(p)) for p in features.files("train")}
    assert len(whole) == 3 and (tmp_path / "work" / "vocab.npy").exists()

    kept = features.files("train")[0].stat().st_mtime_ns
    features.files("train")[1].unlink()  # as if the stage had stopped before this shard
    features.run("train")
    assert features.files("train")[0].stat().st_mtime_ns == kept  # finished shards are skipped
    again = {p.name: dict(np.load(p)) for p in features.files("train")}
    assert list(again) == list(whole)
    for name, arrays in whole.items():
        for key, value in arrays.items():
            np.testing.assert_array_equal(again[name][key], value, err_msg=f"{name} {key}")
    shard = again["shard_0000.npz"]
    assert shard["features"].shape[0] == shard["tokens"].shape[0] == int(shard["length"].sum())
