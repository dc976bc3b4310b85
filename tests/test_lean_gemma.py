"""The lean Gemma 3 body against transformers' own Gemma 3 forward, on a tiny random model whose
sliding window (4) is shorter than the texts, so local and global layers, the window mask, cache
rollback and tree forwards are all exercised."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.models import LayerSkipDraft
from specdec_core.models.hf import HFCausalLM
from specdec_core.models.hf.lean_gemma import GemmaLeanBody, gemma_lean_eligible
from specdec_core.sampling import SamplingConfig
from support.greedy_check import assert_same_greedy_output
from tests.conftest import build_tiny_tokenizer

IDS = list(range(3, 23))  # 20 tokens: five windows of 4


@pytest.fixture(scope="module")
def gemmas() -> tuple[HFCausalLM, HFCausalLM]:
    import transformers

    tok = build_tiny_tokenizer()
    config = transformers.Gemma3TextConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=4,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        max_position_embeddings=256,
        initializer_range=0.2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.eos_token_id,
    )
    torch.manual_seed(3)
    module = transformers.Gemma3ForCausalLM(config).eval()
    with torch.no_grad():
        for name, param in module.named_parameters():
            if "norm" in name:
                param.uniform_(-0.5, 0.5)  # Gemma scales by 1 + w
    lean = HFCausalLM(module, tok, name="tiny Gemma 3")
    own = HFCausalLM(module, tok, name="tiny Gemma 3 (own forward)", fast=False)
    return lean, own


def test_a_tiny_gemma_runs_the_lean_body(gemmas):
    lean, own = gemmas
    assert gemma_lean_eligible(lean.module) and isinstance(lean.fast.lean, GemmaLeanBody)
    assert own.fast is None


def test_logits_equal_transformers_over_several_windows(gemmas):
    lean, own = gemmas
    np.testing.assert_allclose(lean.session([]).extend(IDS), own.session([]).extend(IDS), atol=2e-4)
    a, b = lean.session(IDS[:6]), own.session(IDS[:6])
    for t in IDS[6:]:  # one-token decode steps, past the window
        np.testing.assert_allclose(a.extend([t]), b.extend([t]), atol=2e-4)


def test_rollback_and_tree_forwards_match_a_fresh_prefill(gemmas):
    lean, _ = gemmas
    s = lean.session(IDS[:12])
    s.extend(IDS[12:18])
    s.truncate(14)  # a rejected draft: the cache goes back past the window edge
    np.testing.assert_allclose(s.extend(IDS[14:20]), lean.session([]).extend(IDS)[14:20], atol=2e-4)
    tree = lean.session(IDS[:10])
    rows = tree.extend_tree([IDS[10], IDS[11], 7, IDS[12]], [-1, 0, 0, 1])  # two branches
    fresh = lean.session([]).extend(IDS[:13])
    np.testing.assert_allclose(rows[[0, 1, 3]], fresh[[10, 11, 12]], atol=2e-4)
    tree.compact([0, 1, 3])
    np.testing.assert_allclose(tree.extend([IDS[13]]), lean.session([]).extend(IDS[:14])[-1:], atol=2e-4)


def test_greedy_speculation_on_the_lean_body_equals_the_own_forward(gemmas):
    lean, own = gemmas
    greedy = SamplingConfig(temperature=0)
    prompt = IDS[:5]
    want = [
        t
        for e in autoregressive(own, prompt, greedy, 16, options=RunOptions(stop_at_eos=False))
        for t in e.committed
    ]
    got = [
        t
        for e in autoregressive(lean, prompt, greedy, 16, options=RunOptions(stop_at_eos=False))
        for t in e.committed
    ]
    draft = LayerSkipDraft(lean, 2)
    assert isinstance(draft.fast.lean, GemmaLeanBody)
    spec = [
        t
        for e in generate(lean, draft, prompt, greedy, 3, 16, 0, options=RunOptions(stop_at_eos=False))
        for t in e.committed
    ]
    assert assert_same_greedy_output(own, prompt, want, got) >= 12
    assert assert_same_greedy_output(own, prompt, want, spec) >= 12


def test_a_bf16_gemma_stays_as_close_to_float32_as_transformers_bf16(gemmas):
    from specdec_core.models import precision_copy

    lean, own = gemmas
    want = own.session([]).extend(IDS)
    lean16 = precision_copy(lean, "bfloat16")
    own16 = HFCausalLM(lean16.module, lean16.tokenizer, name="bf16 own", fast=False)
    assert isinstance(lean16.fast.lean, GemmaLeanBody)
    ours = np.abs(lean16.session([]).extend(IDS) - want).max()
    theirs = np.abs(own16.session([]).extend(IDS) - want).max()
    assert ours <= 1.5 * theirs + 1e-3
