"""What the lab "Exact on a real model" shows, as plain data: share tables and one χ² test per rule.

* :func:`joint_test` — Pearson's χ² of the counted (x₁, x₂) pairs against p(x₁) p(x₂ | x₁):
  one cell per pair expected at least :data:`~specdec_core.live.law.MIN_EXPECTED` times, the
  rest pooled into one cell (``stats.chisquare``'s rule), and a pair the law forbids (p = 0)
  kept as its own cell, which makes the p-value 0. Beside it the total variation distance
  over the same cells, and the noise band: the 95th percentile of that distance for N draws
  from the exact law itself.
* :func:`share_table` — the first token's exact law beside each rule's counted shares (the
  most likely tokens and "the rest"), or the second token's after a given first token.
* :func:`snapshot` — all of it for a :class:`~specdec_core.live.law.LawLab` at one moment:
  computed from the counts and the laws already known, never running a model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from specdec_core.live.law import MIN_EXPECTED, ExactLaw, LawLab, Tally
from specdec_core.stats import chisquare, total_variation, tv_noise_band

#: Samples a first token needs before the second token's shares after it are shown.
MIN_CONDITIONAL = 30
#: Tokens listed by name in a share table (the rest are summed).
TOP_TOKENS = 8
#: Simulated samples behind the noise band, and its level.
NOISE_DRAWS = 2000
NOISE_LEVEL = 0.95
#: χ² p-values: at or above FITS the counts fit the law; below FAILS they do not.
FITS = 0.01
FAILS = 1e-3


@dataclass(frozen=True)
class JointTest:
    """χ² of `n` pairs over `cells` cells (``dof`` = cells − 1), TV over the same cells, and the
    95th percentile of TV for n exact draws (``tv_noise``)."""

    n: int
    cells: int
    statistic: float
    dof: int
    p_value: float
    tv: float
    tv_noise: float

    @property
    def verdict(self) -> str:
        """The reading of the p-value: "fits" (≥ :data:`FITS`), "fails" (< :data:`FAILS`) or
        "unclear"; "unclear" too while every pair is pooled into one cell (nothing to compare)."""
        if self.cells < 2 and self.p_value > 0:
            return "unclear"
        if self.p_value >= FITS:
            return "fits"
        return "fails" if self.p_value < FAILS else "unclear"


def _settled(tally: Tally, law: ExactLaw) -> tuple[dict[int, int], dict[int, Counter[int]]]:
    """The counts with every tie at a top-k / top-p cut settled (``ExactLaw.stand_in``): a
    first token the law cuts but ties a kept one merges into that token's whole row (counted
    there, its second tokens aside: ``whole``), a second token likewise into the kept token
    it ties. Returns (pairs counted per first token whose row stays whole, the rest by pair)."""
    whole: dict[int, int] = {}
    pairs: dict[int, Counter[int]] = {}
    for (x1, x2), c in tally.pairs.items():
        first = law.stand_in(None, x1) if law.first[x1] <= 0 else None
        if first is not None:
            whole[first] = whole.get(first, 0) + c
            continue
        second = law.stand_in(x1, x2) if law.first[x1] > 0 and law.second(x1)[x2] <= 0 else None
        pairs.setdefault(x1, Counter())[x2 if second is None else second] += c
    for x1 in whole:  # a row with a tie in it is one cell: its own pairs join it
        whole[x1] += sum(pairs.pop(x1, Counter()).values())
    return whole, pairs


def joint_cells(tally: Tally, law: ExactLaw) -> tuple[np.ndarray, np.ndarray]:
    """(observed counts, exact probabilities) per cell; the last cell pools the rest, and is
    left out when the other cells hold the law's whole support (a cell of probability 0 would
    count as a cell the χ² test does not have).

    Needs p(· | x₁) for every counted first token and for every first token expected
    :data:`MIN_EXPECTED` times (``LawLab`` computes them as samples arrive). A tie at a top-k
    or top-p cut is not an impossible pair: it counts as the kept token it ties (``_settled``)."""
    n = tally.n
    p1 = law.first
    whole, pairs = _settled(tally, law)
    rows = sorted(set(whole) | set(pairs) | set(law.likely_first(n)))
    obs: list[float] = []
    probs: list[float] = []
    rest_p = float(np.delete(p1, rows).sum())  # the mass outside the cells, summed (exactly 0 if none)
    for x1 in rows:
        if x1 in whole:  # the whole row, a tie merged into it: one cell
            obs.append(float(whole[x1]))
            probs.append(float(p1[x1]))
            continue
        seen = pairs.get(x1, Counter())
        if p1[x1] <= 0:  # a first token the law forbids: one impossible cell
            obs.append(float(sum(seen.values())))
            probs.append(0.0)
            continue
        joint = p1[x1] * law.second(x1)
        cells = set(np.flatnonzero(joint * n >= MIN_EXPECTED).tolist())
        cells |= {x2 for x2 in seen if joint[x2] <= 0}  # pairs the law forbids, if seen
        for x2 in sorted(cells):
            obs.append(float(seen.get(x2, 0)))
            probs.append(float(joint[x2]))
        rest_p += float(np.delete(joint, sorted(cells)).sum())
    rest_obs = float(n) - float(np.sum(obs))
    if rest_p == 0 and rest_obs == 0:
        return np.array(obs), np.array(probs)
    return np.array([*obs, rest_obs]), np.array([*probs, rest_p])


def joint_test(tally: Tally, law: ExactLaw, seed: int = 0) -> JointTest | None:
    """The χ² test of one rule's pairs, its TV and noise band; None before the first sample."""
    n = tally.n
    if n == 0:
        return None
    obs, probs = joint_cells(tally, law)
    probs = probs / probs.sum()  # the cells sum to 1 up to rounding: exactly, for the test
    chi = chisquare(obs, probs, MIN_EXPECTED)
    shares = obs / n
    tv = total_variation(shares, probs)
    noise = tv_noise_band(probs, n, np.random.default_rng(seed), NOISE_DRAWS, NOISE_LEVEL)
    return JointTest(n, int(obs.size), chi.statistic, chi.dof, chi.p_value, tv, noise)


@dataclass(frozen=True)
class ShareTable:
    """Exact probabilities beside counted shares, token by token, the last entry "the rest".

    ``given`` is the first token the table conditions on (None: the first token's table);
    ``shares[rule]`` is None when that rule has fewer than :data:`MIN_CONDITIONAL` samples
    with ``given`` first; ``counts[rule]`` is how many it has."""

    given: int | None
    given_text: str
    tokens: list[int]
    texts: list[str]
    exact: list[float]
    shares: dict[str, list[float] | None]
    counts: dict[str, int]


def share_table(
    lab: LawLab, text_of: Callable[[int], str], given: int | None = None, top: int = TOP_TOKENS
) -> ShareTable:
    """The `top` most likely tokens (and the rest) of the first token's law, or of the second's
    after `given`, with each rule's counted shares."""
    law = lab.law.first if given is None else lab.law.second(given)
    order = np.argsort(-law, kind="stable")[:top]
    tokens = [int(t) for t in order if law[t] > 0]
    exact = [float(law[t]) for t in tokens]
    exact.append(max(0.0, 1.0 - float(np.sum(exact))))
    shares: dict[str, list[float] | None] = {}
    counts: dict[str, int] = {}
    for rule, tally in lab.tallies.items():
        seen = tally.first() if given is None else tally.second(given)
        m = sum(seen.values())
        counts[rule] = m
        need = 1 if given is None else MIN_CONDITIONAL
        if m < need:
            shares[rule] = None
            continue
        listed = [seen.get(t, 0) / m for t in tokens]
        shares[rule] = [*listed, max(0.0, 1.0 - float(np.sum(listed)))]
    return ShareTable(
        given=given,
        given_text="" if given is None else text_of(given),
        tokens=tokens,
        texts=[text_of(t) for t in tokens],
        exact=exact,
        shares=shares,
        counts=counts,
    )


@dataclass(frozen=True)
class LawSnapshot:
    """The lab at one moment: samples done of each rule out of ``planned``, the first token's
    table, the second token's after the two most likely first tokens, and each rule's test."""

    rules: tuple[str, str]
    planned: int
    counts: dict[str, int]
    first: ShareTable
    second: list[ShareTable]
    tests: dict[str, JointTest | None]
    seconds: dict[str, float]
    law_forwards: int
    finished: bool

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def total(self) -> int:
        return self.planned * len(self.rules)

    @property
    def rate(self) -> float | None:
        """Speculative samples per second, the prefill and the law forwards included (None
        before the first one)."""
        exact = self.rules[0]
        spent, done = self.seconds.get(exact, 0.0), self.counts.get(exact, 0)
        return done / spent if spent > 0 and done > 0 else None

    @property
    def takeaway(self) -> str:
        """Which conclusion the counts support: "shown" (speculative fits, broken fails),
        "exact_only" (speculative fits, the broken rule not caught yet: more samples),
        "borderline" (the speculative p-value between :data:`FAILS` and :data:`FITS`: more
        samples or another seed), "unlucky" (the speculative counts look off: a 1-in-100
        event, or something wrong), or "early" (a rule without samples, or with all its pairs
        in one pooled cell)."""
        exact, broken = self.tests.get(self.rules[0]), self.tests.get(self.rules[1])
        if exact is None or broken is None:
            return "early"
        if exact.cells < 2 or (broken.cells < 2 and broken.p_value > 0):
            return "early"
        if exact.verdict == "fails":
            return "unlucky"
        if exact.verdict == "unclear":
            return "borderline"
        return "shown" if broken.verdict == "fails" else "exact_only"


def snapshot(lab: LawLab, text_of: Callable[[int], str], finished: bool = False) -> LawSnapshot:
    """The lab's tables and tests now (no model runs: every law needed is known)."""
    law = lab.law.first
    likely = [int(t) for t in np.argsort(-law, kind="stable")[:2] if law[t] > 0]
    second = [share_table(lab, text_of, x1) for x1 in likely if lab.law.known(x1)]
    tests = {
        rule: joint_test(tally, lab.law, lab.settings.seed + i)
        for i, (rule, tally) in enumerate(lab.tallies.items())
    }
    return LawSnapshot(
        rules=lab.rules,
        planned=lab.settings.samples,
        counts={rule: t.n for rule, t in lab.tallies.items()},
        first=share_table(lab, text_of),
        second=second,
        tests=tests,
        seconds=dict(lab.seconds),
        law_forwards=lab.law.forwards,
        finished=finished,
    )
