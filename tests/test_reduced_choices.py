"""Reduced-vocabulary drafts as a model choice: any draft with a head may keep only the target's
N most frequent tokens (exact: greedy output unchanged); n-gram lookup has no head to cut."""

from __future__ import annotations

import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.live.model_choices import ChoiceError, DraftSpec, load_draft
from specdec_core.models import CrossVocabularyDraft, HFCausalLM
from specdec_core.sampling import SamplingConfig


@pytest.fixture(scope="module")
def target(tiny_hf_folders):
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def test_a_reduced_layer_skip_draft_keeps_greedy_output_and_only_its_kept_tokens(target):
    draft = load_draft(target, DraftSpec("layerskip", 2, vocab=60))
    assert isinstance(draft, CrossVocabularyDraft)
    kept = set(int(j) for j in draft.to_target if j >= 0)
    assert 60 <= len(kept) <= 62  # the N most frequent, plus the EOS ids
    greedy = SamplingConfig(temperature=0)
    ids = target.encode("the cat sat on the mat and the dog")
    expected = [t for e in autoregressive(target, ids, greedy, 12) for t in e.committed]
    events = list(generate(target, draft, ids, greedy, 3, 12, 0))
    assert [t for e in events for t in e.committed] == expected
    assert all(t in kept for e in events for t in e.draft_tokens)


def test_n_gram_lookup_has_no_head_to_cut(target):
    with pytest.raises(ChoiceError) as err:
        load_draft(target, DraftSpec("ngram", vocab=100))
    assert err.value.code == "no_head"
