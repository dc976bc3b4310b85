"""Tree drafts on the real bundled SmolLM2-135M-Instruct: greedy equality and cache compaction.

Slow (a real model on CPU). Greedy tree speculation must equal target-only greedy decoding
token for token, except at a numerical near-tie (support/greedy_check.py, as the chain test).
"""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import autoregressive, generate, summarize
from specdec_core.models import NGramDraft, precision_copy
from specdec_core.models.head import HeadDraft
from specdec_core.models.medusa import MedusaDraft
from specdec_core.sampling import SamplingConfig
from support.greedy_check import PROMPTS, assert_same_greedy_output

pytestmark = pytest.mark.slow

GREEDY = SamplingConfig(temperature=0)
NEW_TOKENS = 24


@pytest.fixture(scope="module")
def bf16(bundled_model):
    return precision_copy(bundled_model, "bfloat16")


@pytest.mark.parametrize("prompt", list(PROMPTS))
def test_greedy_trees_equal_target_greedy_token_for_token(bundled_model, bf16, prompt):
    target = bundled_model
    ids = target.encode(PROMPTS[prompt], chat=True)
    expected = [t for e in autoregressive(target, ids, GREEDY, NEW_TOKENS) for t in e.committed]
    for name, draft, shape in (
        ("n-gram", NGramDraft.for_model(target, min_ngram=1), (3, 2, 1)),
        ("bf16 copy", bf16, (2, 2)),
        ("trained head", HeadDraft(target), (3, 2, 1)),
        ("Medusa heads", MedusaDraft(target), (3, 2, 1)),
    ):
        events = list(generate(target, draft, ids, GREEDY, max_new_tokens=NEW_TOKENS, tree=shape))
        got = [t for e in events for t in e.committed]
        compared = assert_same_greedy_output(target, ids, expected, got)
        assert compared == len(expected) or compared >= 8, (name, compared)
        s = summarize(events)
        assert s.target_forwards == s.rounds
        assert all(1 <= len(e.committed) <= len(shape) + 1 for e in events)


def test_a_tree_round_leaves_the_real_cache_equal_to_a_fresh_prefill(bundled_model, bf16):
    for model in (bundled_model, bf16):
        ids = model.encode(PROMPTS["fact"], chat=True)
        sess = model.session(ids[:-1])
        tokens, parents = [ids[-1], 100, 200, 300, 400, 500], [-1, 0, 0, 1, 2, 2]
        rows = sess.extend_tree(tokens, parents)
        chunk = model.session(ids[:-1]).extend([ids[-1], 200, 400])
        tol = 1e-4
        if model is bf16:  # bf16 logits move by ~0.5 with the chunking alone: allow twice that
            steps = model.session(ids[:-1])
            one_by_one = np.concatenate([steps.extend([t]) for t in (ids[-1], 200, 400)])
            tol = 2 * float(np.abs(chunk - one_by_one).max()) + 1e-3
        np.testing.assert_allclose(rows[4], chunk[-1], atol=tol)
        sess.compact([0, 2, 5])
        after = sess.extend([600])
        fresh = model.session([*ids, 200, 500]).extend([600])
        np.testing.assert_allclose(after, fresh, atol=tol)


def test_adaptive_gamma_keeps_the_shipped_head_drafting_on_an_open_chat_prompt(bundled_model):
    """The γ controller prices the head at its card's measured step cost and verification
    from the measured table; priced as an unknown draft (0.25 steps) it switched the head
    off on this prompt, where about a quarter of its drafts stand, and ran plain steps."""
    target, head = bundled_model, HeadDraft(bundled_model)
    ids = target.encode("Write a short story about a robot who learns to paint.", chat=True)
    events = list(generate(target, head, ids, SamplingConfig(temperature=0), 4, 48, 0, adaptive_gamma=True))
    idle = sum(1 for e in events if not e.draft_tokens)
    assert idle <= 2, f"{idle} of {len(events)} rounds drafted nothing"
    assert summarize(events).alpha > 0.1
