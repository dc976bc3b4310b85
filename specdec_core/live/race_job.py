"""The draft race as a job of the run service: the page builds a :class:`RaceRequest` from its
controls and hands a :class:`RaceJob` to the service; the job loads the models, encodes the
prompt, runs the baseline and every draft, and publishes a :class:`RaceProgress` and the
:class:`~specdec_core.live.race.RaceResult` so far as it goes. A cancel ends it within a round,
and the runs that finished stay in the result (marked stopped)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specdec_core.live import job_models
from specdec_core.live.access import Access
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.race import Race, RaceResult, RaceSettings
from specdec_core.live.run_service import Context
from specdec_core.live.runs import Pacer, encode_prompt
from specdec_core.live.shelf import ModelShelf

#: Publish at most this often, so reporting weighs nothing on the timed runs (the baseline has
#: one event per token, a draft's run one per round).
PUBLISH_EVERY = 0.2


@dataclass(frozen=True)
class RaceRequest:
    """A race as the page's controls describe it; `names` are the runs' names in the page's
    language, by race key (the baseline's, each draft's, and their tree variants')."""

    target: TargetSpec
    entries: tuple[tuple[str, DraftSpec], ...]
    prompt: str
    chat: bool
    settings: RaceSettings
    task: str
    names: Mapping[str, str]


@dataclass(frozen=True)
class RaceProgress:
    """Where a race is: the run going (`key`, its `name`, tokens `produced`, the race's share
    done)."""

    key: str | None = None
    name: str = ""
    produced: int = 0
    share: float = 0.0


class RaceJob:
    """One race for the run service (never shared: each learner times their own)."""

    key = None

    def __init__(self, request: RaceRequest, shelf: ModelShelf, rules: Access) -> None:
        self.request, self.shelf, self.rules = request, shelf, rules

    def run(self, ctx: Context) -> RaceResult | None:
        req = self.request
        target = job_models.target(self.shelf, self.rules, req.target, ctx)
        drafts = [
            (key, job_models.draft(self.shelf, self.rules, req.target, target, spec, ctx))
            for key, spec in req.entries
        ]
        ids = encode_prompt(target, req.prompt, req.chat, req.settings.max_new_tokens)
        race = Race(target, drafts, ids, req.settings)
        pacer, events, kept = Pacer(PUBLISH_EVERY), iter(race), 0
        try:
            for key, event in events:
                if ctx.cancelled:
                    break
                if pacer.due(event.finished) or len(race.records) != kept:
                    kept = len(race.records)
                    produced = event.position + len(event.committed)
                    ctx.publish(
                        RaceProgress(key, req.names.get(key, key), produced, race.progress(key, produced)),
                        self._result(race, target, True),
                    )
        finally:
            events.close()  # the run going is closed, its models released
        return self._result(race, target, stopped=ctx.cancelled)

    def _result(self, race: Race, target: Any, stopped: bool) -> RaceResult | None:
        """The runs finished so far (None before the first)."""
        req = self.request
        if not race.records:
            return None
        return RaceResult(
            req.task, req.prompt, str(target.name), req.target.kind,
            {k: req.names.get(k, k) for k in race.keys}, req.settings,
            dict(race.records), stopped=stopped,
        )  # fmt: skip
