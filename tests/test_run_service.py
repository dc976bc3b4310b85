"""The run service: jobs run one at a time in order, pages read snapshots and cancel, identical
requests share one run, a failure is the ticket's and not the worker's, and a cancelled run
keeps what it published."""

from __future__ import annotations

import threading
import time

import pytest

from specdec_core.live.run_service import CANCELLED, DONE, FAILED, RUNNING, WAITING, RunService


class Steps:
    """A job of `n` rounds that waits at `gate` before each round and publishes its count."""

    def __init__(
        self, n: int, key=None, gate: threading.Event | None = None, fail_at: int | None = None, pause=0.0
    ):
        self.n, self.key, self.fail_at, self.pause = n, key, fail_at, pause
        self.gate = gate or threading.Event()
        if gate is None:
            self.gate.set()
        self.started = threading.Event()
        self.runs = 0

    def run(self, ctx):
        self.runs += 1
        self.started.set()
        done = []
        for i in range(self.n):
            assert self.gate.wait(10)
            if ctx.cancelled:
                break
            if i == self.fail_at:
                raise ValueError(f"round {i} failed")
            done.append(i)
            ctx.publish(progress=i, result=list(done))
            time.sleep(self.pause)
        return list(done)


def until(service, ticket, states, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        snap = service.snapshot(ticket)
        if snap.state in states:
            return snap
        time.sleep(0.01)
    raise AssertionError(f"{ticket} never reached {states}: {service.snapshot(ticket)}")


@pytest.fixture
def service():
    s = RunService()
    yield s
    s.close()


def test_a_job_runs_and_its_snapshot_holds_its_result(service):
    ticket = service.submit(Steps(3))
    snap = until(service, ticket, (DONE,))
    assert snap.result == [0, 1, 2] and snap.progress == 2 and snap.error is None
    assert snap.started is not None and snap.ended >= snap.started
    with pytest.raises(KeyError):
        service.snapshot("run-999")


def test_jobs_run_one_at_a_time_in_order_and_tell_their_place(service):
    gate = threading.Event()
    first, second, third = Steps(1, gate=gate), Steps(1), Steps(1)
    a = service.submit(first)
    assert first.started.wait(5)
    b, c = service.submit(second), service.submit(third)
    assert service.snapshot(a).state == RUNNING
    assert (service.snapshot(b).state, service.snapshot(b).ahead) == (WAITING, 1)
    assert service.snapshot(c).ahead == 2 and not second.started.is_set()
    gate.set()
    until(service, c, (DONE,))
    assert [service.snapshot(t).state for t in (a, b, c)] == [DONE, DONE, DONE]


def test_identical_requests_share_one_run_until_every_ticket_cancels(service):
    gate = threading.Event()
    blocker = Steps(1, gate=gate)
    service.submit(blocker)
    assert blocker.started.wait(5)
    shared = Steps(2, key="same")
    one, two = service.submit(shared), service.submit(Steps(2, key="same"))
    assert service.snapshot(one).ahead == service.snapshot(two).ahead == 1
    assert service.cancel(one).state == CANCELLED
    gate.set()
    snap = until(service, two, (DONE,))
    assert snap.result == [0, 1] and shared.runs == 1  # the second ticket's run is the first's
    assert service.snapshot(one).state == CANCELLED


def test_a_cancelled_waiting_run_leaves_the_line(service):
    gate = threading.Event()
    blocker = Steps(1, gate=gate)
    a = service.submit(blocker)
    assert blocker.started.wait(5)
    waiting = Steps(1)
    b = service.submit(waiting)
    service.cancel(b)
    gate.set()
    until(service, a, (DONE,))
    time.sleep(0.05)
    assert not waiting.started.is_set() and service.snapshot(b).state == CANCELLED


def test_a_cancelled_run_stops_within_a_round_and_keeps_what_it_published(service):
    job = Steps(1000, pause=0.01)
    ticket = service.submit(job)
    while not service.snapshot(ticket).result:
        time.sleep(0.005)
    view = service.cancel(ticket)
    assert view.state == CANCELLED and view.result  # what was committed stays
    nxt = service.submit(Steps(1))
    assert until(service, nxt, (DONE,), timeout=2).result == [0]  # the worker was freed within a round
    assert job.runs == 1


def test_a_failure_is_its_tickets_and_the_worker_goes_on(service):
    bad = service.submit(Steps(3, fail_at=1))
    good = service.submit(Steps(1))
    snap = until(service, bad, (FAILED,))
    assert isinstance(snap.error, ValueError) and snap.result == [0]  # the rounds before it stay
    assert until(service, good, (DONE,)).result == [0]


def test_only_the_last_finished_snapshots_are_kept():
    service = RunService(keep_finished=2)
    try:
        tickets = [service.submit(Steps(1)) for _ in range(3)]
        until(service, tickets[-1], (DONE,))
        with pytest.raises(KeyError):
            service.snapshot(tickets[0])
        assert service.snapshot(tickets[1]).state == DONE
    finally:
        service.close()


def test_a_cancel_that_waits_returns_the_run_as_it_ended(service):
    job = Steps(1000, pause=0.01)
    ticket = service.submit(job)
    while not service.snapshot(ticket).result:
        time.sleep(0.005)
    view = service.cancel(ticket, wait=5)
    assert view.state == CANCELLED and view.ended is not None  # the worker finished its round
    assert view.result == list(range(len(view.result)))


class Priced(Steps):
    """A Steps job that says how long it expects to run."""

    def __init__(self, n, expected, **kw):
        super().__init__(n, **kw)
        self.expected = expected

    def expected_s(self):
        return self.expected


def test_a_waiting_ticket_estimates_its_wait_from_the_jobs_ahead(service):
    gate = threading.Event()
    first = service.submit(Priced(2, 30.0, gate=gate))
    until(service, first, (RUNNING,))
    second = service.submit(Priced(1, 20.0, gate=gate))
    third = service.submit(Priced(1, 5.0, gate=gate))
    snap = service.snapshot(third)
    assert (snap.state, snap.ahead) == (WAITING, 2)
    assert 49.0 < snap.wait_s <= 50.0, "the running job's 30 s less what it ran, then the next 20 s"
    unpriced = service.submit(Steps(1, gate=gate))
    assert service.snapshot(service.submit(Priced(1, 1.0, gate=gate))).wait_s is None, "one ahead cannot say"
    assert service.snapshot(second).wait_s <= 30.0 and service.snapshot(unpriced).wait_s is not None
    gate.set()


class Answered(Steps):
    """A job whose answer is ready before it runs (a replay)."""

    def ready(self):
        return "stored answer"


def test_a_job_answered_at_once_never_waits_in_line(service):
    gate = threading.Event()
    busy = service.submit(Steps(1, gate=gate))
    until(service, busy, (RUNNING,))
    job = Answered(1)
    snap = service.snapshot(service.submit(job))
    assert (snap.state, snap.result) == (DONE, "stored answer") and job.runs == 0
    gate.set()
