"""The draft race: several drafts on one prompt and one setting, against one target-only run.

:class:`Race` runs the baseline, then each draft, yielding every event as it comes (a UI
shows progress and can stop). :func:`race_rows` turns the runs into the table's numbers,
all measured:

* α — accepted drafts / drafts examined; mean tokens per round;
* draft cost ratio c — draft time per drafted token ÷ time per target-only token;
* verification cost v — a round's verify + bookkeeping time ÷ time per target-only token;
* speedups in tokens per second over the baseline: wall clock, and decode time (the
  engine's compute time without the prompt's prefill, which the theory describes);
* the theory's prediction for the measured α, c and v: mean over rounds of
  E[tokens | α, k_r] ÷ (mean k_r · c + v) — for a fixed γ exactly ``theory.speedup``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from specdec_core.engine import RoundEvent, RunSummary, summarize
from specdec_core.live.runs import Timed, run_of
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.trace import RunRecord
from specdec_core.models import catalog
from specdec_core.models.catalog import TREE_SUFFIX, DraftSpec
from specdec_core.theory import mean_expected_tokens

BASELINE = "baseline"


@dataclass(frozen=True, kw_only=True)
class RaceSettings(DecodeSettings):
    """The shared settings of every run of a race; ``repeats`` runs of each are timed, the fastest kept."""

    max_new_tokens: int = 48
    repeats: int = 1


class Race:
    """Iterate to run the race: yields (key, event); ``records`` holds each finished run.

    `drafts` are (key, draft model) pairs; the baseline runs first under :data:`BASELINE`.
    """

    def __init__(
        self,
        target: Any,
        drafts: Sequence[tuple[str, Any]],
        prompt_ids: Sequence[int],
        settings: RaceSettings,
    ) -> None:
        self.target = target
        self.drafts = list(drafts)
        self.prompt_ids = list(prompt_ids)
        self.settings = settings
        self.records: dict[str, RunRecord] = {}
        self.repeat = 0

    @property
    def runs(self) -> list[tuple[str, Any, DecodeSettings]]:
        """(key, draft, settings) of every run after the baseline: with a tree shape set, each
        draft races as a chain under its key and as that tree under ``<key>~tree``."""
        if not self.settings.tree:
            return [(k, d, self.settings) for k, d in self.drafts]
        chain = replace(self.settings, tree=())
        return [run for k, d in self.drafts for run in ((k, d, chain), (k + TREE_SUFFIX, d, self.settings))]

    @property
    def keys(self) -> list[str]:
        return [BASELINE, *(k for k, _, _ in self.runs)]

    def progress(self, key: str, produced: int) -> float:
        """Share of the race done when run `key`'s current repetition has `produced` tokens."""
        reps = self.settings.repeats
        step = self.keys.index(key) * reps + self.repeat + produced / self.settings.max_new_tokens
        return min(1.0, step / (len(self.keys) * reps))

    def __iter__(self) -> Iterator[tuple[str, RoundEvent]]:
        """Run everything; ``repeat`` tells which repetition of the current run is going on.

        A seeded run repeats exactly (same events), only its timings change; keeping the
        fastest repetition is the usual way to time code on a machine other work shares.
        """
        for key, draft, settings in [(BASELINE, None, self.settings), *self.runs]:
            for repeat in range(self.settings.repeats):
                self.repeat = repeat
                stream = Timed(run_of(self.target, draft, self.prompt_ids, settings, top_n=0))
                events: list[RoundEvent] = []
                try:
                    for event in stream:
                        events.append(event)
                        yield key, event
                finally:
                    stream.close()  # stopping the race releases the models at once
                record = RunRecord(events, stream.wall_s)
                if key not in self.records or _decode_s(record) < _decode_s(self.records[key]):
                    self.records[key] = record


def _decode_s(record: RunRecord) -> float:
    return summarize(record.events).decode_s


@dataclass(frozen=True)
class RaceRow:
    """The measured figures of one draft's run (see the module docstring)."""

    key: str
    tokens: int
    rounds: int
    alpha: float | None
    tokens_per_round: float
    cost_ratio: float
    verify_cost: float
    wall_s: float
    decode_s: float
    wall_speedup: float
    decode_speedup: float
    predicted_speedup: float | None
    drafted: tuple[int, ...]
    same_text: bool


def predicted_speedup(
    alpha: float | np.ndarray, drafted: Sequence[int], cost_ratio: float, verify_cost: float
) -> float | np.ndarray:
    """The i.i.d. model's speedup for rounds that drafted `drafted` tokens each."""
    if not drafted:
        raise ValueError("predicted_speedup needs at least one round.")
    if cost_ratio < 0 or verify_cost <= 0:
        raise ValueError("cost_ratio must be ≥ 0 and verify_cost > 0 (in target steps).")
    tokens = mean_expected_tokens(alpha, drafted)
    return tokens / (float(np.mean(drafted)) * cost_ratio + verify_cost)


def _step_s(s: RunSummary) -> float:
    if s.tokens == 0 or s.decode_s <= 0:
        raise ValueError("the baseline run has no measured decode time.")
    return s.decode_s / s.tokens


def race_row(key: str, record: RunRecord, baseline: RunRecord) -> RaceRow:
    """One row of the race table, measured against the target-only `baseline`."""
    b = summarize(baseline.events)
    step = _step_s(b)
    s = summarize(record.events)
    drafted = tuple(len(e.draft_tokens) for e in record.events)
    alpha = s.alpha
    cost = (s.draft_s / s.drafted) / step if s.drafted else 0.0
    verify = (s.verify_s + s.overhead_s) / s.rounds / step
    decode = s.decode_s
    base_rate_wall = b.tokens / baseline.wall_s if baseline.wall_s > 0 else float("nan")
    return RaceRow(
        key=key,
        tokens=s.tokens,
        rounds=s.rounds,
        alpha=alpha,
        tokens_per_round=s.tokens_per_round,
        cost_ratio=cost,
        verify_cost=verify,
        wall_s=record.wall_s,
        decode_s=decode,
        wall_speedup=(s.tokens / record.wall_s) / base_rate_wall if record.wall_s > 0 else float("nan"),
        decode_speedup=(s.tokens / decode) * step if decode > 0 else float("nan"),
        predicted_speedup=None if alpha is None else float(predicted_speedup(alpha, drafted, cost, verify)),
        drafted=drafted,
        same_text=record.tokens == baseline.tokens,
    )


def race_rows(records: dict[str, RunRecord]) -> list[RaceRow]:
    """Rows for every draft run in `records` (which must hold the :data:`BASELINE` run)."""
    baseline = records[BASELINE]
    return [race_row(k, r, baseline) for k, r in records.items() if k != BASELINE and r.events]


def best(rows: Sequence[RaceRow]) -> RaceRow | None:
    """The draft with the highest decode speedup."""
    return max(rows, key=lambda r: r.decode_speedup, default=None)


@dataclass(frozen=True)
class RaceResult:
    """A finished (or stopped) race: what ran, on which prompt, and every run's events."""

    task: str
    prompt: str
    target_name: str
    target_kind: str
    names: dict[str, str]
    settings: RaceSettings
    records: dict[str, RunRecord]
    stopped: bool = False

    @cached_property
    def rows(self) -> list[RaceRow]:
        """The table's rows, computed once (a page reads them several times per rerun)."""
        return race_rows(self.records) if BASELINE in self.records else []


def result_json(result: RaceResult) -> str:
    """The race as JSON: settings, prompt, names, each draft's measured row and run totals."""
    runs = {}
    for key, record in result.records.items():
        s = summarize(record.events)
        runs[key] = {
            "name": result.names.get(key, key),
            "wall_s": record.wall_s,
            "tokens": record.tokens,
            "summary": asdict(s),
        }
    rows = [{**asdict(r), "name": result.names.get(r.key, r.key)} for r in result.rows]
    data = {
        "format": "specdec-studio/draft-race",
        "version": 1,
        "task": result.task,
        "prompt": result.prompt,
        "target": result.target_name,
        "target_kind": result.target_kind,
        "settings": asdict(result.settings),
        "stopped": result.stopped,
        "rows": rows,
        "runs": runs,
    }
    return json.dumps(_finite(data), ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    """JSON-ready copy: NaN / infinity become null (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


# -- the race's drafts and tasks ------------------------------------------------------------------
def parse_depths(raw: str) -> list[int]:
    """Layer-skip depths from text such as ``"10, 20, 27"`` (ASCII or full-width commas, any
    order, repeats once), ascending; ValueError when there is none or one is below 1."""
    try:
        values = sorted({int(v) for v in raw.replace("，", ",").split(",") if v.strip()})
    except ValueError:
        raise ValueError(f"layer-skip depths are whole numbers separated by commas, got {raw!r}.") from None
    if not values or values[0] < 1:
        raise ValueError(f"layer-skip depths are whole numbers of 1 or more, got {raw!r}.")
    return values


def race_entries(kinds: Sequence[str], depths: str, source: str) -> list[tuple[str, DraftSpec]]:
    """(key, spec) of each draft a race runs, in order, keyed in the catalog's grammar
    (``catalog.draft_key``): a depth draft once for each of the `depths` (:func:`parse_depths`),
    a sourced one with its (trimmed) `source`, any other kind as is."""
    out: list[tuple[str, DraftSpec]] = []
    for kind in kinds:
        entry = catalog.draft(kind)
        one = DraftSpec(kind, source=source.strip() if entry.source else "")
        specs = [DraftSpec(kind, k) for k in parse_depths(depths)] if entry.depth else [one]
        out += [(catalog.draft_key(s), s) for s in specs]
    return out


def key_depth(key: str) -> int | None:
    """The depth a race key names (``catalog.draft_key`` of a depth draft); None for any other."""
    return catalog.parse_draft_key(key)[0].k or None


def race_choices(options: Sequence[str], target_kind: str) -> tuple[str, ...]:
    """The drafts a race offers among `options`: none that loads from a typed source on a
    target that knows only its own words (its runs are instant; a loaded model is not)."""
    words = bool(catalog.about(target_kind).words)
    return tuple(k for k in options if not (words and catalog.draft(k).source))


def race_task(prompt: str, preset: str, preset_prompt: str) -> str:
    """The task a race's result is filed under: the chosen preset while its prompt is unchanged,
    else ``"custom"``."""
    return preset if prompt == preset_prompt else "custom"
