"""The block lesson's whole-sequence proof needs every stop of a draft chain to be decided
before the draft it would drop is drawn; the engine's confidence floor must keep that."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import generate
from specdec_core.models import MarkovChainLM
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from tests.markov_pair import ALPHA

ROW = [0.5, 0.3, 0.2]
RUNS = 600


def _second_token_counts(floor: float) -> tuple[np.ndarray, list[int]]:
    """Counts of the second generated token (every row of both chains is ROW, so its law is
    ROW) and the drafts of each first round."""
    target = MarkovChainLM([ROW] * 3)
    draft = MarkovChainLM([ROW] * 3)
    draft.confidence_floor = floor
    counts, drafted = np.zeros(3), []
    for seed in range(RUNS):
        events = list(generate(target, draft, [0], SamplingConfig(), 2, 3, seed))
        tokens = [t for e in events for t in e.committed]
        counts[tokens[1]] += 1
        drafted.append(len(events[0].draft_tokens))
    return counts, drafted


@pytest.mark.parametrize("floor", [0.0, 0.2, 0.3])
def test_a_confidence_floor_keeps_the_target_law_when_sampling(floor):
    """Floor 0.2: a second draft follows a first draft of token 0 (0.5 × 0.5 ≥ 0.2), not one of
    token 1 (0.3 × 0.5 < 0.2). A stop that looked at the drawn second token instead would keep
    it only when it is token 0, and the second token would be 0 with probability 0.625."""
    counts, drafted = _second_token_counts(floor)
    assert chisquare(counts, np.array(ROW)).p_value > ALPHA
    expected = {0.0: {2}, 0.2: {1, 2}, 0.3: {1}}[floor]  # the first round drafts min(γ, 3 − 1) = 2 at most
    assert set(drafted) == expected
