"""Exercise sheets: seeded problems with fresh numbers, each with an answer key computed by
the course's own maths (specdec_core.verify, .theory, .sampling).

A sheet is a list of problems; every problem's numbers come from a generator seeded with
(sheet seed, topic, problem number), so the same seed gives the same sheet in every language
and a topic's problems do not change when other topics are added or removed. Probabilities
are multiples of 0.05 and uniforms have two decimals, so every answer can be found by hand.
Rendering to Markdown lives in :mod:`specdec_core.course.exercise_sheet`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdec_core.sampling import SamplingConfig, apply, greedy, greedy_equivalence
from specdec_core.theory import best_gamma, expected_tokens, round_costs, speedup, tokens_per_round_law
from specdec_core.verify import acceptance_probs, decompose, inverse_cdf, verify_block

#: Every topic, in the order a sheet lists them.
TOPICS: tuple[str, ...] = ("sampling", "decompose", "tokens", "speedup", "block", "story")
#: Tokens of the hand-sized examples.
LABELS: tuple[str, ...] = ("A", "B", "C", "D", "E")
#: Probabilities are whole multiples of 1 / STEPS.
STEPS = 20
#: The γ range searched for the best draft length.
MAX_GAMMA = 16
MAX_PER_TOPIC = 3
MAX_SEED = 99_999
#: A uniform this close to a threshold is drawn again: a hand calculation must not hinge on rounding.
MARGIN = 0.005

#: The seed story's own numbers (lessons: the emperor and his apprentice), in minutes.
STORY = {
    "draft_minutes": 15.0,  # 一刻钟: the apprentice drafts four pages
    "check_minutes": 7.5,  # 半刻钟: the emperor checks and corrects them
    "alone_minutes": 240.0,  # 两个时辰: the emperor writing the four pages himself
    "corrections": 7,  # 修改了七处
    "right": 16,  # 你只猜对了十七分之十六
    "of": 17,
    "claimed_speedup": 16.0,  # 快了十六倍
    "lines_per_round": 7,  # 先写出七八行
}


@dataclass(frozen=True)
class Problem:
    """One problem: ``given`` holds what the sheet states, ``answer`` what the key states."""

    topic: str
    number: int
    given: dict[str, Any]
    answer: dict[str, Any]


@dataclass(frozen=True)
class Sheet:
    seed: int
    problems: tuple[Problem, ...]


class GivenUniforms:
    """A source of the uniforms printed on a sheet, handed out in order (a hand simulation's
    dice): verify_block draws one per acceptance test and one per residual or bonus draw."""

    def __init__(self, uniforms: Sequence[float]) -> None:
        self._uniforms = list(uniforms)
        self.used = 0

    def random(self) -> float:
        if self.used >= len(self._uniforms):
            raise ValueError(f"the sheet gives only {len(self._uniforms)} uniforms.")
        self.used += 1
        return self._uniforms[self.used - 1]


def _rng(seed: int, topic: str, number: int) -> np.random.Generator:
    return np.random.default_rng([seed, TOPICS.index(topic), number])


def _law(rng: np.random.Generator, n: int, low: int = 1) -> np.ndarray:
    """A random law over n tokens in multiples of 1/STEPS, each at least low/STEPS."""
    counts = low + rng.multinomial(STEPS - n * low, rng.dirichlet(np.ones(n)))
    return counts.astype(np.float64) / STEPS


def _hundredths(values: np.ndarray | Sequence[float]) -> list[float]:
    return [round(float(v), 2) for v in values]


def sampling_problem(seed: int, number: int) -> Problem:
    """Logits and one filter: which tokens survive, and is it the same as greedy?"""
    rng = _rng(seed, "sampling", number)
    n = 5
    logits = [float(v) for v in rng.choice(np.arange(-2, 5), size=n, replace=False)]
    rule = ("top_k", "top_p", "temperature")[number % 3]
    if rule == "top_k":
        config = SamplingConfig(top_k=int(rng.integers(1, 3)))
        setting = config.top_k
    elif rule == "top_p":
        config = SamplingConfig(top_p=float(rng.choice([0.3, 0.5, 0.7, 0.9])))
        setting = config.top_p
    else:
        config = SamplingConfig(temperature=float(rng.choice([0.5, 2.0])))
        setting = config.temperature
    base = apply(logits, SamplingConfig())
    trace = apply(logits, config)
    collapsed, _ = greedy_equivalence(logits, config)
    return Problem(
        "sampling",
        number,
        given={"labels": list(LABELS[:n]), "logits": logits, "rule": rule, "setting": setting},
        answer={
            "softmax": [float(v) for v in base.probs],
            "probs": [float(v) for v in trace.probs],
            "support": [LABELS[i] for i in trace.support],
            "greedy": LABELS[greedy(logits)],
            "collapsed": bool(collapsed),
        },
    )


def decompose_problem(seed: int, number: int) -> Problem:
    """p and q over a few tokens: overlap, deficit, surplus, R, residual and α."""
    rng = _rng(seed, "decompose", number)
    n = 3 + number % 3
    while True:
        p, q = _law(rng, n), _law(rng, n)
        if not np.array_equal(p, q):
            break
    d = decompose(p, q)
    assert d.residual is not None  # p ≠ q, so R > 0
    return Problem(
        "decompose",
        number,
        given={"labels": list(LABELS[:n]), "p": _hundredths(p), "q": _hundredths(q)},
        answer={
            "overlap": [float(v) for v in d.overlap],
            "deficit": [float(v) for v in d.deficit],
            "surplus": [float(v) for v in d.surplus],
            "accept": [float(v) for v in acceptance_probs(p, q)],
            "residual": [float(v) for v in d.residual],
            "R": d.rejection_mass,
            "alpha": d.acceptance_rate,
        },
    )


def tokens_problem(seed: int, number: int) -> Problem:
    """α and γ: expected tokens per round, and the chances of the shortest and longest round."""
    rng = _rng(seed, "tokens", number)
    alpha = float(rng.integers(10, 20)) / STEPS  # 0.50 … 0.95
    gamma = int(rng.integers(2, 9))
    law = tokens_per_round_law(alpha, gamma)
    return Problem(
        "tokens",
        number,
        given={"alpha": alpha, "gamma": gamma},
        answer={
            "expected": float(expected_tokens(alpha, gamma)),
            "one": float(law[0]),
            "all": float(law[-1]),
            "most": gamma + 1,
        },
    )


def speedup_problem(seed: int, number: int) -> Problem:
    """α, γ and the draft's cost c: one round's cost, the speedup, and the best γ."""
    rng = _rng(seed, "speedup", number)
    alpha = float(rng.integers(10, 20)) / STEPS
    gamma = int(rng.integers(1, 9))
    c = float(rng.choice([0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4]))
    best = int(best_gamma(alpha, c, max_gamma=MAX_GAMMA))
    value = float(speedup(alpha, gamma, c))
    return Problem(
        "speedup",
        number,
        given={"alpha": alpha, "gamma": gamma, "c": c, "max_gamma": MAX_GAMMA},
        answer={
            "tokens": float(expected_tokens(alpha, gamma)),
            "cost": float(round_costs([gamma], c)[0]),
            "speedup": value,
            "faster": value > 1.0,
            "best_gamma": best,
            "best_speedup": float(speedup(alpha, best, c)),
        },
    )


def _thresholds(p_rows: list[np.ndarray], q_rows: list[np.ndarray], drafts: list[int]) -> list[float]:
    """Every value a uniform is compared with in the hand simulation (to keep uniforms clear of them)."""
    out: list[float] = []
    for p, q, x in zip(p_rows, q_rows, drafts, strict=False):
        out.append(float(acceptance_probs(p, q)[x]))
        residual = decompose(p, q).residual
        if residual is not None:
            out.extend(np.cumsum(residual).tolist())
    out.extend(np.cumsum(p_rows[-1]).tolist())
    return out


def block_problem(seed: int, number: int) -> Problem:
    """A two-draft round verified by hand with given uniforms (γ = 2, three target rows)."""
    rng = _rng(seed, "block", number)
    n, gamma = 3, 2
    p_rows = [_law(rng, n, low=0) for _ in range(gamma + 1)]
    q_rows = [_law(rng, n) for _ in range(gamma)]
    drafts = [int(inverse_cdf(q, rng.random())) for q in q_rows]
    thresholds = _thresholds(p_rows, q_rows, drafts)
    uniforms: list[float] = []
    while len(uniforms) < gamma + 1:
        u = float(rng.integers(1, 100)) / 100
        if all(abs(u - t) >= MARGIN for t in thresholds):
            uniforms.append(u)
    source = GivenUniforms(uniforms)
    result = verify_block(p_rows, q_rows, drafts, source)  # type: ignore[arg-type]
    rejected_at = result.accepted if result.accepted < gamma else None
    residual = None
    if rejected_at is not None:
        r = decompose(p_rows[rejected_at], q_rows[rejected_at]).residual
        residual = [float(v) for v in r] if r is not None else None
    return Problem(
        "block",
        number,
        given={
            "labels": list(LABELS[:n]),
            "gamma": gamma,
            "p_rows": [_hundredths(p) for p in p_rows],
            "q_rows": [_hundredths(q) for q in q_rows],
            "drafts": [LABELS[x] for x in drafts],
            "uniforms": uniforms,
        },
        answer={
            "accept_probs": list(result.acceptance_probs),
            "accepted": result.accepted,
            "tokens": [LABELS[t] for t in result.tokens],
            "kinds": list(result.kinds),
            "used": source.used,
            "rejected_at": rejected_at,
            "residual": residual,
        },
    )


def _story_answers(draft: float, check: float, alone: float, kept: float, gamma: int) -> dict[str, float]:
    together = draft + check
    return {
        "together": together,
        "speedup": alone / together,
        "check_only": alone / check,
        "kept": kept,
        "lines_per_round": float(expected_tokens(kept, gamma)),
    }


def story_problem(seed: int, number: int) -> Problem:
    """The seed story's arithmetic, then the same questions with fresh numbers."""
    rng = _rng(seed, "story", number)
    st = STORY
    own = _story_answers(
        st["draft_minutes"],
        st["check_minutes"],
        st["alone_minutes"],
        st["right"] / st["of"],
        st["lines_per_round"],
    )
    own["lines_if_rate"] = st["corrections"] * st["of"] / (st["of"] - st["right"])
    lines = int(rng.integers(6, 13)) * 10
    corrections = int(rng.integers(3, 10))
    draft = float(rng.choice([10, 15, 20, 30]))
    check = float(rng.choice([5, 7.5, 10]))
    hours = int(rng.integers(2, 7))
    gamma = int(rng.integers(4, 9))
    fresh = _story_answers(draft, check, 60.0 * hours, (lines - corrections) / lines, gamma)
    return Problem(
        "story",
        number,
        given={
            **st,
            "lines": lines,
            "corrections_new": corrections,
            "draft_new": draft,
            "check_new": check,
            "hours_new": hours,
            "gamma_new": gamma,
        },
        answer={"own": own, "fresh": fresh},
    )


MAKERS = {
    "sampling": sampling_problem,
    "decompose": decompose_problem,
    "tokens": tokens_problem,
    "speedup": speedup_problem,
    "block": block_problem,
    "story": story_problem,
}


def make_sheet(seed: int, topics: Sequence[str] = TOPICS, per_topic: int = 1) -> Sheet:
    """The sheet of `seed`: `per_topic` problems of each chosen topic (the story once)."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"the sheet seed must lie in 0 … {MAX_SEED}, got {seed!r}.")
    if not 1 <= per_topic <= MAX_PER_TOPIC:
        raise ValueError(f"problems per topic must lie in 1 … {MAX_PER_TOPIC}, got {per_topic!r}.")
    unknown = [t for t in topics if t not in TOPICS]
    if unknown:
        raise ValueError(f"unknown topic(s) {', '.join(unknown)}; choose from {', '.join(TOPICS)}.")
    problems = [
        MAKERS[topic](seed, number)
        for topic in TOPICS
        if topic in topics
        for number in range(1 if topic == "story" else per_topic)
    ]
    return Sheet(seed=seed, problems=tuple(problems))
