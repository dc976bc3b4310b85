"""Running a comparison grid: each prompt target-only, then with each draft, run by run.

:class:`GridRun` is iterated by whoever shows progress (a page, the bench); each step is one
finished generation, and :attr:`GridRun.measured` keeps every finished run, so a grid that is
stopped keeps its finished cells. Runs are looked up in, and stored into, a shared cache
(:class:`~specdec_core.live.classroom.Classroom`'s), keyed by everything that decides the run:
the engine is deterministic, so a class pressing Run on the same grid runs it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from specdec_core.engine import estimate_cost_ratio, measured_cost_ratio
from specdec_core.live import job_models
from specdec_core.live.access import Access
from specdec_core.live.classroom import request_key
from specdec_core.live.compare import BASELINE, GridSpec, Measured
from specdec_core.live.compare_saved import GridResult, measured_from_json, measured_json
from specdec_core.live.model_choices import ChoiceError, TargetSpec, draft_key, target_key
from specdec_core.live.run_service import Context
from specdec_core.live.runs import Timed, encode_text, run_of
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.shelf import ModelShelf
from specdec_core.live.spec_bench import spec_bench_count
from specdec_core.models import catalog
from specdec_core.models.catalog import parse_draft_key, target_spec


class RunCache(Protocol):
    """Where finished runs are shared, and their pace kept for the next grid's estimate (a
    :class:`~specdec_core.live.classroom.Classroom`)."""

    def lookup_shared(self, key: Any, decode: Callable[[str], Any]) -> Any: ...

    def store_shared(self, key: Any, trace: Any, encode: Callable[[Any], str]) -> None: ...

    def note_pace(self, label: Any, seconds: float, tokens: int) -> None: ...

    def pace(self, label: Any) -> float | None: ...


class ModelSource(Protocol):
    """Where a grid gets its models: a target by key, a draft by key for a built target."""

    def target(self, key: str) -> Any: ...

    def draft(self, target_key_: str, key: str, target: Any) -> Any: ...


@dataclass(eq=False)
class GridModels:
    """Builds a grid's targets and drafts once, on a shared :class:`ModelShelf`; with `rules`,
    only the models the server offers (``ChoiceError("not_allowed")`` otherwise), its
    preloaded targets pinned; each load is published on the job's `ctx` (none outside a job)."""

    shelf: ModelShelf
    custom_source: str = ""
    rules: Access | None = None
    ctx: Context | None = None

    def target(self, key: str) -> Any:
        return job_models.target(self.shelf, self.rules, target_spec(key, self.custom_source), self.ctx)

    def draft(self, target_key_: str, key: str, target: Any) -> Any:
        t = target_spec(target_key_, self.custom_source)
        return job_models.draft(self.shelf, self.rules, t, target, parse_draft_key(key)[0], self.ctx)


def answer(target: Any, output: Sequence[int]) -> dict[str, Any]:
    """A run's output as text (special tokens left out, as Spec-Bench writes answers) and its
    tokens counted as Spec-Bench's ``speed.py`` counts a baseline's; -1 without a tokenizer."""
    text = target.decode(output, skip_special_tokens=True).strip()
    tokenizer = getattr(target, "tokenizer", None)
    return {"answer": text, "answer_tokens": spec_bench_count(tokenizer, [text]) if tokenizer else -1}


def costs(target: Any, draft: Any) -> dict[str, float | None]:
    """A draft's cost in target steps, estimated from its weights and timed on this machine."""
    if draft is None:
        return {"c_estimate": None, "c_measured": None}
    return {
        "c_estimate": estimate_cost_ratio(target, draft),
        "c_measured": measured_cost_ratio(target, draft),
    }


@dataclass(frozen=True)
class Step:
    """Progress after one run: runs done of all, and which run it was."""

    done: int
    total: int
    target: str
    draft: str
    category: str
    prompt: int
    replayed: bool


class GridRun:
    """Iterate to run `spec`; :attr:`measured` holds every finished run, :attr:`skipped` the
    (target, draft) pairs that do not fit, with why."""

    def __init__(
        self,
        spec: GridSpec,
        models: ModelSource,
        cache: RunCache | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        spec.check()
        self.cancelled = cancelled  # asked between rounds: a Stop ends the run within one
        self.spec = spec
        self.models = models
        self.cache = cache
        self.measured: list[Measured] = []
        self.skipped: dict[tuple[str, str], str] = {}

    def _settings(self, draft: str) -> DecodeSettings:
        as_tree = draft != BASELINE and parse_draft_key(draft)[1]
        return replace(self.spec.settings, tree=(2, 2) if as_tree else ())  # a tree draft: b_1 = b_2 = 2

    def __iter__(self) -> Iterator[Step]:
        done, total = 0, self.spec.runs
        for t in self.spec.targets:
            target = self.models.target(t)
            for c in self.spec.categories:
                for i in range(self.spec.per_category):
                    text = self.spec.prompts_of(c)[i]
                    ids = encode_text(target, text, catalog.chat_for(t, True))
                    for d in (BASELINE, *self.spec.drafts):
                        done += 1
                        if self.cancelled():
                            return
                        if (t, d) in self.skipped:
                            continue
                        run, replayed = self._run(t, target, d, c, i, text, ids)
                        if run is not None:
                            self.measured.append(run)
                            yield Step(done, total, t, d, c, i, replayed)

    def _run(
        self, t: str, target: Any, d: str, c: str, i: int, text: str, ids: list[int]
    ) -> tuple[Measured | None, bool]:
        settings = self._settings(d)
        which = target_spec(t, self.spec.custom_source)  # a custom target is keyed by its source
        key = request_key(("compare", which, d, settings), text)
        hit = self.cache.lookup_shared(key, measured_from_json) if self.cache is not None else None
        if hit is not None:
            return replace(hit.trace, category=c, prompt=i), True
        draft = None
        if d != BASELINE:
            try:
                draft = self.models.draft(t, d, target)
            except (ChoiceError, ValueError) as exc:  # a head that does not fit, a bad depth, …
                self.skipped[(t, d)] = str(exc)
                return None, False
        stream = Timed(run_of(target, draft, ids, settings, top_n=0))
        events = []
        for event in stream:
            if self.cancelled():  # a generation cut short is not measured
                stream.close()
                return None, False
            events.append(event)
        run = Measured.from_events(t, d, c, i, events, stream.wall_s, **costs(target, draft))
        run = replace(run, **answer(target, run.output))
        if self.cache is not None and events and events[-1].finished:
            self.cache.store_shared(key, run, measured_json)
            self.cache.note_pace(pace_label(which), run.wall_s, run.tokens)
        return run, False


def pace_label(target: TargetSpec) -> tuple[str, TargetSpec]:
    """Under what a grid's runs on `target` note their pace in the shared cache."""
    return ("compare-pace", target)


def paces(
    spec: GridSpec, cache: RunCache, shelf: ModelShelf, first_guess: float
) -> dict[str, tuple[float, str]]:
    """(seconds per token, where it came from) each target's runs should take: the median of
    this server's last grid runs on it ("grids"), else its decode step timed at load when it is
    on `shelf` ("step"), else `first_guess` ("guess")."""
    out: dict[str, tuple[float, str]] = {}
    for t in spec.targets:
        which = target_spec(t, spec.custom_source)
        seen = cache.pace(pace_label(which))
        step = getattr(shelf.peek(target_key(which)), "step_seconds", None)
        if seen is not None:
            out[t] = (seen, "grids")
        elif isinstance(step, int | float) and step > 0:
            out[t] = (float(step), "step")
        else:
            out[t] = (first_guess, "guess")
    return out


def loaded_tokenizers(spec: GridSpec, shelf: ModelShelf) -> dict[str, Any]:
    """The tokenizers of the grid's targets that are on `shelf` now, by target key."""
    out = {}
    for t in spec.targets:
        model = shelf.peek(target_key(target_spec(t, spec.custom_source)))
        if getattr(model, "tokenizer", None) is not None:
            out[t] = model.tokenizer
    return out


def missing_models(spec: GridSpec, shelf: ModelShelf) -> list[str]:
    """The grid's targets and drafts (by key) that are not on `shelf` yet and must load first."""
    out: list[str] = []
    warmed = {d.key for d in catalog.drafts() if d.warm}
    for t in spec.targets:
        which = target_spec(t, spec.custom_source)
        if not shelf.cached(target_key(which)):
            out.append(t)
        for d in spec.drafts:
            ds = parse_draft_key(d)[0]
            if ds.kind in warmed and not shelf.cached(draft_key(which, ds)):  # the others build at once
                out.append(d)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class GridProgress:
    """What a grid run shows while it goes: the last finished :class:`Step` (None before the
    first)."""

    step: Step | None = None


class GridJob:
    """A grid as a :class:`~specdec_core.live.run_service.Job`: its models from `shelf` under the
    server's `rules`, its runs shared through `cache`; it publishes a :class:`GridProgress` and
    the :class:`GridResult` so far after every generation, and stops within a round when
    cancelled (the finished runs kept)."""

    def __init__(self, spec: GridSpec, shelf: ModelShelf, rules: Access, cache: RunCache) -> None:
        self.spec = spec
        self.key = ("grid", spec)  # identical grids pressed by two sessions run once
        self.shelf, self.rules, self.cache = shelf, rules, cache

    def run(self, ctx: Context) -> GridResult:
        models = GridModels(self.shelf, self.spec.custom_source, self.rules, ctx)
        grid = GridRun(self.spec, models, self.cache, cancelled=lambda: ctx.cancelled)
        for step in grid:
            ctx.publish(GridProgress(step), self._result(grid, complete=False))
        return self._result(grid, complete=not ctx.cancelled)

    def _result(self, grid: GridRun, complete: bool) -> GridResult:
        return GridResult(self.spec, tuple(grid.measured), complete, dict(grid.skipped))
