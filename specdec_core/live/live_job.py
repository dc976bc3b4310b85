"""The live page's generation as a job of the run service: the speculative run, then its
target-only baseline, published as they go.

The page builds a :class:`LiveJob` from its controls and hands it to the service. An identical
request that already ran is answered at once from the class's cache (:meth:`LiveJob.ready`:
a replay, marked so in the trace); one waiting or running is joined (the service shares runs
of the same ``key``). Otherwise the job loads the models, encodes the prompt, and streams both
runs, publishing a :class:`LiveProgress` (every event so far) as it goes. A cancel ends it at
the end of a round and its result keeps what was committed, marked stopped; a finished trace
is stored for identical requests and feeds the class's wait estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from specdec_core.engine import RoundEvent
from specdec_core.live import job_models
from specdec_core.live.access import Access
from specdec_core.live.classroom import Classroom, request_key
from specdec_core.live.run_service import Context
from specdec_core.live.runs import Pacer, Timed, check_prompt, encode_prompt, run_of
from specdec_core.live.settings import LiveSettings
from specdec_core.live.shelf import ModelShelf
from specdec_core.live.trace import LiveTrace, RunRecord, build, from_json, to_json

TOP_N = 20  # probabilities kept per row for the inspector
#: Publish at most this often, so reporting weighs nothing on the timed runs (the baseline has
#: one event per token, the speculative run one per round).
PUBLISH_EVERY = 0.25
SPEC, BASE = "spec", "base"


@dataclass(frozen=True)
class LiveProgress:
    """Where a generation is: the run going (`part`: spec or base, None before either), the
    events of each run so far and the text of their tokens (`texts`: id → text), with the
    request's `prompt` and whether it runs the baseline (`compare`)."""

    part: str | None = None
    prompt: str = ""
    compare: bool = False
    spec: tuple[RoundEvent, ...] = ()
    base: tuple[RoundEvent, ...] = ()
    texts: dict[int, str] | None = None


class LiveJob:
    """One live generation for the run service; identical requests share it (``key``)."""

    def __init__(
        self,
        settings: LiveSettings,
        prompt: str,
        shelf: ModelShelf,
        rules: Access | None,
        room: Classroom,
    ) -> None:
        check_prompt(prompt)  # an empty or over-long prompt is refused before it waits in line
        settings.sampling()  # so are sampling settings out of bounds
        self.settings, self.prompt = settings, prompt
        self.shelf, self.rules, self.room = shelf, rules, room
        self.key = request_key(settings, prompt)
        self._target: Any = None  # what run() builds and its runs publish from
        self._records: list[RunRecord] = []
        self._texts: dict[int, str] = {}

    def ready(self) -> LiveTrace | None:
        """The stored trace of an identical request (this process's, or one the class's
        database holds from another process), marked as replayed from the cache."""
        hit = self.room.lookup_shared(self.key, from_json)
        if hit is None:
            return None
        return replace(hit.trace, meta={**hit.trace.meta, "cached": True})

    def expected_s(self) -> float:
        """Seconds this request should take, from the pace of the class's last runs."""
        tokens = self.settings.max_new_tokens * (2 if self.settings.compare else 1)
        return tokens * self.room.seconds_per_token

    def run(self, ctx: Context) -> LiveTrace | None:
        answer = self.ready()  # an identical request may have run while this one waited
        if answer is not None:
            return answer
        s = self.settings
        self._target = target = job_models.target(self.shelf, self.rules, s.target, ctx)
        draft = job_models.draft(self.shelf, self.rules, s.target, target, s.draft, ctx)
        ids = encode_prompt(target, self.prompt, s.chat, s.max_new_tokens)
        records = self._records
        for part, model in ((SPEC, draft), *([(BASE, None)] if s.compare else [])):
            if ctx.cancelled:
                break
            self._stream(ctx, part, Timed(run_of(target, model, ids, s, TOP_N)))
        if not records:
            return None
        spec, base = records[0], (records[1] if len(records) > 1 else None)
        trace = build(s, self.prompt, ids, target, draft, spec, base)
        if not ctx.cancelled:
            self.room.record(self.key, trace, to_json)
        return trace

    def _stream(self, ctx: Context, part: str, stream: Timed) -> None:
        """Run `stream` to its end or to a cancel, publishing as it goes; its record is kept."""
        events: list[RoundEvent] = []
        pacer = Pacer(PUBLISH_EVERY)
        finished = False
        self._publish(ctx, part, events)  # this run is the one going now
        try:
            for event in stream:
                events.append(event)
                if pacer.due(event.finished):
                    self._publish(ctx, part, events)
                if ctx.cancelled:
                    break
            else:
                finished = True
        finally:
            stream.close()  # the models are released before the next run or the next job
        if events:
            self._records.append(RunRecord(events, stream.wall_s, stopped=not finished))

    def _publish(self, ctx: Context, part: str, events: list[RoundEvent]) -> None:
        """The events so far, with the text of every token they name (the texts grow as it goes)."""
        records, texts = self._records, self._texts
        spec = tuple(records[0].events) if records else tuple(events)
        base = tuple(events) if records else ()
        new = sorted({t for e in events for t in (*e.draft_tokens, *e.committed)} - texts.keys())
        if new:
            texts.update(zip(new, self._target.token_texts(new), strict=True))
        ctx.publish(LiveProgress(part, self.prompt, self.settings.compare, spec, base, dict(texts)))
