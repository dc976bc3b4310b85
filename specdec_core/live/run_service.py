"""Runs that live in the core while pages watch them: submit a job, read snapshots, cancel.

A page builds a job (an object with a ``key`` and ``run(ctx)``, see :class:`Job`) and hands it
to the process's one :class:`RunService`; it gets a ticket id back at once. One worker thread
runs the jobs one after another, first come first served, so a run never competes with another
for the CPU or the models. A page then reads :meth:`RunService.snapshot` as often as it likes
(its state, its place in the line, the job's last published progress and partial result) and
:meth:`RunService.cancel` ends its interest. The worker never touches a UI: a job reports
through :meth:`Context.publish` and checks :attr:`Context.cancelled` between rounds.

Identical requests (the same ``key``, not None) waiting or running share one run: each page
gets its own ticket, and the run is cancelled only when every ticket on it is. A job that can
be answered without running (its ``ready()`` gives the result, e.g. a replay of a stored run)
ends as it is submitted, without waiting in line. A waiting ticket's snapshot estimates its
wait from the jobs ahead that say what they expect to take (``expected_s()``). A finished
run's snapshot is kept for the next :data:`KEEP_FINISHED` tickets' lookups, so a page that
comes back to it (another page of the course visited meanwhile) still finds its result.
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

#: Snapshots of finished tickets kept for their pages to collect.
KEEP_FINISHED = 256
WAITING, RUNNING, DONE, CANCELLED, FAILED = "waiting", "running", "done", "cancelled", "failed"
ENDED = (DONE, CANCELLED, FAILED)


class Cancelled(Exception):
    """Raised by :meth:`Context.check` in a job whose every ticket was cancelled."""


class Context:
    """What a running job sees: whether to stop, and where to publish its progress."""

    def __init__(self, run: _Run) -> None:
        self._run = run

    @property
    def cancelled(self) -> bool:
        """True once every ticket on this run was cancelled: stop at the end of this round."""
        return self._run.cancel.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when :attr:`cancelled`."""
        if self.cancelled:
            raise Cancelled

    def publish(self, progress: Any = None, result: Any = None) -> None:
        """The job's latest progress (shown as it is) and, when given, its result so far (kept
        if the run is cancelled or fails later)."""
        with self._run.lock:
            self._run.progress = progress
            if result is not None:
                self._run.result = result


@dataclass(frozen=True)
class Loading:
    """The progress a job publishes while it loads a model (`what`: the model's name or
    source), whatever the job: every page shows it the same way."""

    what: str


class Job(Protocol):
    """A unit of work for the service: ``key`` (identical jobs share a run; None: never shared)
    and ``run(ctx)``, which returns the result and may publish progress on the way. A job may
    also have ``ready()`` (its result when it needs no run, else None) and ``expected_s()``
    (seconds it expects to run, or None), which the service calls when they exist."""

    key: Hashable | None

    def run(self, ctx: Context) -> Any: ...


def _expected_s(job: Job) -> float | None:
    expected = getattr(job, "expected_s", None)
    return None if expected is None else expected()


@dataclass(frozen=True)
class Snapshot:
    """A ticket's view of its run: ``state`` (waiting, running, done, cancelled, failed),
    ``ahead`` (runs before it in the line) and ``wait_s`` (their expected seconds left; None
    when one of them cannot say), the job's last ``progress`` and ``result`` (partial while it
    runs), the ``error`` a failed run raised, and when it started and ended."""

    ticket: str
    state: str
    ahead: int = 0
    wait_s: float | None = None
    progress: Any = None
    result: Any = None
    error: BaseException | None = None
    started: float | None = None
    ended: float | None = None

    @property
    def ended_already(self) -> bool:
        return self.state in ENDED


@dataclass(eq=False)
class _Run:
    job: Job
    tickets: set[str] = field(default_factory=set)
    state: str = WAITING
    progress: Any = None
    result: Any = None
    error: BaseException | None = None
    started: float | None = None
    ended: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


class RunService:
    """One line of jobs and the worker that runs them (start it once per process)."""

    def __init__(self, keep_finished: int = KEEP_FINISHED) -> None:
        self.keep_finished = keep_finished
        self._line: list[_Run] = []  # waiting runs, in order; the running one is not in it
        self._running: _Run | None = None
        self._by_ticket: dict[str, _Run] = {}
        self._ended: OrderedDict[str, Snapshot] = OrderedDict()  # tickets whose run ended, or that left it
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self._worker = threading.Thread(target=self._work, name="run-service", daemon=True)
        self._closed = False
        self._worker.start()
        # a worker still inside torch when the interpreter finalizes aborts the process
        atexit.register(self.close)

    # -- what pages call ---------------------------------------------------------------------
    def submit(self, job: Job) -> str:
        """Queue `job` (or join the identical one waiting or running); its ticket id."""
        ready = getattr(job, "ready", None)
        answer = None if ready is None else ready()  # outside the lock: it may look things up
        with self._cond:
            if self._closed:
                raise RuntimeError("the run service is closed")
            ticket = f"run-{next(self._ids)}"
            if answer is not None:
                now = time.time()
                self._end(ticket, Snapshot(ticket, DONE, result=answer, started=now, ended=now))
                return ticket
            run = self._same(job.key)
            if run is None:
                run = _Run(job)
                self._line.append(run)
            run.tickets.add(ticket)
            self._by_ticket[ticket] = run
            self._cond.notify_all()
            return ticket

    def snapshot(self, ticket: str) -> Snapshot:
        """The ticket's run as it is now; KeyError for a ticket this service does not know (or
        one whose finished snapshot was dropped to keep the last :attr:`keep_finished`)."""
        with self._cond:
            if ticket in self._ended:
                return self._ended[ticket]
            run = self._by_ticket[ticket]
            if run not in self._line:
                return self._view(ticket, run, 0)
            before = ([self._running] if self._running else []) + self._line[: self._line.index(run)]
            return replace(self._view(ticket, run, len(before)), wait_s=self._wait_s(before))

    def cancel(self, ticket: str, wait: float = 0.0) -> Snapshot:
        """This ticket stops watching; its run ends at the end of its round once no ticket
        watches it (a waiting run leaves the line at once). Returns the ticket's last view,
        after up to `wait` seconds for a running run to end, so it holds all it committed."""
        with self._cond:
            if ticket in self._ended:
                return self._ended[ticket]
            run = self._by_ticket.pop(ticket)
            run.tickets.discard(ticket)
            if not run.tickets:
                run.cancel.set()
                if run in self._line:
                    self._line.remove(run)
                    run.state, run.ended = CANCELLED, time.time()
                elif wait > 0:
                    self._cond.wait_for(lambda: run.state in ENDED, timeout=wait)
            view = replace(self._view(ticket, run, 0), state=CANCELLED)
            self._end(ticket, view)
            return view

    def close(self, timeout: float = 30.0) -> None:
        """Cancel everything and stop the worker once its round ends (at exit, and in tests)."""
        with self._cond:
            self._closed = True
            for ticket in list(self._by_ticket):
                self.cancel(ticket)
            self._cond.notify_all()
        self._worker.join(timeout)

    # -- the worker ----------------------------------------------------------------------------
    def _same(self, key: Hashable | None) -> _Run | None:
        if key is None:
            return None
        for run in ([self._running] if self._running else []) + self._line:
            if run.job.key == key and not run.cancel.is_set():
                return run
        return None

    @staticmethod
    def _wait_s(before: list[_Run]) -> float | None:
        """Seconds until the runs in `before` end, from what each expects (less what it has run)."""
        total = 0.0
        for run in before:
            expected = _expected_s(run.job)
            if expected is None:
                return None
            ran = 0.0 if run.started is None else time.time() - run.started
            total += max(expected - ran, 0.0)
        return total

    def _view(self, ticket: str, run: _Run, ahead: int) -> Snapshot:
        with run.lock:
            return Snapshot(
                ticket, run.state, ahead, progress=run.progress, result=run.result, error=run.error,
                started=run.started, ended=run.ended,
            )  # fmt: skip

    def _end(self, ticket: str, view: Snapshot) -> None:
        self._ended[ticket] = view
        while len(self._ended) > self.keep_finished:
            self._ended.popitem(last=False)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._line and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                run = self._line.pop(0)
                self._running = run
                run.state, run.started = RUNNING, time.time()
            self._execute(run)
            with self._cond:
                self._running = None
                for ticket in list(run.tickets):
                    self._by_ticket.pop(ticket, None)
                    self._end(ticket, self._view(ticket, run, 0))
                run.tickets.clear()
                self._cond.notify_all()

    def _execute(self, run: _Run) -> None:
        ctx = Context(run)
        try:
            result = run.job.run(ctx)
            state, error = (CANCELLED if ctx.cancelled else DONE), None
        except Cancelled:
            result, state, error = None, CANCELLED, None
        except Exception as exc:  # the job's own failure: its tickets show it, the worker goes on
            result, state, error = None, FAILED, exc
        with run.lock:
            if result is not None:
                run.result = result
            run.state, run.error, run.ended = state, error, time.time()
