"""Models for jobs the run service runs: from the process's shelf, under the server's rules.

A job runs in the service's worker, with no page to draw a progress bar: it loads through these
functions, which refuse what the server does not offer (``ChoiceError("not_allowed")``), pin the
teacher's preloaded targets, and report each load through `progress(fraction, message)`. Each
model they build goes into this machine's profile (``machine_profile.record_target`` and
``record_draft``: the costs it timed at load), which the lessons read.
"""

from __future__ import annotations

from typing import Any

from specdec_core.live import machine_profile
from specdec_core.live.access import Access, check_draft, check_target
from specdec_core.live.model_choices import (
    DraftSpec,
    Progress,
    TargetSpec,
    draft_key,
    load_draft,
    load_target,
    target_key,
)
from specdec_core.live.shelf import ModelShelf


def target(
    shelf: ModelShelf, rules: Access | None, spec: TargetSpec, progress: Progress | None = None
) -> Any:
    """The target of `spec`, built once per process (None `rules`: every model allowed)."""
    if rules is not None:
        check_target(rules, spec)
    pin = rules is not None and spec in rules.preload

    def build() -> Any:
        model = load_target(spec, progress)
        machine_profile.record_target(spec.kind, model)
        return model

    return shelf.get(target_key(spec), build, pin=pin)


def draft(
    shelf: ModelShelf,
    rules: Access | None,
    target_spec: TargetSpec,
    target_model: Any,
    spec: DraftSpec,
    progress: Progress | None = None,
) -> Any:
    """The draft of `spec` for `target_model`, built once per process; it leaves the shelf with
    its target."""
    if rules is not None:
        check_draft(rules, spec)

    def build() -> Any:
        model = load_draft(target_model, spec, progress)
        if spec.vocab <= 0:  # a head cut to fewer tokens is another draft, not priced here
            machine_profile.record_draft(target_spec.kind, target_model, spec.kind, model, spec.k)
        return model

    return shelf.get(draft_key(target_spec, spec), build, parent=target_key(target_spec))
