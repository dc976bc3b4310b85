"""HFCausalLM on tiny random Llamas saved to disk (the same code path as real model folders)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from specdec_core.engine import RunOptions, autoregressive, estimate_cost_ratio, generate
from specdec_core.engine.gamma import LAYER_OVERHEAD_BYTES
from specdec_core.models import (
    CrossVocabularyDraft,
    HFCausalLM,
    LanguageModel,
    LayerSkipDraft,
    ModelLoadError,
    ModelNotAvailableError,
    NGramDraft,
    Session,
    TokenizerMismatchError,
    check_compatible,
    paired_draft,
    precision_copy,
)
from specdec_core.sampling import SamplingConfig
from support.greedy_check import assert_same_greedy_output


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def test_loads_a_folder_with_the_protocol_and_ui_helpers(tiny, tiny_hf_folders):
    assert isinstance(tiny, LanguageModel)
    assert tiny.vocab_size == tiny.module.config.vocab_size and tiny.num_layers == 4
    assert tiny.eos_token_id == tiny.tokenizer.eos_token_id and tiny.eos_token_id in tiny.eos_token_ids
    assert tiny.name == "target" and tiny.dtype == torch.float32
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


def test_loading_logs_its_steps_in_order(tiny_hf_folders, caplog):
    from specdec_core.models.hf.loading import log

    with caplog.at_level(logging.INFO, logger=log.name):
        model = HFCausalLM.load(tiny_hf_folders["draft"])
    steps = [r.getMessage() for r in caplog.records if r.name == log.name]
    assert steps[0].startswith("Loading the tokenizer") and steps[-1] == f"{model.name} is ready."


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


def test_a_pair_with_different_tokenizers_shares_no_vocabulary_but_drafts_across(tiny, tiny_hf_folders):
    other = HFCausalLM.load(tiny_hf_folders["other"])
    with pytest.raises(TokenizerMismatchError, match=r"tokenizer|vocabulary"):
        check_compatible(tiny, other)
    assert isinstance(paired_draft(tiny, other), CrossVocabularyDraft)  # tests/test_vocab_map.py
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
    assert draft.num_layers == 2
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


def test_draft_cost_estimates_count_weight_bytes_and_a_fixed_cost_per_layer(tiny):
    def step(model: HFCausalLM) -> float:
        weights = sum(p.numel() * p.element_size() for p in model.module.parameters())
        return weights + LAYER_OVERHEAD_BYTES * model.num_layers

    bf, skip = precision_copy(tiny, "bfloat16"), LayerSkipDraft(tiny, 2)
    assert estimate_cost_ratio(tiny, bf) == pytest.approx(step(bf) / step(tiny))
    assert estimate_cost_ratio(tiny, skip) == pytest.approx(step(skip) / step(tiny))
    # half the bytes, the same layers: more than half a step; fewer layers: cheaper still
    assert 0.5 < estimate_cost_ratio(tiny, bf) < 1.0
    assert 0.5 < estimate_cost_ratio(tiny, skip) < 1.0
    assert estimate_cost_ratio(tiny, tiny) == 1.0


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
            t
            for e in autoregressive(tiny, prompt, greedy, 40, options=RunOptions(stop_at_eos=False))
            for t in e.committed
        ]
        for draft in drafts:
            for adaptive in (False, True):
                events = list(
                    generate(
                        tiny, draft, prompt, greedy, 3, 40, 0, adaptive, options=RunOptions(stop_at_eos=False)
                    )
                )
                got = [t for e in events for t in e.committed]
                compared = assert_same_greedy_output(tiny, prompt, expected, got)
                assert compared > 10


def test_sampling_runs_match_the_reference_maths(tiny):
    cfg = SamplingConfig(temperature=0.8, top_k=20, top_p=0.9)
    prompt = tiny.encode("the quick")
    draft = LayerSkipDraft(tiny, 2)
    fast = list(generate(tiny, draft, prompt, cfg, 3, 20, 7, options=RunOptions(stop_at_eos=False)))
    ref = list(
        generate(tiny, draft, prompt, cfg, 3, 20, 7, options=RunOptions(stop_at_eos=False, reference=True))
    )
    assert [(e.draft_tokens, e.committed, e.kinds) for e in fast] == [
        (e.draft_tokens, e.committed, e.kinds) for e in ref
    ]


# -- the fast head and on-demand verification rows ------------------------------------------------
def _own_logits(model: HFCausalLM, ids: list[int]) -> np.ndarray:
    """The module's own forward, no cache: the reference for the fast head."""
    with torch.inference_mode():
        return model.module(input_ids=torch.tensor([ids])).logits[0].double().numpy()


def test_the_fast_forward_gives_the_models_own_logits(tiny):
    from specdec_core.models.hf import LogitRows, RowLinear

    assert tiny.fast is not None and isinstance(tiny.fast.head, RowLinear)
    assert type(tiny.module.lm_head) is torch.nn.Linear  # the module itself is untouched
    assert tiny.fast.head.weight is tiny.module.lm_head.weight  # weights shared, not copied
    ids = tiny.encode("the quick brown fox jumps over the lazy dog")
    own = _own_logits(tiny, ids)
    s = tiny.session(ids[:-3])
    np.testing.assert_allclose(s.extend(ids[-3:]), own[-3:], atol=1e-4)  # a block of rows
    s.truncate(len(ids) - 1)
    np.testing.assert_allclose(s.logits(ids[-1:]).double().numpy(), own[-1:], atol=1e-4)  # one row
    s.truncate(0)
    np.testing.assert_allclose(s.extend(ids), own, atol=1e-4)  # a prefill: F.linear
    s.truncate(len(ids) - 4)
    lazy = s.lazy_logits(ids[-4:])
    assert isinstance(lazy, LogitRows) and len(lazy) == 4 and lazy.computed == 0 and s.length == len(ids)
    np.testing.assert_allclose(lazy.all().double().numpy(), own[-4:], atol=1e-4)
    assert lazy.seconds > 0 and lazy.computed == 4
    s.truncate(len(ids) - 4)
    lazy = LogitRows(hidden=s._body(ids[-4:]), head=tiny.fast.head, block=2)
    np.testing.assert_allclose(lazy.row(1).double().numpy(), own[-3:-2], atol=1e-4)
    assert lazy.computed == 2  # rows 1 and 2: one block from the row read
    np.testing.assert_allclose(lazy.row(0).double().numpy(), own[-4:-3], atol=1e-4)
    assert lazy.computed == 3  # row 0 alone: row 1 is there already
    draft = LayerSkipDraft(tiny, 2)
    assert draft.fast is not None and draft.fast.head.weight is tiny.module.lm_head.weight


@pytest.mark.parametrize("packed", [True, False], ids=["onednn-packed", "without-onednn-ops"])
def test_row_linear_equals_f_linear_for_every_block_size_and_dtype(packed, monkeypatch):
    from specdec_core.models import hf

    if not packed:  # a torch build without oneDNN's packed linear: W @ xᵀ, then F.linear
        monkeypatch.setattr(hf, "packed_weight", lambda weight: None)
    torch.manual_seed(0)
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
        linear = torch.nn.Linear(48, 80, bias=True).to(dtype)
        fast, twin = hf.RowLinear.sharing(linear), hf.RowLinear.sharing(linear)
        for shape in ((1, 48), (1, 1, 48), (1, 3, 48), (8, 48), (1, 9, 48), (2, 20, 48)):
            x = torch.randn(shape).to(dtype)
            with torch.inference_mode():
                got, want, again = fast(x), linear(x), twin(x)
            assert got.shape == want.shape and got.dtype == dtype and got.is_contiguous()
            torch.testing.assert_close(got, want, atol=tol, rtol=tol)
            torch.testing.assert_close(again, got, atol=0, rtol=0)
        if packed and dtype == torch.float32:  # re-laid out once, kept on the shared weight
            assert hf.packed_weight(linear.weight) is hf.packed_weight(twin.weight) is not None
    assert torch.backends.mkldnn.enabled  # the bf16 path puts oneDNN back


def test_models_with_scaled_or_unknown_heads_use_their_own_forward(tiny, tiny_hf_folders):
    import transformers

    from specdec_core.models.hf import plain_head

    scaled = HFCausalLM.load(tiny_hf_folders["target"])
    scaled.module.config.logit_scale = 2.0  # Cohere-style scaling: the fast head would be wrong
    assert plain_head(scaled.module) is None

    class Patched(transformers.LlamaForCausalLM):  # a subclass may change anything
        pass

    patched = HFCausalLM.load(tiny_hf_folders["target"])
    patched.module.__class__ = Patched
    assert plain_head(patched.module) is None
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=tiny.vocab_size, n_embd=32, n_layer=2, n_head=2, n_positions=128)
    )
    other = HFCausalLM(gpt2, tiny.tokenizer, name="gpt2")
    assert other.fast is None
    ids = tiny.encode("the quick brown fox")
    s = other.session(ids[:-2])
    rows = s.lazy_logits(ids[-2:])
    assert rows.computed == 2  # no fast head: all rows come from the model's forward
    np.testing.assert_allclose(rows.all().double().numpy(), _own_logits(other, ids)[-2:], atol=1e-4)
    greedy = SamplingConfig(temperature=0)
    expected = [
        t
        for e in autoregressive(other, ids, greedy, 12, options=RunOptions(stop_at_eos=False))
        for t in e.committed
    ]
    got = [
        t
        for e in generate(other, other, ids, greedy, 3, 12, 0, options=RunOptions(stop_at_eos=False))
        for t in e.committed
    ]
    assert got == expected


@pytest.mark.parametrize("cfg", [SamplingConfig(temperature=0), SamplingConfig(0.9, 20, 0.95)])
def test_fast_forward_and_on_demand_rows_make_the_same_decisions_as_the_own_forward(
    tiny, tiny_hf_folders, cfg
):
    """Fast forward with rows read on demand against the module's own forward, all rows."""
    plain = HFCausalLM.load(tiny_hf_folders["target"])
    plain.fast = None
    draft = HFCausalLM.load(tiny_hf_folders["draft"])
    prompt = tiny.encode("a naïve robot", chat=True)
    kw = dict(sampling=cfg, gamma=4, max_new_tokens=40, seed=3, options=RunOptions(stop_at_eos=False))
    fast = list(generate(tiny, draft, prompt, **kw))
    full = list(generate(plain, draft, prompt, **kw))
    assert any(e.rejected for e in fast)  # some rounds really skip rows
    for a, b in zip(fast, full, strict=True):
        assert (a.draft_tokens, a.committed, a.kinds) == (b.draft_tokens, b.committed, b.kinds)
        np.testing.assert_allclose(a.acceptance_probs, b.acceptance_probs, atol=1e-5)
        assert len(a.p_rows) == len(b.p_rows) == len(a.committed)
    ar = [
        e.committed for e in autoregressive(tiny, prompt, cfg, 20, 4, options=RunOptions(stop_at_eos=False))
    ]
    assert ar == [
        e.committed for e in autoregressive(plain, prompt, cfg, 20, 4, options=RunOptions(stop_at_eos=False))
    ]


def test_torch_threads_come_from_the_environment_once(monkeypatch):
    import specdec_core.models.hf.loading as hf

    before = torch.get_num_threads()
    monkeypatch.setattr(hf, "_threads_done", False)
    monkeypatch.setenv(hf.THREADS_ENV, "1")
    try:
        assert hf.configure_torch_threads() == 1
        monkeypatch.setenv(hf.THREADS_ENV, "3")
        assert hf.configure_torch_threads() == 1  # read once
        assert hf.configure_torch_threads(2) == 2  # an explicit count always applies
        monkeypatch.setattr(hf, "_threads_done", False)
        monkeypatch.setenv(hf.THREADS_ENV, "many")
        with pytest.raises(ValueError, match="SPECDEC_TORCH_THREADS"):
            hf.configure_torch_threads()
    finally:
        torch.set_num_threads(before)


# -- the lean body (Llama, Qwen2, Mistral) ---------------------------------------------------------
def _own_forward(model: HFCausalLM) -> HFCausalLM:
    """The same weights on the model's own forward (transformers' body and head)."""
    return HFCausalLM(model.module, model.tokenizer, name=f"{model.name} (own forward)", fast=False)


@pytest.fixture(scope="module", params=["llama", "qwen2", "mistral"])
def tiny_arch(request, tiny, tmp_path_factory) -> HFCausalLM:
    """The tiny Llama, and tiny Qwen2 (biases on q, k, v) and Mistral models loaded the same way."""
    if request.param == "llama":
        return tiny
    from tests.conftest import build_tiny_model

    folder = tmp_path_factory.mktemp(f"tiny_{request.param}")
    return HFCausalLM.load(build_tiny_model(folder, tiny.tokenizer, arch=request.param), device="cpu")


def test_the_lean_body_equals_transformers_body_in_chunks_and_rollbacks(tiny_arch):
    """Growing buffers (past 64 positions), blocks of every size and rollbacks, against the
    same model on its own forward fed the whole text at once."""
    tiny = tiny_arch
    assert tiny.fast is not None and tiny.fast.lean is not None, type(tiny.module).__name__
    plain = _own_forward(tiny)
    rng = np.random.default_rng(0)
    ids = [int(t) for t in rng.integers(3, tiny.vocab_size, size=150)]
    want = plain.session([]).extend(ids)
    s, got, pos = tiny.session([]), [], 0
    for size in (1, 2, 5, 1, 9, 17, 1, 40, 3, 71):
        block = ids[pos : pos + size]
        s.extend(ids[pos : pos + 4])  # three or four tokens that are rolled back at once
        s.truncate(pos)
        got.append(s.extend(block))
        pos += size
    assert pos == len(ids) and s.length == len(ids)
    np.testing.assert_allclose(np.concatenate(got), want, atol=1e-4)


def test_the_lean_body_in_bfloat16_is_as_close_to_float32_as_transformers_bfloat16(tiny):
    """bfloat16 roundings differ (norm weights folded into the products, attention in
    float32), so the yardstick is the float32 model both bfloat16 bodies approximate."""
    bf = precision_copy(tiny, "bfloat16")
    assert bf.fast is not None and bf.fast.lean is not None
    plain = _own_forward(bf)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog and runs away")
    exact = tiny.session([]).extend(ids)
    got, theirs = bf.session([]).extend(ids), plain.session([]).extend(ids)
    assert np.abs(got - exact).max() < 2 * np.abs(theirs - exact).max()
    assert np.mean(got.argmax(-1) == exact.argmax(-1)) >= 0.9


def test_only_plain_layers_get_the_lean_body(tiny):
    import copy

    from specdec_core.models.hf.lean import lean_eligible

    assert lean_eligible(tiny.module)
    for field, value in (
        ("rope_parameters", {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}),
        ("hidden_act", "gelu"),
        ("pretraining_tp", 2),
        ("sliding_window", 4096),
        ("layer_types", ["full_attention", "sliding_attention", "full_attention", "full_attention"]),
    ):
        module = copy.copy(tiny.module)
        module.config = copy.deepcopy(tiny.module.config)
        setattr(module.config, field, value)
        assert not lean_eligible(module), field
    replaced = copy.deepcopy(tiny.module)  # e.g. a quantised projection: its weight is not a tensor
    replaced.model.layers[1].mlp.down_proj = torch.nn.Sequential(replaced.model.layers[1].mlp.down_proj)
    assert not lean_eligible(replaced)
    for name in ("o_proj", "q_proj"):  # biases: only on q, k and v all at once (Qwen2)
        biased = copy.deepcopy(tiny.module)
        attn = biased.model.layers[2].self_attn
        old = getattr(attn, name)
        setattr(attn, name, torch.nn.Linear(old.in_features, old.out_features, bias=True))
        assert not lean_eligible(biased), name
    draft = LayerSkipDraft(tiny, 2)
    assert draft.fast is not None and draft.fast.lean is not None
    assert draft.fast.lean.layers[0][0] is tiny.fast.lean.layers[0][0]  # fused once, shared


def test_optional_weight_copies_are_skipped_when_memory_is_short(tiny_hf_folders, monkeypatch):
    """Packed and fused weights only buy speed: without room for them the model still loads
    and gives the same logits through the plain kernels."""
    from specdec_core.models import hf, memory

    want = HFCausalLM.load(tiny_hf_folders["target"]).session([]).extend(list(range(3, 20)))
    gib = 1 << 30
    monkeypatch.setattr(memory, "available_bytes", lambda: (int(1.5 * gib), 8 * gib))  # below 20 %
    assert not memory.room_for(1) and memory.KEEP_FREE * 8 * gib > 1.5 * gib
    short = HFCausalLM.load(tiny_hf_folders["target"])
    assert short.fast is None  # no room for the fused weights: its own forward runs
    np.testing.assert_allclose(short.session([]).extend(list(range(3, 20))), want, atol=1e-4)
    assert hf.packed_weight(torch.ones(64, 64)) is None  # nor for a packed copy
    monkeypatch.setattr(memory, "available_bytes", lambda: (6 * gib, 8 * gib))
    assert memory.room_for(gib // 2) and not memory.room_for(5 * gib)
    monkeypatch.setattr(memory, "available_bytes", lambda: None)  # unreadable (not Linux): copies made
    assert memory.room_for(1 << 40)


def test_available_memory_is_read_from_meminfo(tmp_path, monkeypatch):
    from specdec_core.models import memory

    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       24684096 kB\nMemFree:        1 kB\nMemAvailable:   20000000 kB\n")
    monkeypatch.setattr(memory, "_MEMINFO", info)
    assert memory.available_bytes() == (20000000 * 1024, 24684096 * 1024)
    info.write_text("garbage")
    assert memory.available_bytes() is None


def test_process_memory_is_read_and_freed_memory_handed_back():
    from specdec_core.models import memory

    before = memory.process_bytes()
    assert before is not None and before > 50 * 2**20  # this process holds torch, at least
    block = [bytearray(1000) for _ in range(100_000)]  # ~100 MB of small heap blocks
    held = memory.process_bytes()
    del block
    assert memory.return_freed_memory()  # Linux with glibc, as here and in CI
    assert memory.process_bytes() < held - 50 * 2**20


def test_the_vocabulary_check_reads_each_vocabulary_once_per_pair(tiny, tiny_hf_folders, monkeypatch):
    """The engine checks its pair at the start of every run, and reading a 49k-token vocabulary
    is slow: a drafter without one reads none, and a matching pair is read once."""
    reads = []

    def counting(model):
        real = model.tokenizer.get_vocab

        def get_vocab():
            reads.append(model.name)
            return real()

        monkeypatch.setattr(model.tokenizer, "get_vocab", get_vocab)

    draft = HFCausalLM.load(tiny_hf_folders["draft"])
    counting(tiny)
    counting(draft)
    ngram = NGramDraft(tiny.vocab_size)
    for _ in range(3):
        check_compatible(tiny, ngram)
    assert reads == []
    for _ in range(3):
        check_compatible(tiny, draft)
    assert sorted(reads) == sorted([tiny.name, draft.name])
    other = HFCausalLM.load(tiny_hf_folders["other"])
    for _ in range(2):  # a mismatch is never remembered
        with pytest.raises(TokenizerMismatchError):
            check_compatible(tiny, other)
