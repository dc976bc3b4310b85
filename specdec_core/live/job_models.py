"""Models for jobs the run service runs: from the process's shelf, under the server's rules.

A job runs in the service's worker, with no page to draw on: it loads through these functions,
which refuse what the server does not offer (``ChoiceError("not_allowed")``), pin the teacher's
preloaded targets, and publish a :class:`~specdec_core.live.run_service.Loading` on the job's
context before each build. Each model they build goes into this machine's profile
(``machine_profile.record_target`` and ``record_draft``: the costs it timed at load), which the
lessons read. :class:`PreloadJob` loads the teacher's targets (classroom mode) the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specdec_core.live import machine_profile
from specdec_core.live.access import Access, check_draft, check_target
from specdec_core.live.model_choices import (
    DraftSpec,
    TargetSpec,
    draft_key,
    load_draft,
    load_target,
    target_key,
)
from specdec_core.live.run_service import Context, Loading
from specdec_core.live.shelf import ModelShelf


def target(shelf: ModelShelf, rules: Access | None, spec: TargetSpec, ctx: Context | None = None) -> Any:
    """The target of `spec`, built once per process (None `rules`: every model allowed)."""
    if rules is not None:
        check_target(rules, spec)
    model = shelf.get(target_key(spec))
    if model is None:
        if ctx is not None:
            ctx.publish(Loading(spec.source or spec.kind))
        model = load_target(spec)
        machine_profile.record_target(spec.kind, model)
        shelf.put(target_key(spec), model, pin=rules is not None and spec in rules.preload)
    return model


def draft(
    shelf: ModelShelf,
    rules: Access | None,
    target_spec: TargetSpec,
    target_model: Any,
    spec: DraftSpec,
    ctx: Context | None = None,
) -> Any:
    """The draft of `spec` for `target_model`, built once per process; it leaves the shelf with
    its target."""
    if rules is not None:
        check_draft(rules, spec)
    key = draft_key(target_spec, spec)
    model = shelf.get(key)
    if model is None:
        if ctx is not None:
            ctx.publish(Loading(spec.source or spec.kind))
        model = load_draft(target_model, spec)
        if spec.vocab <= 0:  # a head cut to fewer tokens is another draft, not priced here
            machine_profile.record_draft(target_spec.kind, target_model, spec.kind, model, spec.k)
        shelf.put(key, model, parent=target_key(target_spec))
    return model


@dataclass(frozen=True)
class Preloaded:
    """How the teacher's preload goes: `done` of `n` targets tried, and those that could not
    load, with why (``(source or kind, reason)``: the teacher's own list, so it may name a folder)."""

    done: int
    n: int
    failed: tuple[tuple[str, str], ...] = ()


class PreloadJob:
    """Loads the teacher's targets onto the shelf, pinned: a job of the run service, submitted
    once per process; it publishes a :class:`Preloaded` after each target, and ends with one."""

    def __init__(self, rules: Access, shelf: ModelShelf) -> None:
        self.rules, self.shelf = rules, shelf
        self.key = ("preload", rules.preload)

    def run(self, ctx: Context) -> Preloaded:
        specs, failed = self.rules.preload, []
        for done, spec in enumerate(specs):
            ctx.publish(Preloaded(done, len(specs), tuple(failed)))
            try:
                target(self.shelf, self.rules, spec)
            except (ValueError, OSError) as exc:  # a missing or broken model the teacher listed
                failed.append((spec.source or spec.kind, str(exc)))
        return Preloaded(len(specs), len(specs), tuple(failed))
