"""The block lesson's whole-sequence proof needs every stop of a draft chain to be decided
before the draft it would drop is drawn; the engine's confidence floor must keep that."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import generate
from specdec_core.engine.drafters import keeps_draft
from specdec_core.models import MarkovChainLM
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from specdec_core.verify import decompose
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


# ------------------------------------------------- the block lesson's example, enumerated exactly
# q = (0.9, 0.1) over A, B at every position and a floor of 0.2: a second draft follows A
# (0.9 × 0.9 ≥ 0.2) but not B (0.1 × 0.9 < 0.2), so a round's γ is 1 exactly when y₁ = B.
A, B = 0, 1
Q_ROWS = np.array([[0.9, 0.1], [0.9, 0.1]])
P_ROWS = np.array([[0.3, 0.7], [0.6, 0.4]])  # the target's next-token law after A, after B
FLOOR, CAP = 0.2, 3


def _drafts(last: int, looks_at_draw: bool) -> list[tuple[list[int], float]]:
    """Every chain the draft can offer after `last`, with its probability. The engine's rule
    decides before each draw, from the drafts so far (keeps_draft); `looks_at_draw` is the
    rule the lesson warns against: draw, then drop the draft if the chain falls below the floor."""
    out: list[tuple[list[int], float]] = []

    def grow(chain: list[int], mass: float, confidence: float) -> None:
        row = Q_ROWS[chain[-1] if chain else last]
        if len(chain) == CAP or (
            not looks_at_draw and not keeps_draft(confidence * row.max(), len(chain), FLOOR)
        ):
            out.append((chain, mass))
            return
        for y in (A, B):
            if looks_at_draw and chain and confidence * row[y] < FLOOR:
                out.append((chain, mass * row[y]))
            else:
                grow([*chain, y], mass * row[y], confidence * row[y])

    grow([], 1.0, 1.0)
    return out


def _judged(chain: list[int], last: int) -> list[tuple[list[int], float]]:
    """Every list of tokens the target commits for the drafts `chain` after `last`."""
    out: list[tuple[list[int], float]] = []

    def judge(i: int, before: int, committed: list[int], m: float) -> None:
        p, q = P_ROWS[before], Q_ROWS[before]
        if i == len(chain):  # every draft stood: the bonus
            out.extend(([*committed, x], m * p[x]) for x in (A, B))
            return
        y = chain[i]
        keep = min(1.0, p[y] / q[y])
        judge(i + 1, y, [*committed, y], m * keep)
        residual = decompose(p, q).residual
        if keep < 1 and residual is not None:
            out.extend(([*committed, x], m * (1 - keep) * residual[x]) for x in (A, B))

    judge(0, last, [], 1.0)
    return out


def _round(last: int, looks_at_draw: bool) -> list[tuple[list[int], float]]:
    """Every list of tokens one round commits after `last`, with its probability."""
    return [
        (committed, mass * m)
        for chain, mass in _drafts(last, looks_at_draw)
        for committed, m in _judged(chain, last)
    ]


def _law(length: int, looks_at_draw: bool = False) -> dict[tuple[int, ...], float]:
    """The exact law of the first `length` generated tokens after the prompt [A]."""
    law: dict[tuple[int, ...], float] = {}

    def go(text: tuple[int, ...], m: float) -> None:
        if len(text) >= length:
            law[text[:length]] = law.get(text[:length], 0.0) + m
            return
        for committed, mm in _round(text[-1] if text else A, looks_at_draw):
            go(text + tuple(committed), m * mm)

    go((), 1.0)
    return law


def test_the_lessons_example_the_floor_sets_gamma_from_the_drafts():
    chains = _drafts(A, looks_at_draw=False)
    assert sum(m for _, m in chains) == pytest.approx(1.0, abs=1e-12)
    for chain, _ in chains:
        assert (len(chain) == 1) == (chain[0] == B), chain
    # so given γ = 1, y₁ is B for sure: γ cannot be in the history when y₁ is judged
    gamma_one = [m for chain, m in chains if len(chain) == 1]
    assert sum(gamma_one) == pytest.approx(Q_ROWS[A][B], abs=1e-15)


def test_the_lessons_example_keeps_the_target_law_exactly():
    """Enumerating every draw: the first four tokens follow the target's law to 1e-12."""
    law = _law(4)
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    for text, mass in law.items():
        exact = np.prod([P_ROWS[prev][x] for prev, x in zip((A, *text[:-1]), text, strict=True)])
        assert mass == pytest.approx(exact, abs=1e-12), text


def test_a_stop_that_looks_at_the_drawn_draft_breaks_the_law():
    law = _law(4, looks_at_draw=True)
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    first_two = {(a, b): sum(m for t, m in law.items() if t[:2] == (a, b)) for a in (A, B) for b in (A, B)}
    assert first_two[(A, B)] != pytest.approx(P_ROWS[A][A] * P_ROWS[A][B], abs=1e-3)


def test_the_engine_drafts_one_token_exactly_when_it_is_b():
    target = MarkovChainLM(P_ROWS.tolist())
    draft = MarkovChainLM(Q_ROWS.tolist())
    draft.confidence_floor = FLOOR
    lengths = {B: set(), A: set()}
    for seed in range(60):
        first = next(iter(generate(target, draft, [A], SamplingConfig(), 2, 3, seed)))
        lengths[first.draft_tokens[0]].add(len(first.draft_tokens))
    assert lengths == {A: {2}, B: {1}}
