"""One server, a whole class: identical requests answered from a shared trace cache, the rest queued.

The engine is deterministic (same models, prompt, settings and seed → same events), so a
run that finished is the answer to every later identical request: :class:`Classroom` keeps
the traces of finished runs (least recently used dropped first) under a :func:`request_key`,
and a UI shows a hit as a replay of that run, with that run's timings and the time it was
measured. Requests that must run take a :class:`Ticket` in one first-come, first-served
line for the models; the ticket tells its position and an estimate of the wait (from the
seconds per token of the last runs), and a UI lets only the head of the line generate.
Releasing a ticket (at the end of a run, on Stop, on any error) hands the models on. A
ticket whose request is identical to one ahead of it waits for that one only: when its
trace is stored the ticket's wait ends, so it is answered from the cache without waiting
behind the different requests in between.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

#: Traces kept for replay, and runs remembered for the estimate.
MAX_TRACES = 64
HISTORY = 8
#: Seconds per generated token assumed before any run has been measured.
FIRST_GUESS_S_PER_TOKEN = 0.1


def request_key(settings: Hashable, prompt: str) -> tuple[Hashable, str]:
    """What makes two requests identical: every setting (models, sampling, γ, seed, length,
    chat, comparison) and the prompt text."""
    return (settings, prompt)


@dataclass(frozen=True)
class Cached:
    """A finished run's trace and when it was stored."""

    trace: Any
    stored_at: float


class Ticket:
    """A place in the line for the models; :meth:`release` it when done (safe to call twice)."""

    def __init__(self, room: Classroom, tokens: int, key: Hashable | None = None) -> None:
        self._room = room
        self.tokens = tokens  # new tokens this request may generate (both runs together)
        self.key = key  # the request's key (None: answered by no other request's trace)
        self.started: float | None = None  # when it reached the head of the line
        self.released = False

    @property
    def position(self) -> int:
        """0 at the head of the line (its turn), else how many runs must end before it is
        served: the requests ahead of it, up to an identical one (which answers it) and less
        those answered by an identical one further ahead."""
        return self._room._position(self)

    @property
    def wait_estimate_s(self) -> float:
        """Seconds until this ticket is served, estimated from the requests counted in :attr:`position`."""
        return self._room._estimate(self)

    def wait_turn(self, timeout: float) -> bool:
        """Block until it is this ticket's turn (True), or until `timeout` seconds pass or a
        trace for its key is stored (False: look the key up, or wait again)."""
        return self._room._wait(self, timeout)

    def release(self, tokens_made: int = 0, seconds: float = 0.0) -> None:
        """Leave the line; a run that made `tokens_made` tokens in `seconds` feeds the estimate."""
        self._room._release(self, tokens_made, seconds)


class Classroom:
    """The shared trace cache and the line for the models of one server process."""

    def __init__(self, max_traces: int = MAX_TRACES) -> None:
        self.max_traces = max_traces
        self._traces: OrderedDict[Hashable, Cached] = OrderedDict()
        self._line: list[Ticket] = []
        self._rates: deque[float] = deque(maxlen=HISTORY)
        self._paces: dict[Hashable, deque[float]] = {}
        self._cond = threading.Condition()

    # -- the cache ---------------------------------------------------------------------------
    def lookup(self, key: Hashable) -> Cached | None:
        """The stored run for `key`, or None."""
        with self._cond:
            hit = self._traces.get(key)
            if hit is not None:
                self._traces.move_to_end(key)
            return hit

    def store(self, key: Hashable, trace: Any) -> None:
        """Keep `trace` as the answer to `key` (only complete runs should be stored)."""
        with self._cond:
            self._traces[key] = Cached(trace, time.time())
            self._traces.move_to_end(key)
            while len(self._traces) > self.max_traces:
                self._traces.popitem(last=False)
            self._cond.notify_all()  # tickets of the same request stop waiting

    def forget(self) -> int:
        """Drop every stored trace (e.g. after the models were unloaded); how many there were."""
        with self._cond:
            n = len(self._traces)
            self._traces.clear()
            return n

    def finish(self, ticket: Ticket, key: Hashable, trace: Any | None) -> None:
        """Release `ticket` after a run: a finished `trace` (a ``LiveTrace``; None after a Stop
        or an error) feeds the estimate and, when both of its runs are complete, is stored."""
        if trace is None:
            ticket.release()
            return
        records = [trace.speculative] + ([trace.baseline] if trace.baseline is not None else [])
        # stored before the models are handed on: the next in line may be the same request
        if all(r.complete for r in records) and (trace.baseline is not None or not trace.settings.compare):
            self.store(key, trace)
        ticket.release(sum(len(r.tokens) for r in records), sum(r.wall_s for r in records))

    def note_pace(self, label: Hashable, seconds: float, tokens: int) -> None:
        """Remember one finished run's seconds per token under `label` (e.g. a grid's target)."""
        if tokens > 0 and seconds > 0:
            with self._cond:
                self._paces.setdefault(label, deque(maxlen=4 * HISTORY)).append(seconds / tokens)

    def pace(self, label: Hashable) -> float | None:
        """Median seconds per token of the last runs noted under `label`; None before any."""
        with self._cond:
            seen = self._paces.get(label)
            return statistics.median(seen) if seen else None

    # -- the line ----------------------------------------------------------------------------
    def enqueue(self, tokens: int, key: Hashable | None = None) -> Ticket:
        """A ticket at the end of the line for a request of up to `tokens` new tokens (`key`:
        the request's, so that an identical request's stored trace ends its wait)."""
        ticket = Ticket(self, max(int(tokens), 1), key)
        with self._cond:
            self._line.append(ticket)
            self._start_head()
        return ticket

    @property
    def waiting(self) -> int:
        """Requests in the line, the running one included."""
        with self._cond:
            return len(self._line)

    @property
    def seconds_per_token(self) -> float:
        """Median seconds per token of the last runs (a first guess before any)."""
        with self._cond:
            return statistics.median(self._rates) if self._rates else FIRST_GUESS_S_PER_TOKEN

    def _start_head(self) -> None:
        if self._line and self._line[0].started is None:
            self._line[0].started = time.monotonic()
        self._cond.notify_all()

    def _ahead(self, ticket: Ticket) -> list[Ticket]:
        """The runs that must end before `ticket` is served: the tickets ahead of it (up to the
        first identical one, whose trace answers it), less those that an identical ticket
        further ahead will answer. Call with the lock held."""
        if ticket not in self._line:
            return []
        runs: list[Ticket] = []
        keys: set[Hashable] = set()
        for t in self._line[: self._line.index(ticket)]:
            if t.key is None or t.key not in keys:
                runs.append(t)
            if t.key is not None and t.key == ticket.key:
                break
            if t.key is not None:
                keys.add(t.key)
        return runs

    def _position(self, ticket: Ticket) -> int:
        with self._cond:
            return len(self._ahead(ticket))

    def _estimate(self, ticket: Ticket) -> float:
        rate = self.seconds_per_token
        with self._cond:
            total = 0.0
            for t in self._ahead(ticket):
                need = t.tokens * rate
                if t.started is not None:
                    need = max(need - (time.monotonic() - t.started), 0.0)
                total += need
            return total

    def _turn(self, ticket: Ticket) -> bool:
        return not self._line or self._line[0] is ticket

    def _wait(self, ticket: Ticket, timeout: float) -> bool:
        def turn_or_answer() -> bool:
            return self._turn(ticket) or (ticket.key is not None and ticket.key in self._traces)

        with self._cond:
            self._cond.wait_for(turn_or_answer, timeout)
            return self._turn(ticket)

    def _release(self, ticket: Ticket, tokens_made: int, seconds: float) -> None:
        with self._cond:
            if ticket.released:
                return
            ticket.released = True
            if tokens_made > 0 and seconds > 0:
                self._rates.append(seconds / tokens_made)
            if ticket in self._line:
                self._line.remove(ticket)
            self._start_head()
