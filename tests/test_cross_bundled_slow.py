"""Drafting across vocabularies with the real bundled SmolLM2-135M-Instruct (slow): a copy
whose embedding and LM head are padded by 64 rows pairs with it both ways, and a draft with a
SentencePiece-style tokenizer drafts for it; greedy output equals the target's own."""

from __future__ import annotations

import copy

import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.models import CrossVocabularyDraft, HFCausalLM, paired_draft
from specdec_core.sampling import SamplingConfig
from support.greedy_check import PROMPTS, assert_same_greedy_output
from tests.conftest import build_tiny_model
from tests.test_vocab_map import build_sentencepiece_tokenizer

pytestmark = pytest.mark.slow

GREEDY = SamplingConfig(temperature=0)
NEW_TOKENS = 24
PAD = 64


@pytest.fixture(scope="module")
def padded(bundled_model):
    module = copy.deepcopy(bundled_model.module)
    module.resize_token_embeddings(bundled_model.vocab_size + PAD)
    return HFCausalLM(module, bundled_model.tokenizer, name="SmolLM2 padded by 64 rows")


def _same_greedy(target, draft, prompt):
    ids = target.encode(PROMPTS[prompt], chat=True)
    expected = [t for e in autoregressive(target, ids, GREEDY, NEW_TOKENS) for t in e.committed]
    events = list(generate(target, draft, ids, GREEDY, 4, NEW_TOKENS))
    got = [t for e in events for t in e.committed]
    compared = assert_same_greedy_output(target, ids, expected, got)
    assert compared == len(expected) or compared >= 8
    return events


def test_a_padded_copy_pairs_with_the_model_both_ways(bundled_model, padded):
    assert padded.vocab_size == bundled_model.vocab_size + PAD
    as_draft = paired_draft(bundled_model, padded)
    assert isinstance(as_draft, CrossVocabularyDraft) and as_draft.to_draft is None
    assert (as_draft.to_target[-PAD:] == -1).all()
    events = _same_greedy(bundled_model, padded, "fact")
    drafted = sum(len(e.draft_tokens) for e in events)
    assert sum(e.accepted_count for e in events) >= 0.8 * drafted > 0  # the same network: it agrees
    as_target = paired_draft(padded, bundled_model)
    assert as_target.vocab_size == padded.vocab_size
    _same_greedy(padded, bundled_model, "chat")


def test_a_draft_with_another_tokenizer_drafts_for_the_real_model(bundled_model, tmp_path):
    draft = HFCausalLM.load(build_tiny_model(tmp_path / "sp", build_sentencepiece_tokenizer(), layers=1))
    crossed = paired_draft(bundled_model, draft)
    assert isinstance(crossed, CrossVocabularyDraft) and crossed.to_draft is not None
    assert (crossed.to_target >= 0).sum() > 30  # the letters and a few words have twins
    _same_greedy(bundled_model, draft, "code")
