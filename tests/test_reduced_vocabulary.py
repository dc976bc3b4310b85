"""Reduced-vocabulary drafts (FR-Spec): lossless on a Markov pair, only the kept rows of a
transformer head computed, frequencies counted from shipped text; greedy-identical on the
bundled model (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.models import HFCausalLM, LayerSkipDraft, NGramDraft, precision_copy
from specdec_core.models.reduced import (
    frequent_target_tokens,
    frequent_tokens,
    reduced_draft,
    shipped_counts,
    shipped_texts,
    token_counts,
)
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from support.greedy_check import PROMPTS, assert_same_greedy_output
from tests.markov_cross_pair import TARGET as CROSS_TARGET
from tests.markov_cross_pair import cross_draft
from tests.markov_pair import ALPHA, DRAFT, START, TARGET, V, joint_law

GREEDY = SamplingConfig(temperature=0)
KEPT = [0, 2, 3]  # token 1 can never be proposed


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize("tree", [None, (2, 1)])
def test_a_reduced_draft_keeps_the_target_law_and_proposes_only_kept_tokens(tree):
    draft = reduced_draft(DRAFT, KEPT, V)
    cfg = SamplingConfig()
    counts = np.zeros(V**3)
    proposed: set[int] = set()
    for seed in range(1000):
        events = list(generate(TARGET, draft, [START], cfg, 2, 3, seed, tree=tree))
        proposed |= {t for e in events for t in e.draft_tokens}
        toks = [t for e in events for t in e.committed]
        counts[int(np.ravel_multi_index(toks, (V,) * 3))] += 1
    assert chisquare(counts, joint_law(cfg)).p_value > ALPHA
    assert proposed == set(KEPT)


def test_a_reduced_draft_is_greedy_identical_and_composes_with_another_vocabulary():
    for start in range(V):
        want = [t for e in autoregressive(TARGET, [start], GREEDY, 30) for t in e.committed]
        got = [
            t
            for e in generate(TARGET, reduced_draft(DRAFT, KEPT, V), [start], GREEDY, 3, 30)
            for t in e.committed
        ]
        assert got == want
    crossed = reduced_draft(cross_draft(), [0, 1, 2], CROSS_TARGET.vocab_size)
    assert set(np.flatnonzero(crossed.to_target >= 0)) <= {0, 1, 2}
    want = [t for e in autoregressive(CROSS_TARGET, [0], GREEDY, 30) for t in e.committed]
    assert [t for e in generate(CROSS_TARGET, crossed, [0], GREEDY, 3, 30) for t in e.committed] == want


def test_a_reduced_draft_drafts_trees_too():
    draft = reduced_draft(DRAFT, KEPT, V)
    for start in range(V):
        want = [t for e in autoregressive(TARGET, [start], GREEDY, 30) for t in e.committed]
        got = [
            t
            for e in generate(TARGET, draft, [start], GREEDY, tree=(2, 2), max_new_tokens=30)
            for t in e.committed
        ]
        assert got == want
    events = list(generate(TARGET, draft, [START], SamplingConfig(), tree=(2, 1), max_new_tokens=40, seed=1))
    assert sum(len(e.committed) for e in events) == 40
    assert {t for e in events for t in e.draft_tokens} <= set(KEPT)
    with pytest.raises(ValueError, match="chains only"):
        generate(CROSS_TARGET, cross_draft(), [0], GREEDY, tree=(2,), max_new_tokens=4)


def test_bad_reductions_are_refused():
    with pytest.raises(ValueError, match="nothing to cut"):
        reduced_draft(NGramDraft(V), KEPT, V)
    with pytest.raises(ValueError, match="within 0"):
        reduced_draft(DRAFT, [V], V)
    with pytest.raises(ValueError, match="within 0"):
        reduced_draft(DRAFT, [], V)
    with pytest.raises(ValueError, match="between 1 and 4"):
        frequent_tokens(np.ones(4), 5)


def test_frequent_tokens_rank_by_count_then_id_and_keep_eos():
    counts = np.array([5, 0, 9, 5, 1])
    np.testing.assert_array_equal(frequent_tokens(counts, 2), [0, 2])
    np.testing.assert_array_equal(frequent_tokens(counts, 3, always=[1]), [0, 1, 2, 3])


def test_token_counts_come_from_shipped_text_and_are_cached(tmp_path, monkeypatch):
    from tests.conftest import build_tiny_tokenizer

    monkeypatch.setenv("SPECDEC_CACHE_DIR", str(tmp_path))
    tok = build_tiny_tokenizer()
    shipped = shipped_texts()
    assert any("speculative" in t.lower() for t in shipped) and any("投机" in t for t in shipped)
    texts = shipped[:8]
    counts = token_counts(tok, texts)
    assert counts.shape == (len(tok),) and counts.sum() > 10_000
    assert counts[tok.convert_tokens_to_ids("Ġthe")] > 100
    cached = list((tmp_path / "token-counts").glob("*.npy"))
    assert len(cached) == 1
    np.testing.assert_array_equal(token_counts(tok, texts), counts)
    assert token_counts(tok, texts[:3]).sum() < counts.sum()
    everything = shipped_counts(tok)  # keyed on the shipped files: a second call reads the cache
    np.testing.assert_array_equal(everything, token_counts(tok, shipped))
    assert len(list((tmp_path / "token-counts").glob("*.npy"))) == 4
    np.testing.assert_array_equal(shipped_counts(tok), everything)


def test_a_transformer_draft_computes_only_the_kept_rows(tiny_hf_folders):
    target = HFCausalLM.load(tiny_hf_folders["target"])
    full = LayerSkipDraft(target, 2)
    kept = np.arange(3, target.vocab_size, 3)
    draft = reduced_draft(full, kept, target.vocab_size)
    assert draft.draft.vocab_size == kept.size and draft.draft.module.lm_head.weight.shape[0] == kept.size
    assert full.vocab_size == target.vocab_size  # the draft it was cut from is whole
    ids = target.encode("the quick brown fox")
    row = draft.session(ids[:-1]).extend(ids[-1:])[0]
    z = full.session(ids[:-1]).extend(ids[-1:])[0]
    want = np.full(target.vocab_size, -np.inf)
    want[kept] = z[kept] - np.logaddexp.reduce(z[kept])
    np.testing.assert_allclose(row, want, atol=1e-5)
    expected = [t for e in autoregressive(target, ids, GREEDY, 24) for t in e.committed]
    got = [t for e in generate(target, draft, ids, GREEDY, 3, 24) for t in e.committed]
    assert_same_greedy_output(target, ids, expected, got)
    assert {
        t for e in generate(target, draft, ids, SamplingConfig(), 3, 24, 2) for t in e.draft_tokens
    } <= set(kept)


@pytest.mark.slow
def test_reduced_drafts_of_the_bundled_model_are_greedy_identical(bundled_model):
    target = bundled_model
    kept = frequent_target_tokens(target, 4096)  # lessons and presets: quick to count
    assert kept.size >= 4096 and set(target.eos_token_ids) <= set(kept.tolist())
    ids = target.encode(PROMPTS["chat"], chat=True)
    expected = [t for e in autoregressive(target, ids, GREEDY, 24) for t in e.committed]
    for base in (precision_copy(target, "bfloat16"), LayerSkipDraft(target, 8)):
        draft = reduced_draft(base, kept, target.vocab_size)
        assert draft.draft.module.lm_head.weight.shape[0] == kept.size
        events = list(generate(target, draft, ids, GREEDY, 4, 24))
        got = [t for e in events for t in e.committed]
        compared = assert_same_greedy_output(target, ids, expected, got)
        assert compared == len(expected) or compared >= 8
        assert sum(e.accepted_count for e in events) > 0
