"""The exact Markov pair the engine's law tests share, and the exact law of its first tokens."""

from __future__ import annotations

import itertools

import numpy as np

from specdec_core.models import MarkovChainLM
from specdec_core.sampling import SamplingConfig, apply

#: Significance level of every statistical test on the pair (fixed seeds: the outcome is fixed too).
ALPHA = 1e-3
V = 4
TARGET = MarkovChainLM.random(V, seed=11, concentration=0.8)
DRAFT = TARGET.blend(MarkovChainLM.random(V, seed=12, concentration=0.8), 0.7)
START = 0
#: Runs per law test: with 64 outcomes this detects both broken rules in test_engine_markov at p < 1e-70.
RUNS = 3000


def chain_law(target: MarkovChainLM, start: int, cfg: SamplingConfig, n: int = 3) -> np.ndarray:
    """Exact law of the first n tokens `target` emits after `start`: products of its processed rows."""
    v = target.vocab_size
    rows = [apply(target.next_logits(t), cfg).probs for t in range(v)]
    law = np.zeros(v**n)
    for i, seq in enumerate(itertools.product(range(v), repeat=n)):
        prob, prev = 1.0, start
        for tok in seq:
            prob *= rows[prev][tok]
            prev = tok
        law[i] = prob
    return law


def joint_law(cfg: SamplingConfig, n: int = 3) -> np.ndarray:
    """Exact law of this pair's first n emitted tokens."""
    return chain_law(TARGET, START, cfg, n)
