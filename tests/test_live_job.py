"""The live page's generation as a run-service job, on the toy models: it publishes both runs as
they go, stores a finished trace for identical requests (answered at once, marked as replays),
shares a run with an identical request in line, and keeps what a cancelled run committed."""

from __future__ import annotations

import threading
import time

import pytest

from specdec_core.live.classroom import Classroom
from specdec_core.live.live_job import BASE, SPEC, LiveJob, LiveProgress
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.run_service import CANCELLED, DONE, FAILED, RUNNING, RunService
from specdec_core.live.runs import PromptError
from specdec_core.live.settings import LiveSettings
from specdec_core.live.shelf import ModelShelf
from tests.test_run_service import until

PROMPT = "the cat sat on the mat . the dog ran home . the cat"


def _settings(**kw):
    values = {"chat": False, "temperature": 0.0, "max_new_tokens": 24, **kw}
    return LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("toy_draft"), **values)


@pytest.fixture
def parts():
    service = RunService()
    yield service, ModelShelf(), Classroom()
    service.close()


def _job(parts, prompt=PROMPT, **kw):
    _, shelf, room = parts
    return LiveJob(_settings(**kw), prompt, shelf, None, room)


def test_a_run_publishes_both_runs_then_is_stored_and_replayed_at_once(parts):
    service, _, room = parts
    ticket = service.submit(_job(parts))
    seen = []
    while (snap := service.snapshot(ticket)).state not in (DONE, FAILED):
        if isinstance(snap.progress, LiveProgress) and snap.progress.part is not None:
            seen.append(snap.progress)
        time.sleep(0.002)
    assert snap.state == DONE, snap.error
    trace = snap.result
    assert trace.speculative.complete and trace.baseline.complete
    assert trace.speculative.tokens == trace.baseline.tokens, "greedy: the same text both ways"
    last = service.snapshot(ticket).progress
    assert last.part == BASE and last.prompt == PROMPT and last.compare
    assert [e.index for e in last.spec] == [e.index for e in trace.speculative.events]
    assert all(last.texts[t] == trace.text(t) for e in last.spec for t in e.committed)
    assert {p.part for p in seen} <= {SPEC, BASE}
    assert room.seconds_per_token > 0 and room.lookup(_job(parts).key) is not None
    again = _job(parts)
    replay = service.snapshot(service.submit(again))
    assert replay.state == DONE and replay.result.meta.get("cached") is True
    assert replay.result.speculative.tokens == trace.speculative.tokens


def test_an_identical_request_in_line_shares_the_run_and_one_stop_leaves_it_going(parts):
    service = parts[0]
    gate = threading.Event()

    class Hold:
        key = None

        def run(self, ctx):
            assert gate.wait(10)

    holder = service.submit(Hold())
    until(service, holder, (RUNNING,))
    mine, twin = (
        service.submit(_job(parts, max_new_tokens=16)),
        service.submit(_job(parts, max_new_tokens=16)),
    )
    other = service.submit(_job(parts, seed=3))
    assert [service.snapshot(t).ahead for t in (mine, twin, other)] == [1, 1, 2]
    assert service.snapshot(other).wait_s is None, "the job ahead of the line cannot say how long"
    service.cancel(twin)  # the twin's learner stops: the run goes on for the other ticket
    gate.set()
    assert until(service, mine, (DONE,)).result.speculative.complete
    assert until(service, other, (DONE,)).result.settings.seed == 3


class Gated(LiveJob):
    """A live job that stops at its first published round until `gate` opens (so a cancel
    surely lands mid-run, however fast the toy models are)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.reached, self.gate = threading.Event(), threading.Event()

    def _publish(self, ctx, part, events):
        super()._publish(ctx, part, events)
        if events:
            self.reached.set()
            assert self.gate.wait(10)


def test_a_cancel_keeps_the_committed_rounds_and_stores_nothing(parts):
    service, shelf, room = parts
    job = Gated(_settings(max_new_tokens=200, temperature=1.0, compare=False), PROMPT, shelf, None, room)
    ticket = service.submit(job)
    assert job.reached.wait(10)
    threading.Timer(0.2, job.gate.set).start()  # the round ends while cancel waits for it
    view = service.cancel(ticket, wait=10)
    assert view.state == CANCELLED
    trace = view.result
    assert trace is not None and trace.speculative.stopped and 0 < len(trace.speculative.tokens) < 200
    assert trace.baseline is None
    assert room.lookup(job.key) is None, "a stopped run is not the answer to the same request"


@pytest.mark.parametrize("prompt, code", [("   ", "empty"), ("x" * 200_000, "too_long")])
def test_a_bad_prompt_is_refused_before_it_waits_in_line(parts, prompt, code):
    with pytest.raises(PromptError) as err:
        _job(parts, prompt=prompt)
    assert err.value.code == code


@pytest.mark.fast  # the custom target imports transformers to find the folder missing
def test_a_model_that_cannot_load_fails_the_ticket_not_the_worker(parts):
    service, shelf, room = parts
    job = LiveJob(
        LiveSettings(TargetSpec("custom", source="/no/such/model"), DraftSpec("ngram"), chat=False),
        PROMPT, shelf, None, room,
    )  # fmt: skip
    snap = until(service, service.submit(job), (FAILED,))
    assert isinstance(snap.error, ValueError | OSError)
    assert until(service, service.submit(_job(parts, max_new_tokens=8)), (DONE,)).result is not None
