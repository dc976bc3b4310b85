"""The comparison workbench's figures: drafts × targets × task categories, each cell measured.

A grid (:class:`GridSpec`) names targets, drafts, task categories and how many prompts of each
category run. Every prompt runs once target-only and once per draft (:class:`Measured`, from the
run's trace); a cell (:class:`Cell`) pools one draft's runs on one target over one category's
prompts:

* τ — committed tokens ÷ target passes over all the cell's prompts, the mean tokens a target
  pass yields (Spec-Bench's "mean accepted tokens"; it does not depend on the hardware);
* the measured acceptance rate α̂ — drafts accepted ÷ drafts examined;
* wall-clock and decode-time speedups over the same prompt's target-only run on this machine;
* :meth:`Cell.projected` — what the same counts give where verification is memory-bound.

Prompts come from assets/compare/prompts.toml, five or more per category.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from statistics import fmean
from typing import Any

from specdec_core.engine import RoundEvent, summarize
from specdec_core.live.settings import DecodeSettings
from specdec_core.models import catalog

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "compare"
PROMPTS_FILE = ASSETS / "prompts.toml"
PUBLISHED_FILE = ASSETS / "published.toml"
GPU_RESULTS_FILE = Path(__file__).resolve().parents[2] / "bench" / "gpu_results.json"
#: Spec-Bench's six task categories, then copying and code.
CATEGORIES: tuple[str, ...] = (
    "conversation",
    "translation",
    "summarisation",
    "qa",
    "math",
    "rag",
    "copy",
    "code",
)
BASELINE = "target-only"


def target_keys() -> tuple[str, ...]:
    """The targets a grid may hold: every catalog target that encodes any text (a sourced one
    names its source in :attr:`GridSpec.custom_source`)."""
    return tuple(t.key for t in catalog.targets() if t.free_text)


def draft_keys() -> tuple[str, ...]:
    """The drafts a grid offers: each catalog draft's grid keys (``catalog.draft_key``)."""
    return tuple(k for d in catalog.drafts() for k in d.grid)


def default_targets() -> tuple[str, ...]:
    """The default grid's targets (one prompt per category, what a teacher most needs)."""
    return (catalog.default_target("compare"),)


def default_drafts() -> tuple[str, ...]:
    """The default grid's drafts."""
    return catalog.default_drafts("compare")


#: Two figures closer than this share of the larger are a tie.
TIE_SHARE = 0.10
MAX_PER_CATEGORY = 5


class GridError(ValueError):
    """A grid that cannot run: ``code`` names the case for a translated message."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@cache
def _prompts() -> dict[str, tuple[str, ...]]:
    with PROMPTS_FILE.open("rb") as f:
        data = tomllib.load(f)
    return {k: tuple(data[k]) for k in CATEGORIES}


def prompts(category: str) -> tuple[str, ...]:
    """The prompts of `category` (at least five)."""
    if category not in CATEGORIES:
        raise GridError(
            f"unknown category {category!r}; choose from {', '.join(CATEGORIES)}.", "category_error"
        )
    return _prompts()[category]


@dataclass(frozen=True)
class GridSpec:
    """What a grid runs: target and draft keys, categories, prompts per category, shared settings."""

    targets: tuple[str, ...]
    drafts: tuple[str, ...]
    categories: tuple[str, ...]
    per_category: int = 1
    settings: DecodeSettings = field(default_factory=lambda: DecodeSettings(max_new_tokens=32))
    custom_source: str = ""
    #: (category, prompts) pairs used in place of a category's shipped prompts (or as a new one)
    own_prompts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: (category, ((question id, its file's category), …)) for prompts taken from a Spec-Bench
    #: question file, one pair per prompt of :attr:`own_prompts`, in the same order
    questions: tuple[tuple[str, tuple[tuple[int | str, str], ...]], ...] = ()

    def prompts_of(self, category: str) -> tuple[str, ...]:
        """The prompts this grid runs for `category`: its own where it brought some, else the shipped."""
        own = dict(self.own_prompts)
        return own[category] if category in own else prompts(category)

    def question_of(self, category: str, index: int) -> tuple[int | str, str] | None:
        """(question id, the question file's category) of a prompt taken from a Spec-Bench
        question file; None for a shipped or hand-written prompt."""
        ids = dict(self.questions).get(category, ())
        return ids[index] if index < len(ids) else None

    def check(self) -> None:
        """GridError for an empty selection, an unknown category or a prompt count out of range."""
        for name, chosen in (("target", self.targets), ("draft", self.drafts), ("category", self.categories)):
            if not chosen:
                raise GridError(f"choose at least one {name}.", f"no_{name}")
        own = dict(self.own_prompts)
        for c in self.categories:
            if not 1 <= self.per_category <= len(self.prompts_of(c)):
                code = "too_few_questions" if c in own else "per_category_error"
                raise GridError(f"category {c!r} has only {len(self.prompts_of(c))} prompts.", code)
            if c not in own and self.per_category > MAX_PER_CATEGORY:
                raise GridError(
                    f"prompts per category must be 1 to {MAX_PER_CATEGORY}.", "per_category_error"
                )
        sourced = {t.key for t in catalog.targets() if t.needs_source}
        if sourced & set(self.targets) and not self.custom_source.strip():
            raise GridError("name the custom target's Hugging Face id or folder.", "no_source")

    def check_size(self, limit: int | None) -> None:
        """GridError("too_big") when the grid makes more than `limit` generations (None: no bound)."""
        if limit is not None and self.runs > limit:
            raise GridError(
                f"this grid makes {self.runs} generations; at most {limit} are allowed.", "too_big"
            )

    @property
    def units(self) -> list[tuple[str, str, int]]:
        """(target, category, prompt index) of every prompt run, in running order."""
        return [(t, c, i) for t in self.targets for c in self.categories for i in range(self.per_category)]

    @property
    def runs(self) -> int:
        """Generations the grid makes: per unit, the target-only run and one per draft."""
        return len(self.units) * (1 + len(self.drafts))

    def estimate_s(self, paces: Mapping[str, float]) -> float:
        """Seconds the grid should take when every run on target `t` makes its tokens at
        ``paces[t]`` seconds each (prefill and drafting included)."""
        per_target = len(self.categories) * self.per_category * (1 + len(self.drafts))
        return sum(per_target * self.settings.max_new_tokens * paces[t] for t in self.targets)


@dataclass(frozen=True)
class Measured:
    """One run on one prompt: its counts from the trace, its times and its output."""

    target: str
    draft: str
    category: str
    prompt: int
    tokens: int
    target_passes: int
    draft_forwards: int
    accepted: int
    examined: int
    decode_s: float
    wall_s: float
    output: tuple[int, ...]
    #: tokens committed by each target pass, in order (Spec-Bench's ``accept_lengths``)
    accept_lengths: tuple[int, ...] = ()
    #: the output as text (special tokens left out), and its tokens counted as Spec-Bench's
    #: ``evaluation/speed.py`` counts a baseline's (see :func:`spec_bench_count`); -1: not counted
    answer: str = ""
    answer_tokens: int = -1
    #: the draft's cost in target steps: estimated from its weights, and timed on this machine
    c_estimate: float | None = None
    c_measured: float | None = None

    @classmethod
    def from_events(
        cls,
        target: str,
        draft: str,
        category: str,
        prompt: int,
        events: Sequence[RoundEvent],
        wall_s: float,
        **extra: Any,
    ) -> Measured:
        """A run's counts and times from its events; `extra` sets the text and cost fields."""
        s = summarize(list(events))
        return cls(
            target=target,
            draft=draft,
            category=category,
            prompt=prompt,
            tokens=s.tokens,
            target_passes=s.target_forwards,
            draft_forwards=s.draft_forwards,
            accepted=s.accepted,
            examined=s.accepted + s.rejections,
            decode_s=s.decode_s,
            wall_s=wall_s,
            output=tuple(t for e in events for t in e.committed),
            accept_lengths=tuple(len(e.committed) for e in events),  # a round is one target pass
            **extra,
        )

    @property
    def tau(self) -> float:
        """Committed tokens per target pass (0 for a run with no pass)."""
        return self.tokens / self.target_passes if self.target_passes else 0.0


def projected_speedup(tokens: int, target_passes: int, draft_forwards: int, c: float) -> float:
    """Speedup where verification is memory-bound: each target pass costs one step whatever its
    rows, each draft forward c steps, against one token per step without a draft."""
    if c < 0:
        raise ValueError("the draft's cost c must be ≥ 0 (in target steps).")
    steps = target_passes + c * draft_forwards
    return tokens / steps if steps > 0 else 0.0


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 and num > 0 else None


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of `values`; None when there are none or one is undefined."""
    known = [v for v in values if v is not None]
    return fmean(known) if known and len(known) == len(values) else None


@dataclass(frozen=True)
class Cell:
    """One draft on one target over one category's prompts, against those prompts' target-only runs."""

    target: str
    draft: str
    category: str
    runs: tuple[Measured, ...]
    baselines: tuple[Measured, ...]
    greedy: bool

    @property
    def key(self) -> str:
        return f"{self.target}/{self.draft}/{self.category}"

    @property
    def taus(self) -> list[float]:
        """Each prompt's own τ (the spread shown under the cell's figure)."""
        return [r.tau for r in self.runs]

    @property
    def tau(self) -> float:
        """τ pooled over the prompts: all committed tokens ÷ all target passes, so every pass
        counts once (Spec-Bench's mean accepted length), not the mean of :attr:`taus`; 0 for
        a cell with no pass."""
        passes = sum(r.target_passes for r in self.runs)
        return sum(r.tokens for r in self.runs) / passes if passes else 0.0

    @property
    def acceptance(self) -> float | None:
        """The measured acceptance rate α̂, pooled over the prompts; None when nothing was examined."""
        examined = sum(r.examined for r in self.runs)
        return sum(r.accepted for r in self.runs) / examined if examined else None

    def _speedups(self, attr: str) -> list[float]:
        out = []
        for run, base in zip(self.runs, self.baselines, strict=True):
            rate = _ratio(run.tokens, getattr(run, attr))
            base_rate = _ratio(base.tokens, getattr(base, attr))
            if rate is not None and base_rate is not None:
                out.append(rate / base_rate)
        return out

    def _pooled_speedup(self, attr: str) -> float | None:
        """Tokens per second pooled over the prompts (all tokens ÷ all seconds of `attr`) with
        the draft, over the same for the target alone: under greedy decoding both make the
        same tokens, so it is the ratio of the pooled times."""
        rate = _ratio(sum(r.tokens for r in self.runs), sum(getattr(r, attr) for r in self.runs))
        base = _ratio(sum(b.tokens for b in self.baselines), sum(getattr(b, attr) for b in self.baselines))
        return rate / base if rate is not None and base is not None else None

    @property
    def decode_speedups(self) -> list[float]:
        """Each prompt's own decode-time speedup (the spread shown on hover)."""
        return self._speedups("decode_s")

    @property
    def decode_speedup(self) -> float | None:
        """Decode-time speedup (prefill left out), pooled: :meth:`_pooled_speedup`."""
        return self._pooled_speedup("decode_s")

    @property
    def wall_speedup(self) -> float | None:
        """Wall-clock speedup (prefill included), pooled: :meth:`_pooled_speedup`."""
        return self._pooled_speedup("wall_s")

    @property
    def tokens_per_s(self) -> float | None:
        """Spec-Bench's tokens per second with the draft: the mean over prompts of each run's
        new tokens ÷ its wall time; None when a run took no time."""
        return _mean([_ratio(r.tokens, r.wall_s) for r in self.runs])

    @property
    def baseline_tokens_per_s(self) -> float | None:
        """Spec-Bench's tokens per second of the target alone: the mean over prompts of each
        run's tokens as ``speed.py`` counts a baseline's (its text re-tokenised) ÷ its wall
        time; None for runs saved without that count."""
        return _mean(
            [_ratio(b.answer_tokens, b.wall_s) if b.answer_tokens >= 0 else None for b in self.baselines]
        )

    @property
    def spec_bench_speedup(self) -> float | None:
        """Spec-Bench's speedup: :attr:`tokens_per_s` ÷ :attr:`baseline_tokens_per_s` (a ratio
        of means of throughputs, which weighs a short prompt like a long one)."""
        rate, base = self.tokens_per_s, self.baseline_tokens_per_s
        return _ratio(rate, base) if rate is not None and base is not None else None

    @property
    def accept_lengths(self) -> list[int]:
        """Tokens committed by every target pass of every prompt; their mean is :attr:`tau`."""
        return [n for r in self.runs for n in r.accept_lengths]

    @property
    def c_estimate(self) -> float | None:
        """The draft's cost in target steps from its weights (``estimate_cost_ratio``)."""
        return self.runs[0].c_estimate

    @property
    def c_measured(self) -> float | None:
        """The draft's cost in target steps as timed on the machine that ran it."""
        return self.runs[0].c_measured

    @property
    def greedy_identical(self) -> bool | None:
        """Under greedy decoding, whether every output equals its target's own; None when sampling."""
        if not self.greedy:
            return None
        return all(r.output == b.output for r, b in zip(self.runs, self.baselines, strict=True))

    def projected(self, c: float | None = None) -> float | None:
        """:func:`projected_speedup` from this cell's pooled counts at draft cost `c`, by
        default the draft's own :attr:`c_estimate` (None when the runs did not record it)."""
        c = self.c_estimate if c is None else c
        if c is None:
            return None
        return projected_speedup(
            sum(r.tokens for r in self.runs),
            sum(r.target_passes for r in self.runs),
            sum(r.draft_forwards for r in self.runs),
            c,
        )


def cells(spec: GridSpec, measured: Iterable[Measured]) -> list[Cell]:
    """The grid's cells that have at least one prompt with both runs finished, in grid order."""
    by_key = {(m.target, m.draft, m.category, m.prompt): m for m in measured}
    out = []
    for t in spec.targets:
        for d in spec.drafts:
            for c in spec.categories:
                pairs = [
                    (by_key[(t, d, c, i)], by_key[(t, BASELINE, c, i)])
                    for i in range(spec.per_category)
                    if (t, d, c, i) in by_key and (t, BASELINE, c, i) in by_key
                ]
                if pairs:
                    runs, bases = zip(*pairs, strict=True)
                    out.append(Cell(t, d, c, tuple(runs), tuple(bases), spec.settings.greedy))
    return out


@dataclass(frozen=True)
class Placing:
    """A draft's place on one target and category: its figure and whether it ties the best."""

    draft: str
    value: float
    tied_with_best: bool


def ranking(cells_: Iterable[Cell], target: str, category: str, by: str = "tau") -> list[Placing]:
    """The drafts on `target` and `category`, best first by `by` ("tau" or "decode_speedup");
    a draft within :data:`TIE_SHARE` of the best ties with it."""
    values = []
    for cell in cells_:
        if cell.target == target and cell.category == category:
            v = getattr(cell, by)
            if v is not None:
                values.append((cell.draft, float(v)))
    values.sort(key=lambda dv: -dv[1])
    if not values:
        return []
    top = values[0][1]
    return [Placing(d, v, v >= (1 - TIE_SHARE) * top) for d, v in values]


def winners(cells_: Iterable[Cell], target: str, category: str, by: str) -> list[str]:
    """The drafts that win on `target` and `category` by `by`: the best and those tied with it."""
    return [p.draft for p in ranking(cells_, target, category, by) if p.tied_with_best]


@cache
def published() -> tuple[dict[str, Any], ...]:
    """The papers' GPU figures (assets/compare/published.toml), each row with its source."""
    with PUBLISHED_FILE.open("rb") as f:
        return tuple(tomllib.load(f)["row"])


def gpu_rows(path: Path = GPU_RESULTS_FILE) -> list[dict[str, Any]]:
    """This project's own GPU run (bench/gpu_results.json), one row per draft; [] when none was made."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [{**row, "device": data.get("device", "")} for row in data.get("rows", [])]
