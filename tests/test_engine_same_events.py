"""Same seed → same events, across changes of the engine's code.

For seeded configurations (chains and trees, greedy and sampled, the reference maths, adaptive
γ, prompt lookup, held sessions, the broken rules, the target alone) on the exact Markov pair,
tiny random transformers and the bundled model, each run's committed tokens are written here,
with a digest of everything else its events carry without timings (kinds, draft tokens, each
draft's q and p, the q/p top-N rows, the accept tests' u, cache lengths, the tree). The values
were recorded by the engine as it stood before its round was rewritten into one function; a
change that moves one token or one probability of one event fails here.

The floats of transformers are compared through their sum, within 1e-4 (their float32 sums
differ in the last bits between kernels and thread counts); the Markov pair's are exact.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

import pytest

from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate
from specdec_core.engine.held import HeldSessions
from specdec_core.models import MarkovChainLM, NGramDraft
from specdec_core.sampling import SamplingConfig
from tests.markov_pair import DRAFT, START, TARGET

GREEDY = SamplingConfig(temperature=0)
HOT = SamplingConfig()
FILTERED = SamplingConfig(temperature=0.8, top_k=3, top_p=0.95)
EOS_TARGET = MarkovChainLM(TARGET.transitions, eos_token_id=3)
LOOKUP = NGramDraft.for_model(TARGET, min_ngram=1)
REPEATS = [1, 2, 3, 1, 2, 3, 0]


def fingerprint(events: Iterable[RoundEvent], exact: bool = True) -> tuple[list[int], str, float]:
    """The run's committed tokens, a digest of its events without timings, and the sum of their
    floats. ``exact=False`` (transformers) leaves the floats out of the digest: their sum is
    compared within a tolerance instead."""
    data: list[dict[str, Any]] = []
    tokens: list[int] = []
    for e in events:
        d = e.to_dict(timings=False)
        d["draft_steps"] = len(e.draft_step_s)  # how many steps were timed, not their seconds
        data.append(d)
        tokens += e.committed
    floats: list[float] = []
    skeleton = _split(data, floats)
    text = json.dumps(data if exact else skeleton, sort_keys=True)
    return tokens, hashlib.sha256(text.encode()).hexdigest()[:16], round(math.fsum(floats), 6)


def _split(x: Any, floats: list[float]) -> Any:
    """`x` with each float replaced by "f" and appended to `floats` (dict keys in sorted order)."""
    if isinstance(x, float):
        floats.append(x)
        return "f"
    if isinstance(x, list):
        return [_split(v, floats) for v in x]
    if isinstance(x, dict):
        return {k: _split(x[k], floats) for k in sorted(x)}
    return x


def _same(got: tuple[list[int], str, float], expected: tuple[list[int], str, float], exact: bool) -> None:
    assert got[:2] == expected[:2]
    assert got[2] == (expected[2] if exact else pytest.approx(expected[2], abs=1e-4))


def _held(seeds: list[int], rule: str = "exact") -> list[RoundEvent]:
    held = HeldSessions(TARGET, DRAFT, [START])
    out: list[RoundEvent] = []
    for seed in seeds:
        out += generate(
            TARGET,
            DRAFT,
            [START],
            HOT,
            2,
            6,
            seed,
            options=RunOptions(rule=rule, sessions=held, stop_at_eos=False),
        )
    return out


MARKOV_RUNS = {
    "chain greedy": lambda: generate(TARGET, DRAFT, [START], GREEDY, 3, 14, 0),
    "chain sampled": lambda: generate(TARGET, DRAFT, [START], HOT, 3, 16, 1),
    "chain filtered": lambda: generate(
        TARGET, DRAFT, [START], FILTERED, 2, 16, 2, options=RunOptions(top_n=3)
    ),
    "chain reference": lambda: generate(
        TARGET, DRAFT, [START], FILTERED, 3, 12, 3, options=RunOptions(reference=True)
    ),
    "chain theory γ": lambda: generate(TARGET, DRAFT, [START], HOT, 2, 24, 4, adaptive_gamma=True),
    "chain heuristic γ": lambda: generate(TARGET, DRAFT, [START], HOT, 2, 24, 5, adaptive_gamma="heuristic"),
    "chain lookup": lambda: generate(TARGET, LOOKUP, REPEATS, HOT, 3, 16, 6),
    "chain lookup greedy": lambda: generate(TARGET, LOOKUP, REPEATS, GREEDY, 3, 16, 6),
    "chain eos": lambda: generate(EOS_TARGET, DRAFT, [START], HOT, 3, 40, 7),
    "chain held": lambda: _held([8, 9, 10]),
    "chain accept_all": lambda: _held([11, 12], "accept_all"),
    "chain resample_from_p": lambda: _held([13, 14], "resample_from_p"),
    "tree greedy": lambda: generate(TARGET, DRAFT, [START], GREEDY, 4, 14, 0, tree=(2, 2)),
    "tree sampled": lambda: generate(TARGET, DRAFT, [START], HOT, 4, 16, 15, tree=(3, 1)),
    "tree filtered": lambda: generate(TARGET, DRAFT, [START], FILTERED, 4, 16, 16, tree=(2, 1, 1)),
    "tree reference": lambda: generate(
        TARGET, DRAFT, [START], HOT, 4, 12, 17, tree=(2, 2), options=RunOptions(reference=True)
    ),
    "tree lookup": lambda: generate(TARGET, LOOKUP, REPEATS, HOT, 4, 16, 18, tree=(2, 2)),
    "tree eos": lambda: generate(EOS_TARGET, DRAFT, [START], HOT, 4, 40, 19, tree=(2, 2)),
    "autoregressive": lambda: autoregressive(TARGET, [START], FILTERED, 12, 20),
}

MARKOV_EXPECTED: dict[str, tuple[list[int], str, float]] = {
    "chain greedy": ([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], "65a8701394a710c9", 73.211301),
    "chain sampled": ([1, 0, 3, 2, 2, 2, 3, 1, 0, 1, 2, 3, 2, 2, 0, 1], "d57caa4553736449", 56.471351),
    "chain filtered": ([1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 2, 1, 0, 1, 0], "98ee95fa9cdfd82e", 60.610531),
    "chain reference": ([1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 1, 0], "d17eb5a1a5ad18e8", 48.116769),
    "chain theory γ": (
        [1, 0, 1, 0, 1, 2, 2, 1, 0, 2, 3, 2, 2, 3, 1, 0, 1, 2, 1, 0, 1, 0, 1, 0],
        "ddbd8447b0ed687c",
        80.455243,
    ),
    "chain heuristic γ": (
        [1, 0, 1, 0, 0, 1, 2, 3, 2, 2, 1, 3, 0, 2, 1, 0, 1, 1, 0, 1, 1, 2, 2, 3],
        "a68976f999cf8d1c",
        85.147429,
    ),
    "chain lookup": ([1, 0, 1, 2, 1, 0, 1, 0, 3, 1, 0, 1, 0, 1, 2, 0], "168e3d839d2daf64", 92.874264),
    "chain lookup greedy": ([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], "30255f9a904c9399", 62.657076),
    "chain eos": ([1, 2, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 1, 0, 0, 1, 2, 2, 3], "cfe8b995fb00dd67", 87.98288),
    "chain held": ([1, 2, 2, 2, 2, 1, 1, 0, 1, 0, 2, 2, 1, 0, 1, 0, 1, 0], "2c53fe9f278ff507", 59.342305),
    "chain accept_all": ([1, 0, 1, 0, 1, 2, 1, 3, 0, 1, 0, 1], "f811ccfd76a7222e", 36.881057),
    "chain resample_from_p": ([1, 0, 3, 2, 2, 0, 2, 2, 2, 3, 2, 2], "a17e65d8d9849c98", 36.053702),
    "tree greedy": ([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], "f9812bb511f79ea9", 50.0),
    "tree sampled": ([1, 2, 2, 2, 2, 1, 0, 1, 0, 2, 0, 1, 1, 0, 2, 2], "e7d3bade30a1ea43", 92.86589),
    "tree filtered": ([1, 0, 1, 0, 1, 2, 2, 2, 2, 0, 1, 2, 2, 1, 0, 1], "9b6f561deba71b6c", 99.741552),
    "tree reference": ([1, 0, 1, 0, 2, 1, 0, 1, 0, 1, 0, 1], "3062ecc903cccc02", 63.666139),
    "tree lookup": ([1, 0, 1, 2, 2, 2, 2, 0, 1, 3, 1, 0, 1, 2, 2, 2], "cc101a3205aef54c", 63.95779),
    "tree eos": ([1, 2, 2, 3], "76022df59d29fa94", 21.07739),
    "autoregressive": ([1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 1], "5f720f8cd79df00a", 12.0),
}


@pytest.mark.parametrize("name", list(MARKOV_RUNS))
def test_markov_runs_give_the_recorded_events(name):
    _same(fingerprint(MARKOV_RUNS[name]()), MARKOV_EXPECTED[name], exact=True)


def _hf_runs(target: Any, draft: Any, layer_skip: Any, prompt: list[int]) -> dict[str, Any]:
    held = HeldSessions(target, draft, prompt)
    return {
        "chain greedy": lambda: generate(target, draft, prompt, GREEDY, 3, 10, 0),
        "chain sampled": lambda: generate(target, draft, prompt, HOT, 3, 10, 1),
        "chain filtered": lambda: generate(target, draft, prompt, FILTERED, 2, 10, 2),
        "chain layer-skip": lambda: generate(target, layer_skip, prompt, HOT, 3, 10, 3),
        "chain held": lambda: [
            e
            for s in (4, 5)
            for e in generate(target, draft, prompt, HOT, 2, 6, s, options=RunOptions(sessions=held))
        ],
        "tree greedy": lambda: generate(target, draft, prompt, GREEDY, 4, 10, 0, tree=(2, 2)),
        "tree sampled": lambda: generate(target, draft, prompt, HOT, 4, 10, 6, tree=(3, 1)),
        "tree layer-skip": lambda: generate(target, layer_skip, prompt, FILTERED, 4, 10, 7, tree=(2, 2)),
        "autoregressive": lambda: autoregressive(target, prompt, HOT, 8, 8),
    }


TINY_EXPECTED: dict[str, tuple[list[int], str, float]] = {
    "chain greedy": ([246, 178, 181, 188, 195, 268, 40, 39, 127, 225], "cd437bb632717eaa", 62.408688),
    "chain sampled": ([78, 8, 33, 145, 228, 185, 205, 36, 217, 299], "bb820c64be0c2574", 39.282852),
    "chain filtered": ([60, 127, 8, 288, 178, 103, 256, 136, 268, 202], "310b56c79995329d", 36.751168),
    "chain layer-skip": ([33, 151, 189, 64, 136, 87, 172, 106, 194, 139], "fc35f8b3c23913f4", 31.26689),
    "chain held": ([24, 26, 251, 92, 144, 297, 62, 15, 78, 237, 236, 26], "56ce15f9215b298c", 37.789737),
    "tree greedy": ([246, 178, 181, 188, 195, 268, 40, 39, 127, 225], "eb192fd6d1e088ad", 28.0),
    "tree sampled": ([33, 14, 232, 36, 196, 287, 273, 187, 47, 258], "3b4d6fecaa2d5e13", 51.201687),
    "tree layer-skip": ([246, 205, 163, 177, 62, 225, 70, 217, 205, 131], "01d8288a16cd229c", 53.247304),
    "autoregressive": ([97, 318, 115, 268, 270, 148, 136, 136], "9dc0875710cf937e", 8.0),
}


@pytest.fixture(scope="module")
def tiny_runs(tiny_hf_folders) -> dict[str, Any]:
    from specdec_core.models import HFCausalLM, LayerSkipDraft

    target = HFCausalLM.load(tiny_hf_folders["target"], device="cpu")
    draft = HFCausalLM.load(tiny_hf_folders["draft"], device="cpu")
    prompt = target.encode("the quick brown fox jumps over")
    return _hf_runs(target, draft, LayerSkipDraft(target, 2), prompt)


@pytest.mark.parametrize("name", list(TINY_EXPECTED))
def test_tiny_transformer_runs_give_the_recorded_events(tiny_runs, name):
    _same(fingerprint(tiny_runs[name](), exact=False), TINY_EXPECTED[name], exact=False)


def _bundled_runs(target: Any) -> dict[str, Any]:
    from specdec_core.models import LayerSkipDraft

    prompt = target.encode("Name three rivers.", chat=True)
    skip = LayerSkipDraft(target, 8)
    lookup = NGramDraft.for_model(target)
    return {
        "chain greedy layer-skip": lambda: generate(target, skip, prompt, GREEDY, 4, 16, 0),
        "chain sampled layer-skip": lambda: generate(target, skip, prompt, FILTERED, 3, 16, 1),
        "chain lookup": lambda: generate(target, lookup, prompt, HOT, 4, 16, 2),
        "tree sampled layer-skip": lambda: generate(target, skip, prompt, HOT, 4, 16, 3, tree=(2, 2)),
        "tree greedy layer-skip": lambda: generate(target, skip, prompt, GREEDY, 4, 16, 4, tree=(2, 1)),
    }


BUNDLED_EXPECTED: dict[str, tuple[list[int], str, float]] = {
    "chain greedy layer-skip": (
        [33, 30, 378, 3992, 282, 5330, 42, 669, 314, 253, 3953, 284, 3201, 4626, 338, 7313],
        "12bb981568dbffaa",
        132.622028,
    ),
    "chain sampled layer-skip": (
        [33, 30, 378, 3992, 16642, 731, 669, 314, 253, 2224, 45163, 28, 12819, 1699, 3518, 284],
        "0d6ccdeb1c5ea189",
        91.564364,
    ),
    "chain lookup": (
        [54, 565, 7129, 28, 3536, 4075, 28, 284, 659, 6401, 280, 101, 42, 1216, 1296, 7626],
        "959f2f97cdce5e0e",
        16.0,
    ),
    "tree sampled layer-skip": (
        [3965, 800, 7626, 654, 457, 719, 12380, 13624, 28, 260, 4594, 314, 540, 5161, 288, 1462],
        "ea753e4c0eeffd15",
        98.251422,
    ),
    "tree greedy layer-skip": (
        [33, 30, 378, 3992, 282, 5330, 42, 669, 314, 253, 3953, 284, 3201, 4626, 338, 7313],
        "db38eb55c152f40a",
        48.0,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUNDLED_EXPECTED))
def test_bundled_model_runs_give_the_recorded_events(bundled_model, name):
    _same(fingerprint(_bundled_runs(bundled_model)[name](), exact=False), BUNDLED_EXPECTED[name], exact=False)
