"""The lab "Exact on a real model": many short speculative runs on one prompt, counted against
the target's own law.

Under sampling two runs give two texts; what speculative decoding keeps is the *law* of the
text. The lab draws M samples, each a ``generate`` run with γ drafts and γ + 1 new tokens (so
the first round drafts γ tokens; the default γ = 2 drafts two) whose first two committed tokens
(x₁, x₂) it counts, and the same number under a broken rule (``engine.rules``). The exact law
comes from the target alone: one forward on the prompt gives p(x₁), one more per conditioning
first token gives p(x₂ | x₁), both processed with the run's temperature, top-k and top-p.
:mod:`.law_view` turns the counts into tables and a χ² test.

Every run reuses the prompt's cache (``engine.HeldSessions``): the prompt is prefilled once.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specdec_core.engine import RunOptions, generate
from specdec_core.engine.held import HeldSessions
from specdec_core.engine.processing import float64_rows, process_rows
from specdec_core.engine.rules import BROKEN_RULES
from specdec_core.live.model_choices import DraftSpec, TargetSpec, drafts_for
from specdec_core.models import catalog
from specdec_core.sampling import SamplingConfig

#: Samples per rule: the default, the most the lab allows, and the classroom default cap.
DEFAULT_SAMPLES = 300
MAX_SAMPLES = 2000
#: γ the lab offers (each sample drafts γ tokens in its first round).
GAMMA_RANGE = (1, 4)
DEFAULT_GAMMA = 2
#: A cell (x₁, x₂) whose expected count is below this is pooled (the χ² rule of thumb).
MIN_EXPECTED = 5.0
#: How far apart two logits may lie and still count as a tie at a top-k / top-p cut: well
#: above the few-row kernels' disagreement with one-row forwards, far below a real gap.
TIE_LOGITS = 1e-3
#: Samples of the exact rule before the lab estimates the time left.
ETA_AFTER = 5


class LawError(ValueError):
    """Settings the lab refuses; ``code`` names the case ("greedy", "top_k_one", "samples",
    "cap", "gamma", "rule", "target", "draft") and ``params`` its numbers or model kinds, for a
    translated message."""

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class LawSettings:
    """One lab run: the models, the prompt's handling, the sampling transforms, γ, M samples per rule
    and the broken rule."""

    target: TargetSpec
    draft: DraftSpec
    chat: bool = True
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    gamma: int = DEFAULT_GAMMA
    samples: int = DEFAULT_SAMPLES
    broken: str = "accept_all"
    seed: int = 0

    @property
    def max_new_tokens(self) -> int:
        """γ + 1: the first round drafts γ tokens (``generate`` keeps room for its bonus token)."""
        return self.gamma + 1

    def sampling(self) -> SamplingConfig:
        return SamplingConfig(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)


def law_targets() -> tuple[str, ...]:
    """The targets the lab offers: every catalog target that loads without a typed source."""
    return tuple(t.key for t in catalog.targets() if not t.needs_source)


def law_drafts(target_kind: str) -> tuple[str, ...]:
    """The drafts the lab offers with a target: those that fit it, none from a typed source."""
    return tuple(k for k in drafts_for(target_kind) if not catalog.draft(k).source)


def check_settings(s: LawSettings, cap: int | None = None) -> None:
    """Raise :class:`LawError` for settings the lab cannot run; `cap` is the classroom's bound on M."""
    if s.target.kind not in law_targets():
        offered = ", ".join(law_targets())
        raise LawError("target", f"the lab runs on {offered}.", targets=offered)
    if s.draft.kind not in law_drafts(s.target.kind):
        raise LawError(
            "draft",
            f"the draft {s.draft.kind} does not fit the target {s.target.kind}.",
            draft=s.draft.kind,
            target=s.target.kind,
        )
    if s.temperature <= 0:
        raise LawError(
            "greedy", "T = 0 is greedy decoding: every run gives the same text, there is no law to count."
        )
    if s.top_k == 1:
        raise LawError("top_k_one", "top-k = 1 keeps one token: the run is greedy, there is no law to count.")
    if s.broken not in BROKEN_RULES:
        raise LawError("rule", f"the broken rule is one of {', '.join(BROKEN_RULES)}.")
    lo, hi = GAMMA_RANGE
    if not lo <= s.gamma <= hi:
        raise LawError("gamma", f"γ must be from {lo} to {hi}.", low=lo, high=hi)
    if not 1 <= s.samples <= MAX_SAMPLES:
        raise LawError("samples", f"M must be from 1 to {MAX_SAMPLES}.", limit=MAX_SAMPLES, n=s.samples)
    if cap is not None and s.samples > cap:
        raise LawError("cap", f"in classroom mode M is at most {cap}.", limit=cap, n=s.samples)
    s.sampling()  # validates the transforms


def sample_seed(seed: int, rule_index: int, i: int) -> int:
    """The seed of sample `i` of a rule: independent streams for every (seed, rule, sample)."""
    return int(np.random.SeedSequence([seed, rule_index, i]).generate_state(1)[0])


@dataclass
class Tally:
    """Counted (x₁, x₂) pairs of one rule."""

    pairs: Counter[tuple[int, int]] = field(default_factory=Counter)

    @property
    def n(self) -> int:
        return sum(self.pairs.values())

    def add(self, x1: int, x2: int) -> None:
        self.pairs[(int(x1), int(x2))] += 1

    def first(self) -> Counter[int]:
        out: Counter[int] = Counter()
        for (x1, _), c in self.pairs.items():
            out[x1] += c
        return out

    def second(self, x1: int) -> Counter[int]:
        return Counter({x2: c for (a, x2), c in self.pairs.items() if a == x1})


class ExactLaw:
    """p(x₁) and p(x₂ | x₁) from the target's own forwards on the held prompt, processed with
    the run's transforms (float64). ``forwards`` counts them."""

    def __init__(self, held: HeldSessions, cfg: SamplingConfig) -> None:
        self.held = held
        self.cfg = cfg
        self._first: np.ndarray | None = None
        self._second: dict[int, np.ndarray] = {}
        self._logits: dict[int | None, np.ndarray] = {}  # the raw row behind each law (None: x₁'s)
        self.forwards = 0

    def _rows(self, continuation: list[int]) -> np.ndarray:
        rows = float64_rows(self.held.scores(continuation))
        self.forwards += 1
        if self.cfg.top_k > 0 or self.cfg.top_p < 1.0:  # a cut to settle ties at: keep the row
            self._logits[continuation[0] if continuation else None] = rows[len(continuation)]
        return process_rows(rows, self.cfg)

    @property
    def first(self) -> np.ndarray:
        if self._first is None:
            self._first = self._rows([])[0]
        return self._first

    def stand_in(self, given: int | None, token: int) -> int | None:
        """For a token the law cuts (probability 0 after `given`; None: the first token's law):
        the kept token of lowest probability when `token`'s logit ties it, that is when raising
        that logit by :data:`TIE_LOGITS` would keep it; None when the cut is clear. The run's
        several-row forwards and the law's one-row forwards round differently, so such a tie can
        fall either way at a top-k or top-p boundary; the counts treat the two as one outcome."""
        law = self.first if given is None else self.second(given)
        if law[token] > 0 or given not in self._logits:
            return None
        raised = self._logits[given].copy()
        raised[token] += TIE_LOGITS
        if process_rows(raised[None, :], self.cfg)[0][token] <= 0:
            return None
        kept = np.flatnonzero(law > 0)
        return int(kept[np.argmin(law[kept])])

    def second(self, x1: int) -> np.ndarray:
        """p(· | x₁): one forward the first time a first token is asked for."""
        x1 = int(x1)
        if x1 not in self._second:
            self._second[x1] = self._rows([x1])[1]
        return self._second[x1]

    def known(self, x1: int) -> bool:
        return int(x1) in self._second

    @property
    def conditioned(self) -> list[int]:
        """The first tokens whose p(· | x₁) is known."""
        return list(self._second)

    def likely_first(self, n: int) -> list[int]:
        """First tokens whose expected count in `n` samples reaches :data:`MIN_EXPECTED`."""
        return [int(x) for x in np.flatnonzero(self.first * n >= MIN_EXPECTED)]


def draw_pair(
    held: HeldSessions,
    cfg: SamplingConfig,
    gamma: int,
    seed: int,
    rule: str = "exact",
) -> tuple[int, int]:
    """One sample: a ``generate`` run on the held sessions (γ drafts, γ + 1 new tokens, EOS not
    special), stopped once two tokens are committed; its first two tokens."""
    got: list[int] = []
    run = generate(
        held.target,
        held.source,  # type: ignore[arg-type]
        held.prompt,
        cfg,
        gamma,
        gamma + 1,
        seed,
        options=RunOptions(
            draft_cost=1.0,  # γ is fixed: no cost estimate needed
            top_n=0,
            stop_at_eos=False,
            sessions=held,
            rule=rule,
        ),
    )
    try:
        for event in run:
            got.extend(event.committed)
            if len(got) >= 2:
                break
    finally:
        run.close()  # type: ignore[attr-defined]
    return got[0], got[1]


class LawLab:
    """One lab run: the held sessions, the exact law, and a tally per rule ("exact" and the
    broken one). :meth:`draw` adds one sample of a rule; ``seconds[rule]`` sums the time of
    that rule's samples and of the law forwards they needed (the exact rule's include the
    prefill and the law of the first token, :meth:`prime`)."""

    def __init__(self, target: Any, draft: Any, prompt_ids: list[int], settings: LawSettings) -> None:
        self.settings = settings
        self.prompt = [int(t) for t in prompt_ids]
        self.held = HeldSessions(target, draft, self.prompt)
        self.cfg = settings.sampling()
        self.law = ExactLaw(self.held, self.cfg)
        self.rules: tuple[str, str] = ("exact", settings.broken)
        self.tallies = {rule: Tally() for rule in self.rules}
        self.seconds = dict.fromkeys(self.rules, 0.0)
        self.sample_seconds = dict.fromkeys(self.rules, 0.0)  # the runs alone
        self.draw_law = [0, 0.0]  # forwards made after a sample, and their seconds

    def prime(self) -> None:
        """The law of the first token, and of the second after each first token likely enough
        to get a cell of its own in M samples (timed with the exact rule)."""
        start = time.perf_counter()
        for x1 in self.law.likely_first(self.settings.samples):
            self.law.second(x1)
        self.seconds["exact"] += time.perf_counter() - start

    def draw(self, rule: str) -> tuple[int, int]:
        """One sample under `rule`, counted; the law after a first token not seen before is
        computed before the pair is counted, so a snapshot never runs the model."""
        start = time.perf_counter()
        i = self.tallies[rule].n
        seed = sample_seed(self.settings.seed, self.rules.index(rule), i)
        pair = draw_pair(self.held, self.cfg, self.settings.gamma, seed, rule)
        drawn, forwards = time.perf_counter(), self.law.forwards
        self.law.second(pair[0])
        self.tallies[rule].add(*pair)
        end = time.perf_counter()
        if self.law.forwards > forwards:
            self.draw_law[0] += self.law.forwards - forwards
            self.draw_law[1] += end - drawn
        self.sample_seconds[rule] += drawn - start
        self.seconds[rule] += end - start
        return pair

    def eta_s(self) -> float | None:
        """Seconds left: each rule's samples to go at that rule's own pace (the runs alone; a
        rule not started yet at the other's), plus the law forwards still to come: one per
        first token not met yet, expected from p(x₁) over the samples to go, at the mean cost
        of those made after a sample (the prompt's prefill is not one of them; before any, a
        sample's). None until the exact rule has :data:`ETA_AFTER` samples: the first ones
        pay for warming up."""
        n = self.settings.samples
        if self.tallies["exact"].n < ETA_AFTER:
            return None
        paces = {r: self.sample_seconds[r] / t.n for r, t in self.tallies.items() if t.n > 0}
        fallback = sum(paces.values()) / len(paces)
        left = sum((n - t.n) * paces.get(r, fallback) for r, t in self.tallies.items())
        to_go = self.total - self.done
        p1 = self.law.first
        unseen = np.ones(p1.size, dtype=bool)
        unseen[list(self.law.conditioned)] = False
        new_firsts = float(np.sum(-np.expm1(to_go * np.log1p(-np.minimum(p1[unseen], 1 - 1e-12)))))
        made, spent = self.draw_law
        per_forward = spent / made if made else fallback
        return left + new_firsts * per_forward

    def order(self) -> Iterator[str]:
        """The rule of each next sample: exact and broken in turn, M of each."""
        n = self.settings.samples
        while any(self.tallies[r].n < n for r in self.rules):
            for rule in self.rules:
                if self.tallies[rule].n < n:
                    yield rule

    @property
    def done(self) -> int:
        return sum(t.n for t in self.tallies.values())

    @property
    def total(self) -> int:
        return self.settings.samples * len(self.rules)
