"""The engine on exact Markov-chain pairs: losslessness in law, round invariants, events, locks."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import specdec_core.engine.rows as engine_rows
import specdec_core.engine.verification as verification
from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate, summarize
from specdec_core.models import MarkovChainLM, NGramDraft
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.stats import chisquare
from specdec_core.verify import BlockResult, sample
from tests.markov_pair import ALPHA, DRAFT, RUNS, START, TARGET, V, joint_law


def sequence_counts(cfg: SamplingConfig, gamma: int, runs: int, n: int = 3) -> np.ndarray:
    counts = np.zeros(V**n)
    for seed in range(runs):
        toks = [t for e in generate(TARGET, DRAFT, [START], cfg, gamma, n, seed) for t in e.committed]
        assert len(toks) == n
        counts[int(np.ravel_multi_index(toks, (V,) * n))] += 1
    return counts


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize(
    ("gamma", "cfg"),
    [(1, SamplingConfig()), (3, SamplingConfig()), (3, SamplingConfig(temperature=0.8, top_k=3, top_p=0.95))],
)
def test_first_three_tokens_follow_the_target_law(gamma, cfg):
    counts = sequence_counts(cfg, gamma, runs=RUNS)
    result = chisquare(counts, joint_law(cfg))
    assert result.p_value > ALPHA, result


def _resample_from_p(p_rows, q_rows, drafts, rng):
    """A plausible but wrong verifier: on rejection it draws from p instead of the residual."""
    tokens, kinds = [], []
    for i, x in enumerate(drafts):
        if rng.random() < min(1.0, p_rows[i][x] / q_rows[i][x]):
            tokens.append(x)
            kinds.append("accepted")
            continue
        tokens.append(sample(np.asarray(p_rows[i]), rng))
        kinds.append("corrected")
        return BlockResult(i, tokens, kinds, [])
    tokens.append(sample(np.asarray(p_rows[len(drafts)]), rng))
    kinds.append("bonus")
    return BlockResult(len(drafts), tokens, kinds, [])


def _resample_from_p_lazily(p_row, q_rows, drafts, rng):
    """The wrong verifier behind the engine's on-demand interface (``verify.verify_rows``)."""
    rows = [p_row(i) for i in range(len(drafts) + 1)]
    result = _resample_from_p(rows, q_rows, drafts, rng)
    return result, rows[: len(result.tokens)]


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_the_law_test_catches_a_wrong_verifier(monkeypatch):
    monkeypatch.setattr(verification, "verify_rows", _resample_from_p_lazily)
    counts = sequence_counts(SamplingConfig(), 3, runs=RUNS)
    assert chisquare(counts, joint_law(SamplingConfig())).p_value < ALPHA


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_the_law_test_catches_a_draft_that_samples_another_law(monkeypatch):
    real_draw = engine_rows.RunMaths.draw

    def greedy_draw(self, row):  # reports the sampled q but proposes its argmax
        _, q = real_draw(self, row)
        return int(np.argmax(q)), q

    monkeypatch.setattr(engine_rows.RunMaths, "draw", greedy_draw)
    counts = sequence_counts(SamplingConfig(), 3, runs=RUNS)
    assert chisquare(counts, joint_law(SamplingConfig())).p_value < ALPHA


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_ngram_draft_keeps_the_law():
    """One-hot q from prompt lookup, verified under sampling, still emits the target's law."""
    cfg = SamplingConfig()
    counts = np.zeros(V**3)
    prompt = [1, 2, 3, 1, 2, 3, 0]
    draft = NGramDraft.for_model(TARGET, min_ngram=1)  # single-token matches: it proposes often
    for seed in range(RUNS):
        toks = [t for e in generate(TARGET, draft, prompt, cfg, 3, 3, seed) for t in e.committed]
        counts[int(np.ravel_multi_index(toks, (V, V, V)))] += 1
    assert chisquare(counts, joint_law(cfg)).p_value > ALPHA


CONFIGS = [
    SamplingConfig(temperature=0),
    SamplingConfig(),
    SamplingConfig(temperature=0.7, top_k=3),
    SamplingConfig(temperature=1.3, top_p=0.8, order=("top_p", "temperature", "top_k")),
]


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("adaptive", [False, True])
def test_fast_paths_match_the_reference_maths(cfg, adaptive):
    target = MarkovChainLM.random(7, seed=3, concentration=0.4)
    draft = target.blend(MarkovChainLM.random(7, seed=4), 0.5)
    kw = dict(sampling=cfg, gamma=3, max_new_tokens=40, seed=5, adaptive_gamma=adaptive)
    fast = list(generate(target, draft, [0], **kw))
    ref = list(generate(target, draft, [0], options=RunOptions(reference=True), **kw))
    assert len(fast) == len(ref)
    for a, b in zip(fast, ref, strict=True):
        assert (a.draft_tokens, a.committed, a.kinds) == (b.draft_tokens, b.committed, b.kinds)
        np.testing.assert_allclose(a.acceptance_probs, b.acceptance_probs, atol=1e-12)
        np.testing.assert_allclose(a.draft_q, b.draft_q, atol=1e-12)
        np.testing.assert_allclose(a.draft_p, b.draft_p, atol=1e-12)
        for ra, rb in zip(a.p_rows + a.q_rows, b.p_rows + b.q_rows, strict=True):
            assert ra.ids == rb.ids
            np.testing.assert_allclose(ra.probs, rb.probs, atol=1e-12)
    ar_fast = [e.committed for e in autoregressive(target, [0], cfg, 30, 9)]
    ar_ref = [
        e.committed for e in autoregressive(target, [0], cfg, 30, 9, options=RunOptions(reference=True))
    ]
    assert ar_fast == ar_ref


def test_greedy_speculation_equals_greedy_decoding():
    target = MarkovChainLM.random(9, seed=21, concentration=0.3)
    greedy = SamplingConfig(temperature=0)
    expected = [t for e in autoregressive(target, [2], greedy, 50) for t in e.committed]
    for draft in (target.blend(MarkovChainLM.random(9, seed=22), 0.6), NGramDraft.for_model(target)):
        for gamma in (1, 4):
            out = [
                t
                for e in generate(target, draft, [2], greedy, gamma, 50, adaptive_gamma=gamma == 4)
                for t in e.committed
            ]
            assert out == expected


@pytest.mark.parametrize("gamma", [1, 2, 5])
def test_rounds_commit_one_to_gamma_plus_one_and_stop_at_the_budget(gamma):
    events = list(generate(TARGET, DRAFT, [0], SamplingConfig(), gamma, 23, seed=1))
    for e in events:
        assert 1 <= len(e.committed) <= e.gamma + 1 <= gamma + 1
        assert len(e.kinds) == len(e.committed)
        assert e.committed[: e.accepted_count] == e.draft_tokens[: e.accepted_count]
        assert all(k == "accepted" for k in e.kinds[: e.accepted_count])
        assert e.kinds[-1] in ("corrected", "bonus")
        assert e.kinds[-1] == ("corrected" if e.rejected else "bonus")
        assert len(e.p_rows) == len(e.committed) and len(e.q_rows) == len(e.draft_tokens)
        assert len(e.draft_p) == len(e.acceptance_probs) == e.accepted_count + e.rejected
        assert e.target_forwards == 1 and e.draft_forwards == e.gamma
    assert sum(len(e.committed) for e in events) == 23
    assert [e.stop_reason for e in events] == [None] * (len(events) - 1) + ["max_new_tokens"]
    assert [e.position for e in events] == list(np.cumsum([0] + [len(e.committed) for e in events[:-1]]))


def test_generation_stops_at_eos_and_drops_what_follows():
    t = np.full((3, 3), 0.05)
    t[:, 2] = 0.9  # token 2 is EOS and very likely
    target = MarkovChainLM(t / t.sum(1, keepdims=True), eos_token_id=2)
    draft = MarkovChainLM(np.full((3, 3), 1 / 3), eos_token_id=2)
    for seed in range(20):
        events = list(generate(target, draft, [0], SamplingConfig(), 4, 50, seed))
        toks = [x for e in events for x in e.committed]
        assert toks.count(2) == 1 and toks[-1] == 2
        assert events[-1].stop_reason == "eos"
        ar = list(autoregressive(target, [0], SamplingConfig(), 50, seed))
        assert ar[-1].committed == [2] and ar[-1].stop_reason == "eos"
    no_stop = [
        x
        for e in generate(
            target, draft, [0], SamplingConfig(), 4, 30, 0, options=RunOptions(stop_at_eos=False)
        )
        for x in e.committed
    ]
    assert len(no_stop) == 30


def test_same_seed_same_events_and_json_round_trip():
    kw = dict(sampling=SamplingConfig(temperature=0.9, top_k=3), gamma=3, max_new_tokens=30, seed=4)
    a = list(generate(TARGET, DRAFT, [1], adaptive_gamma=True, **kw))
    b = list(generate(TARGET, DRAFT, [1], adaptive_gamma=True, **kw))
    assert [e.to_dict(timings=False) for e in a] == [e.to_dict(timings=False) for e in b]
    c = list(generate(TARGET, DRAFT, [1], **{**kw, "seed": 5}))
    assert [e.committed for e in a] != [e.committed for e in c]
    text = json.dumps([e.to_dict() for e in a])
    back = [RoundEvent.from_dict(d) for d in json.loads(text)]
    assert back == a
    ar = list(autoregressive(TARGET, [1], SamplingConfig(), 5, 0))
    assert [RoundEvent.from_dict(json.loads(json.dumps(e.to_dict()))) for e in ar] == ar
    assert all(e.kinds == ["target"] and e.mode == "autoregressive" and len(e.p_rows) == 1 for e in ar)


def test_rows_are_compact_and_exact():
    target = MarkovChainLM.random(30, seed=1)
    draft = target.blend(MarkovChainLM.random(30, seed=2), 0.5)
    e = next(iter(generate(target, draft, [0], SamplingConfig(), 2, 10, 0, options=RunOptions(top_n=5))))
    row = e.p_rows[0]
    assert len(row.ids) == 5 and row.probs == sorted(row.probs, reverse=True)
    exact = apply(target.next_logits(0), SamplingConfig()).probs
    np.testing.assert_allclose(row.probs, exact[row.ids], atol=1e-12)
    assert row.other == pytest.approx(1 - exact[row.ids].sum(), abs=1e-12)
    assert e.draft_p[0] == pytest.approx(exact[e.draft_tokens[0]], abs=1e-12)
    bare = next(iter(generate(target, draft, [0], SamplingConfig(), 2, 10, 0, options=RunOptions(top_n=0))))
    assert bare.p_rows == [] and bare.q_rows == [] and bare.committed == e.committed


def test_summary_adds_up():
    events = list(generate(TARGET, DRAFT, [0], SamplingConfig(), 3, 40, seed=2))
    s = summarize(events)
    assert s.tokens == 40 and s.rounds == len(events)
    assert s.accepted == sum(e.accepted_count for e in events)
    assert 0 <= s.acceptance_rate <= 1 and s.draft_forwards == sum(e.gamma for e in events)


def test_bad_inputs_fail_at_call_time_with_plain_messages():
    with pytest.raises(ValueError, match="at least one token"):
        generate(TARGET, DRAFT, [], SamplingConfig(), 2, 5, 0)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        generate(TARGET, DRAFT, [V], SamplingConfig(), 2, 5, 0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        autoregressive(TARGET, [0], SamplingConfig(), 0, 0)
    with pytest.raises(ValueError, match="vocabulary"):
        generate(TARGET, MarkovChainLM.random(V + 1, seed=0), [0], SamplingConfig(), 2, 5, 0)
    with pytest.raises(ValueError, match="gamma"):
        generate(TARGET, DRAFT, [0], SamplingConfig(), -1, 5, 0)


def test_a_markov_run_never_imports_torch():
    """Importing the engine and the models and running both loops on Markov chains and an
    n-gram drafter leaves torch unloaded (a fresh interpreter, so no other test loaded it)."""
    code = (
        "import sys\n"
        "from specdec_core.engine import RunOptions, autoregressive, generate\n"
        "from specdec_core.models import MarkovChainLM, NGramDraft\n"
        "from specdec_core.sampling import SamplingConfig\n"
        "t = MarkovChainLM.random(4, seed=1); d = MarkovChainLM.random(4, seed=2)\n"
        "for cfg in (SamplingConfig(), SamplingConfig(temperature=0)):\n"
        "    assert list(generate(t, d, [1], cfg, 3, 20, 0, adaptive_gamma=True))\n"
        "    assert list(generate(t, d, [1], cfg, 3, 20, 0, options=RunOptions(reference=True)))\n"
        "    assert list(generate(t, NGramDraft(4, 2, 1), [1, 2, 1], cfg, 3, 20, 0))\n"
        "    assert list(autoregressive(t, [1], cfg, 5, 0))\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
