"""The inspector's inputs: the real p and q of a position, pooled honestly, and the decision.

On the toy Markov pair the true next-token laws are known exactly, so every number the
inspector shows is checked against the chain itself, not against the engine's record.
"""

import numpy as np
import pytest

from specdec_core.engine import RoundEvent, RunOptions, TopTokens, autoregressive, generate
from specdec_core.live.inspector import position_view, slot_kind
from specdec_core.models import NGramDraft
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.sampling import SamplingConfig, apply

TARGET, DRAFT = toy_target(), toy_draft()
PROMPT = TARGET.encode("the cat sat on the mat .")
V = TARGET.vocab_size


def _laws(events, cfg):
    """(event, position, true p, true q or None) for every committed position."""
    prev = PROMPT[-1]
    for e in events:
        for i, _ in enumerate(e.committed):
            before = prev if i == 0 else e.committed[i - 1]
            p = apply(TARGET.next_logits(before), cfg).probs
            q = (
                apply(DRAFT.next_logits(before), cfg).probs
                if e.kinds[i] in ("accepted", "corrected")
                else None
            )
            yield e, i, p, q
        prev = e.committed[-1]


def test_exact_rows_show_the_chains_own_laws():
    cfg = SamplingConfig(temperature=0.9, top_k=8)
    events = list(generate(TARGET, DRAFT, PROMPT, cfg, 4, 60, seed=5, options=RunOptions(top_n=20)))
    seen = set()
    for e, i, p, q in _laws(events, cfg):
        view = position_view(e, i, V, max_tokens=20)
        seen.add(view.kind)
        assert not view.has_pool and view.exact
        ids = [t for t in view.ids if not isinstance(t, str)]
        np.testing.assert_allclose(view.p, p[ids], atol=1e-12)
        assert np.isclose(view.p.sum(), 1.0) and np.isclose(p[ids].sum(), 1.0)
        if q is None:
            assert view.q is None and view.alpha is None and view.accepted is None
            continue
        np.testing.assert_allclose(view.q, q[ids], atol=1e-12)
        alpha = float(np.minimum(p, q).sum())
        assert view.alpha == pytest.approx((alpha, alpha), abs=1e-12)
        x = e.draft_tokens[i]
        assert view.draft_token == x and view.q_x == pytest.approx(q[x]) and view.p_x == pytest.approx(p[x])
        assert view.accept_prob == pytest.approx(min(1.0, p[x] / q[x]))
        assert view.accepted == (e.kinds[i] == "accepted")
        assert view.emitted == e.committed[i] and view.emitted in view.ids
    assert seen == {"accepted", "corrected", "bonus"}


def test_pooled_rows_give_bounds_that_hold_the_true_acceptance_rate():
    cfg = SamplingConfig(temperature=1.3)
    events = list(generate(TARGET, DRAFT, PROMPT, cfg, 4, 80, seed=2, options=RunOptions(top_n=3)))
    loose = 0
    for e, i, p, q in _laws(events, cfg):
        view = position_view(e, i, V, max_tokens=3)
        assert np.isclose(view.p.sum(), 1.0)
        if q is None:
            continue
        alpha = float(np.minimum(p, q).sum())
        lo, hi = view.alpha
        assert lo - 1e-12 <= alpha <= hi + 1e-12
        drawn = float(np.minimum(view.p, view.q).sum())
        assert drawn == pytest.approx(lo, abs=1e-12), "the figures draw the lower bound"
        named = [t for t in view.ids if not isinstance(t, str)]
        np.testing.assert_allclose(view.p[: len(named)], p[named], atol=1e-12)
        np.testing.assert_allclose(view.q[: len(named)], q[named], atol=1e-12)
        if view.has_pool:
            assert view.pool_size == V - len(named)
            pooled = np.setdiff1d(np.arange(V), named)
            assert view.p[len(named) :].sum() == pytest.approx(p[pooled].sum(), abs=1e-12)
            assert view.q[len(named) :].sum() == pytest.approx(q[pooled].sum(), abs=1e-12)
        loose += not view.exact
        assert view.draft_token in view.ids, "the decision's token always has its own bar"
    assert loose > 0, "with top-3 rows some positions must be inexact"


def test_max_tokens_pools_known_tokens_without_losing_their_overlap():
    cfg = SamplingConfig(temperature=1.0)
    events = list(generate(TARGET, DRAFT, PROMPT, cfg, 4, 40, seed=9, options=RunOptions(top_n=20)))
    for e, i, p, q in _laws(events, cfg):
        if q is None:
            continue
        view = position_view(e, i, V, max_tokens=3)
        assert sum(not isinstance(t, str) for t in view.ids) <= 3
        alpha = float(np.minimum(p, q).sum())
        assert view.alpha == pytest.approx((alpha, alpha), abs=1e-12), "pooled tokens are all known here"


def test_greedy_positions_are_one_hot_and_all_or_nothing():
    events = list(generate(TARGET, DRAFT, PROMPT, SamplingConfig(temperature=0), 4, 40, seed=0))
    for e in events:
        for i in range(len(e.committed)):
            view = position_view(e, i, V)
            assert view.one_hot
            if view.q is not None:
                assert view.alpha[0] == view.alpha[1] == (1.0 if view.accepted else 0.0)


def test_target_only_positions_have_no_draft():
    events = list(autoregressive(TARGET, PROMPT, SamplingConfig(), 5, seed=0))
    view = position_view(events[0], 0, V)
    assert view.kind == "target" and view.q is None and view.draft_token is None
    assert view.p_x == pytest.approx(TARGET.transitions[PROMPT[-1], view.emitted])


def test_bad_positions_are_refused():
    events = list(
        generate(TARGET, DRAFT, PROMPT, SamplingConfig(), 4, 10, seed=0, options=RunOptions(top_n=0))
    )
    with pytest.raises(ValueError, match="no position 9"):
        position_view(events[0], 9, V)
    with pytest.raises(ValueError, match="top_n = 0"):
        position_view(events[0], 0, V)


def _event(p: np.ndarray, q: np.ndarray, x: int, top_n: int) -> RoundEvent:
    """A one-draft round that rejected draft `x`, keeping top-`top_n` rows of p and q."""
    corrected = int(np.argmax(np.maximum(p - q, 0)))
    return RoundEvent(
        index=0,
        mode="speculative",
        gamma=1,
        draft_tokens=[x],
        accepted_count=0,
        committed=[corrected],
        kinds=["corrected"],
        acceptance_probs=[min(1.0, p[x] / q[x])],
        draft_q=[float(q[x])],
        draft_p=[float(p[x])],
        q_rows=[TopTokens.from_probs(q, top_n)],
        p_rows=[TopTokens.from_probs(p, top_n), TopTokens.from_probs(p, top_n)],
        draft_s=0.0,
        verify_s=0.0,
        overhead_s=0.0,
        prefill_s=0.0,
        draft_forwards=1,
        target_forwards=1,
        position=0,
    )


@pytest.mark.parametrize("seed", range(40))
def test_bounds_hold_for_any_distributions_behind_the_rows(seed):
    rng = np.random.default_rng(seed)
    size = 60
    p, q = rng.dirichlet(np.full(size, 0.1)), rng.dirichlet(np.full(size, 0.1))
    x = int(rng.choice(size, p=q))
    view = position_view(
        _event(p, q, x, top_n=int(rng.integers(2, 8))), 0, size, max_tokens=int(rng.integers(1, 6))
    )
    lo, hi = view.alpha
    assert lo - 1e-12 <= float(np.minimum(p, q).sum()) <= hi + 1e-12
    assert view.bar(x) is not None and view.p_x == pytest.approx(p[x])


def test_a_draft_that_bets_on_another_token_gets_a_tight_bound():
    """The case seen on SmolLM2: target sure of one token, the layer-skip draft of another."""
    p = np.full(40, 1e-9)
    p[3] = 1 - p.sum() + 1e-9
    q = np.full(40, 1e-5)
    q[7] = 1 - q.sum() + 1e-5
    view = position_view(_event(p, q, 7, top_n=20), 0, 40, max_tokens=8)
    lo, hi = view.alpha
    assert hi - lo < 1e-3 and lo <= np.minimum(p, q).sum() <= hi


def test_a_round_without_drafts_is_a_target_step():
    ngram = NGramDraft.for_model(TARGET)
    events = list(generate(TARGET, ngram, TARGET.encode("the cat"), SamplingConfig(), 4, 20, seed=0))
    plain = [e for e in events if not e.draft_tokens]
    assert plain, "the n-gram draft finds no match in a two-word prompt"
    for e in plain:
        assert e.kinds == ["bonus"] and slot_kind(e, 0) == "target"
        view = position_view(e, 0, V)
        assert view.kind == "target" and view.q is None and view.draft_token is None
