"""HFCausalLM on tiny random Llamas saved to disk (the same code path as real model folders)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec_core.engine import autoregressive, generate
from specdec_core.models import (
    HFCausalLM,
    LanguageModel,
    LayerSkipDraft,
    ModelLoadError,
    ModelNotAvailableError,
    NGramDraft,
    Session,
    TokenizerMismatchError,
    check_compatible,
    precision_copy,
)
from specdec_core.sampling import SamplingConfig
from tests.greedy_check import assert_same_greedy_output


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def test_loads_a_folder_with_the_protocol_and_ui_helpers(tiny, tiny_hf_folders):
    assert isinstance(tiny, LanguageModel)
    assert tiny.vocab_size == tiny.module.config.vocab_size and tiny.num_layers == 4
    assert tiny.eos_token_id == tiny.tokenizer.eos_token_id and tiny.eos_token_id in tiny.eos_token_ids
    assert tiny.name == "target" and tiny.describe()["dtype"] == "float32"
    ids = tiny.encode("the quick brown fox 中文")
    assert tiny.decode(ids) == "the quick brown fox 中文"
    texts = tiny.token_texts(ids)
    assert "".join(texts[:4]) == "the quick brown fox"[: len("".join(texts[:4]))]
    assert any(t.startswith(" ") for t in texts)  # spaces are real spaces
    # a token holding part of a UTF-8 character shows its bytes, never a replacement char
    assert all("\ufffd" not in t for t in texts)
    assert (
        "".join(texts).encode().decode("unicode_escape").encode("latin-1").decode()
        == "the quick brown fox 中文"
    )
    chat = tiny.encode("hi", chat=True)
    assert tiny.decode(chat).startswith("<|im_start|>user\nhi<|im_end|>")
    assert tiny.token_text(chat[0]) == "<|im_start|>"
    assert tiny.encode("") == [tiny.tokenizer.bos_token_id]
    bf = HFCausalLM.load(tiny_hf_folders["target"], dtype="bfloat16")
    assert next(bf.module.parameters()).dtype == torch.bfloat16


def test_progress_is_reported_from_zero_to_one(tiny_hf_folders):
    seen: list[tuple[float, str]] = []
    HFCausalLM.load(tiny_hf_folders["draft"], progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert all(isinstance(m, str) and m for _, m in seen)


def test_truncate_really_rolls_the_kv_cache_back(tiny):
    prompt = tiny.encode("the quick brown fox jumps over")
    more = tiny.encode(" the lazy dog again")
    s = tiny.session(prompt)
    assert isinstance(s, Session) and s.length == len(prompt)
    s.extend(more)
    s.truncate(len(prompt) - 2)  # drop part of the prompt too
    assert s.length == len(prompt) - 2
    rows = s.extend(prompt[-2:] + more[:3])
    fresh = tiny.session([]).extend(prompt + more[:3])
    np.testing.assert_allclose(rows, fresh[len(prompt) - 2 :], atol=1e-4)
    assert rows.dtype == np.float64 and rows.shape == (5, tiny.vocab_size)
    with pytest.raises(ValueError):
        s.truncate(s.length + 1)
    s.truncate(0)
    np.testing.assert_allclose(s.extend(prompt[:3]), fresh[:3], atol=1e-4)


def test_missing_models_give_plain_errors(tmp_path):
    with pytest.raises(ModelNotAvailableError, match=r"'no-such-org/no-such-model'.*not available offline"):
        HFCausalLM.load("no-such-org/no-such-model")
    with pytest.raises(ModelNotAvailableError, match="does not exist"):
        HFCausalLM.load(str(tmp_path / "absent" / "folder"))
    with pytest.raises(ModelLoadError, match="no model weights"):
        HFCausalLM.load(tmp_path)
    (tmp_path / "pytorch_model.bin").write_bytes(b"not a pickle we would ever open")
    with pytest.raises(ModelLoadError, match="safetensors"):
        HFCausalLM.load(tmp_path)
    with pytest.raises(ValueError, match="dtype"):
        HFCausalLM.load(tmp_path, dtype="float8")


def test_a_pair_with_different_tokenizers_is_refused(tiny, tiny_hf_folders):
    other = HFCausalLM.load(tiny_hf_folders["other"])
    with pytest.raises(TokenizerMismatchError, match=r"tokenizer|vocabulary"):
        check_compatible(tiny, other)
    with pytest.raises(TokenizerMismatchError):
        generate(tiny, other, tiny.encode("the"), SamplingConfig(temperature=0), 2, 4, 0)
    check_compatible(tiny, HFCausalLM.load(tiny_hf_folders["draft"]))  # same tokenizer: fine


def test_same_size_vocabularies_that_disagree_are_refused(tiny):
    class Renamed:
        name = "renamed draft"
        vocab_size = tiny.vocab_size

        class tokenizer:  # a stand-in with a shuffled vocabulary
            @staticmethod
            def get_vocab():
                vocab = tiny.tokenizer.get_vocab()
                a, b = sorted(vocab)[5:7]
                vocab[a], vocab[b] = vocab[b], vocab[a]
                return vocab

    with pytest.raises(TokenizerMismatchError, match="2 token ids differ"):
        check_compatible(tiny, Renamed())


def test_layer_skip_draft_shares_weights_and_leaves_the_target_whole(tiny, tiny_hf_folders):
    ids = tiny.encode("the quick brown fox")
    before = tiny.session([]).extend(ids)
    draft = LayerSkipDraft(tiny, 2)
    assert len(tiny.module.model.layers) == 4 and tiny.num_layers == 4  # the copy.copy trap
    np.testing.assert_array_equal(tiny.session([]).extend(ids), before)
    assert draft.num_layers == 2 and draft.lock is tiny.lock
    assert draft.module.lm_head.weight.data_ptr() == tiny.module.lm_head.weight.data_ptr()
    reference = HFCausalLM.load(tiny_hf_folders["target"])
    reference.module.model.layers = reference.module.model.layers[:2]
    reference.module.config.num_hidden_layers = 2
    np.testing.assert_allclose(draft.session([]).extend(ids), reference.session([]).extend(ids), atol=1e-5)
    with pytest.raises(ValueError, match="between 1 and 4"):
        LayerSkipDraft(tiny, 5)


def test_precision_copy_runs_in_bf16(tiny):
    bf = precision_copy(tiny, "bfloat16")
    assert {p.dtype for p in bf.module.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in tiny.module.parameters()} == {torch.float32}
    ids = tiny.encode("the quick brown fox")
    np.testing.assert_allclose(bf.session([]).extend(ids), tiny.session([]).extend(ids), atol=0.5)


def test_greedy_speculation_equals_greedy_decoding_on_real_transformers(tiny, tiny_hf_folders):
    greedy = SamplingConfig(temperature=0)
    drafts = [
        HFCausalLM.load(tiny_hf_folders["draft"]),
        LayerSkipDraft(tiny, 2),
        precision_copy(tiny),
        NGramDraft.for_model(tiny),
    ]
    for text in ("the quick brown fox", "a naïve robot"):
        prompt = tiny.encode(text, chat=True)
        expected = [
            t for e in autoregressive(tiny, prompt, greedy, 40, stop_at_eos=False) for t in e.committed
        ]
        for draft in drafts:
            for adaptive in (False, True):
                events = list(generate(tiny, draft, prompt, greedy, 3, 40, 0, adaptive, stop_at_eos=False))
                got = [t for e in events for t in e.committed]
                compared = assert_same_greedy_output(tiny, prompt, expected, got)
                assert compared > 10


def test_sampling_runs_match_the_reference_maths(tiny):
    cfg = SamplingConfig(temperature=0.8, top_k=20, top_p=0.9)
    prompt = tiny.encode("the quick")
    draft = LayerSkipDraft(tiny, 2)
    fast = list(generate(tiny, draft, prompt, cfg, 3, 20, 7, stop_at_eos=False))
    ref = list(generate(tiny, draft, prompt, cfg, 3, 20, 7, stop_at_eos=False, reference=True))
    assert [(e.draft_tokens, e.committed, e.kinds) for e in fast] == [
        (e.draft_tokens, e.committed, e.kinds) for e in ref
    ]
