"""specdec_core.course.block: rounds of block verification on Markov-chain pairs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.course import block as bd
from specdec_core.models.markov import MarkovChainLM
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.stats import chi2_sf, chisquare
from specdec_core.theory import expected_tokens

THE = bd.WORDS.index("the")


def _pair(chain: str, quality: str) -> tuple[MarkovChainLM, MarkovChainLM]:
    target = bd.target_chain(chain)
    return target, bd.draft_chain(target, quality)


def replay(target, draft, prompt, k, seed, rounds, sampling=None) -> bd.BlockDemo:
    """A fresh demo stepped `rounds` rounds."""
    demo = bd.BlockDemo(target, draft, prompt, k, seed, sampling)
    for _ in range(rounds):
        demo.step()
    return demo


def _processed(model: MarkovChainLM, token: int, config: SamplingConfig) -> np.ndarray:
    return apply(model.next_logits(token), config).probs


@settings(max_examples=30, deadline=None)
@given(
    chain=st.sampled_from(bd.CHAINS),
    quality=st.sampled_from(bd.DRAFTS),
    k=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    temperature=st.sampled_from([0.0, 0.5, 1.0, 1.7]),
)
def test_every_round_follows_the_block_rules(chain, quality, k, seed, temperature):
    target, draft = _pair(chain, quality)
    config = SamplingConfig(temperature=temperature)
    demo = replay(target, draft, [THE], k, seed, rounds=12, sampling=config)
    length = 1
    for rnd in demo.rounds:
        n = len(rnd.committed)
        assert 1 <= n <= k + 1 and n == rnd.accepted + 1
        assert rnd.kinds[:-1] == ["accepted"] * rnd.accepted
        assert rnd.committed[: rnd.accepted] == rnd.drafts[: rnd.accepted]
        if rnd.accepted == k:  # the bonus comes only after K acceptances
            assert rnd.kinds[-1] == "bonus" and rnd.rejected is None and rnd.void == []
        else:  # nothing after the correction: the rest of the block is void
            assert rnd.kinds[-1] == "corrected"
            assert rnd.rejected == rnd.drafts[rnd.accepted]
            assert rnd.void == rnd.drafts[rnd.accepted + 1 :]
            # a rejected token had q > p, so the residual gives it no mass
            assert rnd.committed[-1] != rnd.rejected
        # each row is the model's processed law after its own input
        inputs = [rnd.anchor, *rnd.drafts]
        for i, token in enumerate(inputs):
            np.testing.assert_allclose(rnd.p_rows[i], _processed(target, token, config), atol=1e-12)
            if i < k:
                np.testing.assert_allclose(rnd.q_rows[i], _processed(draft, token, config), atol=1e-12)
        examined = rnd.accepted + (rnd.rejected is not None)
        expected = np.minimum(1.0, rnd.p_at_drafts[:examined] / rnd.q_at_drafts[:examined])
        np.testing.assert_allclose(rnd.acceptance_probs, expected, atol=1e-12)
        # caches: the verification forward adds K+1 entries, the rollback keeps the committed prefix
        assert rnd.target_cache.start == length - 1
        assert rnd.target_cache.peak == length + k
        assert rnd.target_cache.after == rnd.length_after - 1
        assert rnd.draft_cache.after == min(rnd.draft_cache.peak, rnd.length_after - 1)
        length = rnd.length_after
    assert length == len(demo.committed)
    for session in (demo.target_session, demo.draft_session):
        assert session.tokens == demo.committed[: session.length]


def test_the_rollback_drops_exactly_the_void_entries():
    target, draft = _pair("story", "poor")
    demo = replay(target, draft, [THE], 4, seed=3, rounds=40)
    rejected = [r for r in demo.rounds if r.rejected is not None]
    assert rejected, "a poor draft must see rejections in 40 rounds"
    for rnd in rejected:
        assert rnd.target_cache.dropped == 4 - rnd.accepted
        assert rnd.draft_cache.dropped == 3 - rnd.accepted


@pytest.mark.parametrize("chain", bd.CHAINS)
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_an_identical_draft_commits_k_plus_one_every_round(chain, temperature):
    target, draft = _pair(chain, "identical")
    demo = replay(target, draft, [THE], 5, seed=11, rounds=30, sampling=SamplingConfig(temperature))
    assert all(len(r.committed) == 6 and r.kinds[-1] == "bonus" for r in demo.rounds)
    assert bd.measured_alpha(demo.rounds) == 1.0
    np.testing.assert_allclose(bd.acceptance_by_context(target, draft, SamplingConfig(temperature)), 1.0)


def test_a_demo_is_deterministic_and_step_by_step():
    target, draft = _pair("story", "good")
    long = replay(target, draft, [THE], 3, seed=5, rounds=10)
    short = replay(target, draft, [THE], 3, seed=5, rounds=4)
    stepped = bd.BlockDemo(target, draft, [THE], 3, seed=5)
    for _ in range(4):
        stepped.step()
    for a, b, c in zip(long.rounds, short.rounds, stepped.rounds, strict=False):
        assert a.drafts == b.drafts == c.drafts and a.committed == b.committed == c.committed
    assert short.committed == stepped.committed == long.committed[: short.rounds[-1].length_after]
    other = replay(target, draft, [THE], 3, seed=6, rounds=10)
    assert other.committed != long.committed


def _transition_test(text: list[int], law: np.ndarray, min_visits: int = 40) -> float:
    """p-value of the transitions in `text` under a chain `law` (per-state chi-squares summed)."""
    counts = np.zeros_like(law)
    np.add.at(counts, (text[:-1], text[1:]), 1)
    stat, dof = 0.0, 0
    for state, row in enumerate(counts):
        if row.sum() < min_visits:
            continue
        test = chisquare(row, law[state])
        if test.p_value == 0.0:
            return 0.0  # a transition the law forbids
        stat += test.statistic
        dof += test.dof
    return chi2_sf(stat, dof)


@pytest.mark.parametrize(
    ("chain", "quality", "temperature"), [("story", "good", 1.0), ("random", "poor", 0.7)]
)
def test_the_committed_text_follows_the_target_chain(chain, quality, temperature):
    """Lossless: the text's transitions follow the target's processed chain (α = 0.001).

    The same test applied to the draft's chain must reject: it has the power to fail.
    """
    target, draft = _pair(chain, quality)
    config = SamplingConfig(temperature=temperature)
    demo = replay(target, draft, [THE], 3, seed=2024, rounds=600, sampling=config)
    size = target.vocab_size
    target_law = np.array([_processed(target, s, config) for s in range(size)])
    draft_law = np.array([_processed(draft, s, config) for s in range(size)])
    assert _transition_test(demo.committed, target_law) > 0.001
    assert _transition_test(demo.committed, draft_law) < 1e-6


@settings(max_examples=60, deadline=None)
@given(alpha=st.floats(0.0, 1.0), k=st.integers(1, 12))
def test_tokens_per_round_law_is_a_distribution_with_the_theory_mean(alpha, k):
    law = bd.tokens_per_round_law(alpha, k)
    assert law.shape == (k + 1,) and np.all(law >= 0)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    assert law @ np.arange(1, k + 2) == pytest.approx(expected_tokens(alpha, k), rel=1e-12)


def test_tokens_per_round_law_at_the_ends():
    np.testing.assert_array_equal(bd.tokens_per_round_law(1.0, 3), [0, 0, 0, 1])
    np.testing.assert_array_equal(bd.tokens_per_round_law(0.0, 3), [1, 0, 0, 0])
    np.testing.assert_allclose(bd.tokens_per_round_law(0.5, 2), [0.5, 0.25, 0.25])


def test_summary_counts_rounds_and_measures_alpha():
    target, draft = _pair("story", "good")
    assert bd.summarize([], 4) is None and bd.measured_alpha([]) is None
    demo = replay(target, draft, [THE], 4, seed=9, rounds=300)
    summary = bd.summarize(demo.rounds, 4)
    lengths = [len(r.committed) for r in demo.rounds]
    assert summary.counts.sum() == 300
    assert list(summary.counts) == [lengths.count(n) for n in range(1, 6)]
    accepted = sum(r.accepted for r in demo.rounds)
    assert summary.alpha == accepted / (accepted + sum(r.rejected is not None for r in demo.rounds))
    assert summary.mean_measured == pytest.approx(np.mean(lengths))
    # the measured mean lands near the i.i.d. prediction (the Markov pair is only roughly i.i.d.)
    assert summary.mean_measured == pytest.approx(summary.mean_theory, abs=0.25)
    by_context = bd.acceptance_by_context(target, draft)
    assert by_context.min() - 0.02 < summary.alpha < by_context.max() + 0.02


def test_bad_setups_raise_readable_errors():
    target = bd.target_chain("story")
    small = MarkovChainLM.random(3, seed=1)
    with pytest.raises(ValueError, match="share one vocabulary"):
        bd.BlockDemo(target, small, [THE], 3, seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        bd.BlockDemo(target, target, [THE], 0, seed=0)
    with pytest.raises(ValueError, match="prompt"):
        bd.BlockDemo(target, target, [], 2, seed=0)
    with pytest.raises(ValueError, match="unknown chain"):
        bd.target_chain("nope")
    with pytest.raises(ValueError, match="unknown draft"):
        bd.draft_chain(target, "nope")
    with pytest.raises(ValueError, match="alpha"):
        bd.tokens_per_round_law(1.5, 3)
    with pytest.raises(ValueError, match="K = 3"):
        bd.tokens_per_round_counts(replay(target, target, [THE], 3, 0, rounds=1).rounds, 4)


def test_a_long_replay_processes_each_chain_row_once(monkeypatch):
    target, draft = _pair("story", "good")
    calls = []
    real_apply = bd.apply

    def counting(logits, config):
        calls.append(1)
        return real_apply(logits, config)

    monkeypatch.setattr(bd, "apply", counting)
    demo = replay(target, draft, [THE], 4, seed=3, rounds=40, sampling=SamplingConfig(temperature=0.8))
    assert len(demo.rounds) == 40
    assert len(calls) <= target.vocab_size + draft.vocab_size  # one per distinct row, not ~9 a round
