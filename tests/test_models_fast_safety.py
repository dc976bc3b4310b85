"""The fast forward stays safe: derived weights follow their sources, the oneDNN switch is
shared correctly between threads, and ``fast=False`` / ``SPECDEC_FAST=0`` run transformers'
own forward with the same tokens."""

from __future__ import annotations

import copy
import threading

import numpy as np
import pytest
import torch

from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.models import HFCausalLM, LayerSkipDraft, precision_copy
from specdec_core.models.hf import kernels
from specdec_core.sampling import SamplingConfig

IDS = list(range(3, 20))


@pytest.fixture
def tiny(tiny_hf_folders) -> HFCausalLM:
    """A fresh float32 tiny Llama (its module is converted in place by some tests)."""
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def _logits(model: HFCausalLM) -> np.ndarray:
    """Fast-path logits of a prefill and a 5-row block (which makes the packed weights)."""
    s = model.session(IDS[:-5])
    return np.concatenate([s.extend(IDS[-5:]), s.extend([IDS[0]])])


def test_a_model_converted_in_place_to_bfloat16_runs_with_its_new_weights(tiny):
    """`module.to(bfloat16)` keeps the Parameter objects: derived weights made for float32
    (the lean body's fused products) must not be reused for the bf16 weights."""
    assert tiny.fast is not None and tiny.fast.lean is not None
    _logits(tiny)  # fused and packed float32 copies now exist
    reference = HFCausalLM(copy.deepcopy(tiny.module).to(torch.bfloat16), tiny.tokenizer, name="copy")
    tiny.module.to(torch.bfloat16)  # in place, as load_bundled(dtype="bfloat16") may do
    converted = HFCausalLM(tiny.module, tiny.tokenizer, name="converted")
    assert (
        converted.dtype == torch.bfloat16 and converted.fast is not None and converted.fast.lean is not None
    )
    np.testing.assert_array_equal(_logits(converted), _logits(reference))


def test_weights_changed_in_place_are_not_served_from_a_stale_copy(tiny):
    """Same dtype, same storage, new values (an in-place update bumps the tensor's version):
    the packed and fused copies are made again."""
    before = _logits(tiny)
    with torch.no_grad():
        for p in tiny.module.parameters():
            p.mul_(0.9)
    reference = HFCausalLM(copy.deepcopy(tiny.module), tiny.tokenizer, name="copy")
    again = HFCausalLM(tiny.module, tiny.tokenizer, name="again")
    got = _logits(again)
    np.testing.assert_allclose(got, _logits(reference), atol=1e-5)
    assert not np.allclose(got, before, atol=1e-3)
    weight = again.fast.head.weight
    assert kernels.packed_weight(weight) is kernels.packed_weight(weight)  # still made once


def test_overlapping_bf16_kernels_leave_onednn_as_it_was():
    """Two threads inside the switch, the first leaving first: oneDNN stays off until the
    last one leaves, then it is on again (a saved-and-restored flag left it off)."""
    assert torch.backends.mkldnn.enabled
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with kernels._without_onednn():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with kernels._without_onednn():
            second_in.set()
            first_out.wait(5)
            seen["inside, after the first left"] = torch.backends.mkldnn.enabled

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"inside, after the first left": False}
    assert torch.backends.mkldnn.enabled


def test_fast_false_runs_transformers_forward_with_the_same_greedy_tokens(tiny, tiny_hf_folders):
    plain = HFCausalLM.load(tiny_hf_folders["target"], fast=False)
    assert plain.fast is None and tiny.fast is not None
    np.testing.assert_allclose(plain.session([]).extend(IDS), tiny.session([]).extend(IDS), atol=1e-4)
    greedy = SamplingConfig(temperature=0)
    prompt = tiny.encode("the quick brown fox")
    for model_draft in ((tiny, LayerSkipDraft(tiny, 2)), (plain, LayerSkipDraft(plain, 2))):
        assert (model_draft[1].fast is None) == (model_draft[0].fast is None)  # drafts follow
    runs = [
        [
            t
            for e in generate(
                m, LayerSkipDraft(m, 2), prompt, greedy, 3, 24, 0, options=RunOptions(stop_at_eos=False)
            )
            for t in e.committed
        ]
        for m in (tiny, plain)
    ]
    baseline = [
        [
            t
            for e in autoregressive(m, prompt, greedy, 24, 0, options=RunOptions(stop_at_eos=False))
            for t in e.committed
        ]
        for m in (tiny, plain)
    ]
    assert runs[0] == runs[1] == baseline[0] == baseline[1]
    assert precision_copy(plain).fast is None


def test_specdec_fast_0_in_the_environment_turns_the_fast_forward_off(tiny_hf_folders, monkeypatch):
    monkeypatch.setenv("SPECDEC_FAST", "0")
    assert HFCausalLM.load(tiny_hf_folders["target"]).fast is None
    assert HFCausalLM.load(tiny_hf_folders["target"], fast=True).fast is not None  # the flag wins
    monkeypatch.setenv("SPECDEC_FAST", "1")
    assert HFCausalLM.load(tiny_hf_folders["target"]).fast is not None
    monkeypatch.setenv("SPECDEC_FAST", "maybe")
    with pytest.raises(ValueError, match="SPECDEC_FAST"):
        HFCausalLM.load(tiny_hf_folders["target"])
