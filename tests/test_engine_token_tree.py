"""Tree rounds of the engine on exact Markov pairs: the target's law, greedy equality, events."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import specdec_core.engine.verification as engine_verification
from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate
from specdec_core.models import MarkovChainLM, NGramDraft
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from specdec_core.verify import CandidateResult
from tests.markov_pair import ALPHA, DRAFT, RUNS, START, TARGET, V, joint_law


def counts_of(draft, prompt, cfg, shape, runs=RUNS, n=3) -> np.ndarray:
    counts = np.zeros(V**n)
    for seed in range(runs):
        ev = generate(
            TARGET, draft, prompt, cfg, max_new_tokens=n, seed=seed, options=RunOptions(top_n=0), tree=shape
        )
        toks = [t for e in ev for t in e.committed]
        assert len(toks) == n
        counts[int(np.ravel_multi_index(toks, (V,) * n))] += 1
    return counts


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize(
    ("shape", "cfg"),
    [((2, 2), SamplingConfig()), ((3, 1), SamplingConfig(temperature=0.8, top_k=3, top_p=0.95))],
)
def test_first_three_tokens_follow_the_target_law(shape, cfg):
    result = chisquare(counts_of(DRAFT, [START], cfg, shape), joint_law(cfg))
    assert result.p_value > ALPHA, result


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_ngram_point_mass_trees_keep_the_law():
    prompt = [0, 1, 2, 0, 2, 3, 0, 3, 1, 0]  # "0" was followed by 1, 2 and 3: three children
    draft = NGramDraft.for_model(TARGET, min_ngram=1)
    first = next(generate(TARGET, draft, prompt, max_new_tokens=3, tree=(2, 2)))
    assert first.tree["tokens"][1:3] == [3, 2]  # the latest match first
    counts = counts_of(draft, prompt, SamplingConfig(), (2, 2))
    law = joint_law(SamplingConfig())
    assert chisquare(counts, law).p_value > ALPHA


def test_the_law_test_catches_a_verifier_that_accepts_any_child(monkeypatch):
    def first_child(p, q, candidates, rng, replacement=True):
        return CandidateResult(token=int(candidates[0]), accepted_index=0, acceptance_probs=[1.0])

    monkeypatch.setattr(engine_verification, "verify_candidates", first_child)
    counts = counts_of(DRAFT, [START], SamplingConfig(), (2, 2), runs=1500)
    assert chisquare(counts, joint_law(SamplingConfig())).p_value < ALPHA


@pytest.mark.parametrize("shape", [(1,), (2, 2), (3, 2, 1), (4,)])
def test_greedy_trees_equal_greedy_decoding(shape):
    cfg = SamplingConfig(temperature=0)
    target = MarkovChainLM.random(16, seed=3, concentration=0.3)
    draft = target.blend(MarkovChainLM.random(16, seed=4), 0.6)
    want = [t for e in autoregressive(target, [0], cfg, 60) for t in e.committed]
    for d in (draft, NGramDraft.for_model(target, min_ngram=1)):
        got = [t for e in generate(target, d, [0], cfg, max_new_tokens=60, tree=shape) for t in e.committed]
        assert got == want


def test_rounds_commit_one_path_and_stop_at_the_budget():
    events = list(
        generate(TARGET, DRAFT, [START], SamplingConfig(), max_new_tokens=41, seed=5, tree=(2, 2, 1))
    )
    assert sum(len(e.committed) for e in events) == 41
    for e in events:
        t = e.tree
        assert 1 <= len(e.committed) <= 4 and e.stop_reason in (None, "max_new_tokens")
        path = t["path"]
        assert path[0] == 0 and all(t["parents"][b] == a for a, b in itertools.pairwise(path))
        assert [t["tokens"][i] for i in path[1:]] == e.committed[: len(path) - 1] or e.stop_reason
        assert all(t["status"][i] == "accepted" for i in path[1:])
        assert e.accepted_count == len(path) - 1 or e.stop_reason
        for node in range(t["depths"].__len__()):  # children of a node are distinct tokens
            kids = [t["tokens"][c] for c, par in enumerate(t["parents"]) if par == node]
            assert len(kids) == len(set(kids))
        assert e.kinds[-1] in ("corrected", "bonus") or e.stop_reason
        assert (e.kinds[-1] == "bonus") == (t["depths"][path[-1]] == len(t["branching"])) or e.stop_reason


def test_same_seed_same_events_and_json_round_trip():
    def run():
        return [
            e.to_dict(timings=False)
            for e in generate(TARGET, DRAFT, [START], max_new_tokens=20, seed=9, tree=(2, 2))
        ]

    first = run()
    assert first == run()
    back = [RoundEvent.from_dict(json.loads(json.dumps(d))).to_dict(timings=False) for d in first]
    assert back == first and first[0]["tree"]["q"][0] is not None


def test_a_tree_refuses_adaptive_gamma_and_bad_shapes():
    with pytest.raises(ValueError, match="adaptive"):
        generate(TARGET, DRAFT, [START], tree=(2, 2), adaptive_gamma=True)
    with pytest.raises(ValueError, match="b_2"):
        generate(TARGET, DRAFT, [START], tree=(2, 0))
