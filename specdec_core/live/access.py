"""Classroom mode: what learners on a server a class shares may load and do.

Whoever starts the server sets it with the environment variables named below (README, "A server
for a class", says what each does). Decisions here only compare strings the teacher typed at
start: a learner's text is never looked up on disk, so no answer tells whether an arbitrary
server path exists. Outside classroom mode every check allows what the app allowed before.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass

from specdec_core.live.model_choices import ChoiceError, DraftSpec, TargetSpec, drafts_for, targets
from specdec_core.models import catalog

CLASSROOM_ENV = "SPECDEC_CLASSROOM"
PRELOAD_ENV = "SPECDEC_PRELOAD"
PASSCODE_ENV = "SPECDEC_TEACHER_PASSCODE"
MAX_MODELS_ENV = "SPECDEC_MAX_MODELS"
DEFAULT_PRELOAD = "bundled,toy"
#: Models kept loaded at most (a target, its drafts: the bundled model and a bf16 copy are
#: about 0.8 GB together; n-gram and layer-skip drafts hold no weights of their own).
DEFAULT_MAX_MODELS = 6
#: Generations one comparison grid may make in classroom mode, unless the teacher sets another.
DEFAULT_MAX_GRID_RUNS = 60
MAX_GRID_RUNS_ENV = "SPECDEC_MAX_GRID_RUNS"
#: Samples per rule the lab "Exact on a real model" may draw in classroom mode (unless the teacher
#: sets another bound).
DEFAULT_MAX_LAW_SAMPLES = 300
MAX_LAW_SAMPLES_ENV = "SPECDEC_MAX_LAW_SAMPLES"
_ON = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Access:
    """The server's rules: `classroom` on or off, the `preload` targets (classroom only), the
    teacher's `passcode` ("" when none is set), `max_models` (None: no bound) and
    `max_grid_runs`, the generations a comparison grid may make, and `max_law_samples`, the
    samples per rule of the law lab (None: no bound)."""

    classroom: bool = False
    preload: tuple[TargetSpec, ...] = ()
    passcode: str = ""
    max_models: int | None = DEFAULT_MAX_MODELS
    max_grid_runs: int | None = None
    max_law_samples: int | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """The custom model sources the teacher offers (classroom mode), in their order."""
        return tuple(t.source for t in self.preload if catalog.about(t.kind).needs_source)

    @property
    def targets(self) -> tuple[str, ...]:
        """The target kinds offered: all of them, or in classroom mode the preloaded kinds."""
        if not self.classroom:
            return targets()
        return tuple(k for k in targets() if any(t.kind == k for t in self.preload))

    @property
    def free_sources(self) -> bool:
        """Whether a user may type any model id or folder (outside classroom mode only)."""
        return not self.classroom

    @property
    def unload(self) -> str:
        """How the unload button works: "open" (anyone), "passcode" (the teacher's), "hidden"."""
        if not self.classroom:
            return "open"
        return "passcode" if self.passcode else "hidden"


def parse_preload(raw: str) -> tuple[TargetSpec, ...]:
    """``bundled,toy,/srv/models/x`` → target specs, in order, duplicates dropped."""
    out: list[TargetSpec] = []
    for item in raw.split(","):
        item = item.strip()
        if not item:
            continue
        spec = catalog.parse_target(item)
        if spec not in out:
            out.append(spec)
    return tuple(out)


def _max_models(raw: str | None) -> int | None:
    """``SPECDEC_MAX_MODELS``: a whole number ≥ 1; 0 or "none" for no bound; else the default."""
    if raw is None or not raw.strip():
        return DEFAULT_MAX_MODELS
    text = raw.strip().lower()
    if text in ("0", "none", "off"):
        return None
    try:
        return max(int(text), 1)
    except ValueError:  # a typo at start must not break every page: the default bound holds
        return DEFAULT_MAX_MODELS


def _max_grid_runs(raw: str | None, default: int = DEFAULT_MAX_GRID_RUNS) -> int:
    """``SPECDEC_MAX_GRID_RUNS`` (or another classroom bound): a whole number ≥ 1; anything
    else keeps `default`."""
    try:
        return max(int((raw or "").strip()), 1)
    except ValueError:
        return default


def from_env(env: Mapping[str, str] | None = None) -> Access:
    """The rules the server was started with (`env`: default ``os.environ``)."""
    env = os.environ if env is None else env
    on = env.get(CLASSROOM_ENV, "").strip().lower() in _ON
    preload = parse_preload(env.get(PRELOAD_ENV) or DEFAULT_PRELOAD) if on else ()
    return Access(
        classroom=on,
        preload=preload,
        passcode=env.get(PASSCODE_ENV, "") if on else "",
        max_models=_max_models(env.get(MAX_MODELS_ENV)),
        max_grid_runs=_max_grid_runs(env.get(MAX_GRID_RUNS_ENV)) if on else None,
        max_law_samples=_max_grid_runs(env.get(MAX_LAW_SAMPLES_ENV), DEFAULT_MAX_LAW_SAMPLES) if on else None,
    )


def passcode_ok(access: Access, given: str) -> bool:
    """Whether `given` is the teacher's passcode (constant-time compare); always False when no
    passcode is set, so an empty guess never passes."""
    if not access.passcode:
        return False
    return hmac.compare_digest(given.encode("utf-8"), access.passcode.encode("utf-8"))


def may_unload(access: Access, given: str = "") -> bool:
    """Whether an unload asked with passcode `given` may go ahead."""
    return access.unload == "open" or (access.unload == "passcode" and passcode_ok(access, given))


def source_allowed(access: Access, source: str) -> bool:
    """Whether a custom model `source` may be loaded: any outside classroom mode, else only one
    the teacher listed (an exact string match: nothing is looked up on disk)."""
    return access.free_sources or source.strip() in access.sources


_REFUSED = "In this classroom only the teacher's models are offered: pick one of the list."


def check_target(access: Access, spec: TargetSpec) -> None:
    """Raise ``ChoiceError("not_allowed")`` for a target this server does not offer."""
    sourced = catalog.about(spec.kind).needs_source
    if spec.kind not in access.targets or (sourced and not source_allowed(access, spec.source)):
        raise ChoiceError(_REFUSED, "not_allowed")


def check_draft(access: Access, spec: DraftSpec) -> None:
    """Raise ``ChoiceError("not_allowed")`` for a typed draft the teacher did not list."""
    if catalog.draft(spec.kind).source and not source_allowed(access, spec.source):
        raise ChoiceError(_REFUSED, "not_allowed")


def drafts(access: Access, target_kind: str) -> tuple[str, ...]:
    """The draft kinds offered with a target kind (a typed draft only from the teacher's list)."""
    options = drafts_for(target_kind)
    if access.classroom and not access.sources:
        return tuple(k for k in options if not catalog.draft(k).source)
    return options
