"""One server, a whole class: identical requests answered from a shared trace cache.

The engine is deterministic (same models, prompt, settings and seed → same events), so a
run that finished is the answer to every later identical request: :class:`Classroom` keeps
the traces of finished runs (least recently used dropped first) under a :func:`request_key`,
and a UI shows a hit as a replay of that run, with that run's timings and the time it was
measured. Where the class has a database (:class:`SharedReplays`), a finished run (a live
trace, a grid's run) is stored there too as JSON (specdec_core.live.replays), so every app
process behind the same database replays a request any of them ran. It also remembers the
seconds per token of the last runs, from which a request waiting for the models estimates its
wait. The line itself is the run service's (specdec_core.live.run_service): first come, first
served, and an identical request waiting or running is joined rather than run again.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from specdec_core.live import replays

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


@dataclass(frozen=True)
class SharedReplays:
    """The class's database for finished runs, and the bytes of JSON it keeps at most."""

    engine: Engine
    max_bytes: int = replays.MAX_BYTES


class Classroom:
    """The shared trace cache and the pace of the last runs, for one server process."""

    def __init__(self, max_traces: int = MAX_TRACES) -> None:
        self.max_traces = max_traces
        self.shared: SharedReplays | None = None
        self.shared_error: str | None = None  # the database's last failure, None once it works
        self._traces: OrderedDict[Hashable, Cached] = OrderedDict()
        self._rates: deque[float] = deque(maxlen=HISTORY)
        self._paces: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    # -- the cache ---------------------------------------------------------------------------
    @property
    def stored(self) -> int:
        """How many finished runs this process holds."""
        with self._lock:
            return len(self._traces)

    def lookup(self, key: Hashable) -> Cached | None:
        """The stored run for `key`, or None."""
        with self._lock:
            hit = self._traces.get(key)
            if hit is not None:
                self._traces.move_to_end(key)
            return hit

    def store(self, key: Hashable, trace: Any) -> None:
        """Keep `trace` as the answer to `key` (only complete runs should be stored)."""
        with self._lock:
            self._traces[key] = Cached(trace, time.time())
            self._traces.move_to_end(key)
            self._trim()

    def _trim(self) -> None:
        """Drop the least recently used traces beyond :attr:`max_traces` (lock held)."""
        while len(self._traces) > self.max_traces:
            self._traces.popitem(last=False)

    def forget(self) -> int:
        """Drop every stored trace, the class database's too (e.g. after the models were
        unloaded); how many this process held."""
        with self._lock:
            n = len(self._traces)
            self._traces.clear()
        self._on_shared(replays.clear)
        return n

    def share(self, shared: SharedReplays | None) -> None:
        """Store finished live runs in the class's database from now on (None: this process only)."""
        fresh = shared is not None and shared != self.shared
        if fresh and self._on_shared(replays.ensure_schema, where=shared) is False:
            return  # kept out until the database answers (the next script run tries again)
        self.shared = shared

    def _on_shared(self, action: Callable[..., Any], *args: Any, where: SharedReplays | None = None) -> Any:
        """`action(engine, *args)` on the class's database; False (and the error kept in
        :attr:`shared_error`) when it fails, None without a database: a replay is an
        optimisation, the process's own memory answers without it."""
        where = where or self.shared
        if where is None:
            return None
        try:
            out = action(where.engine, *args)
        except (SQLAlchemyError, OSError) as exc:
            self._failed(exc)
            return False
        self.shared_error = None
        return out

    def _failed(self, exc: BaseException) -> None:
        self.shared_error = f"{type(exc).__name__}: {exc}".splitlines()[0]

    def lookup_shared(self, key: Hashable, decode: Callable[[str], Any]) -> Cached | None:
        """The stored run for `key`: this process's, else the class database's, read back from
        its JSON with `decode` (and kept here too)."""
        hit = self.lookup(key)
        if hit is not None or self.shared is None:
            return hit
        found = self._on_shared(replays.get, key)
        if not found:
            return None
        payload, stored_at = found
        try:
            trace = decode(payload)
        except ValueError as exc:  # a row written by another version of the app
            self._failed(exc)
            return None
        with self._lock:
            self._traces[key] = hit = Cached(trace, stored_at)
            self._traces.move_to_end(key)
            self._trim()
        return hit

    def store_shared(self, key: Hashable, trace: Any, encode: Callable[[Any], str]) -> None:
        """:meth:`store`, and into the class's database as the JSON `encode` gives."""
        self.store(key, trace)
        where = self.shared
        if where is not None:
            self._on_shared(replays.put, key, encode(trace), where.max_bytes)

    def record(self, key: Hashable, trace: Any, encode: Callable[[Any], str]) -> None:
        """A finished run's `trace` (a ``LiveTrace``): its pace feeds the estimate and, when
        both of its runs are complete, it is stored as the answer to `key` (shared as the JSON
        `encode` gives)."""
        records = [trace.speculative] + ([trace.baseline] if trace.baseline is not None else [])
        if all(r.complete for r in records) and (trace.baseline is not None or not trace.settings.compare):
            self.store_shared(key, trace, encode)
        made, seconds = sum(len(r.tokens) for r in records), sum(r.wall_s for r in records)
        if made > 0 and seconds > 0:
            with self._lock:
                self._rates.append(seconds / made)

    def note_pace(self, label: Hashable, seconds: float, tokens: int) -> None:
        """Remember one finished run's seconds per token under `label` (e.g. a grid's target)."""
        if tokens > 0 and seconds > 0:
            with self._lock:
                self._paces.setdefault(label, deque(maxlen=4 * HISTORY)).append(seconds / tokens)

    def pace(self, label: Hashable) -> float | None:
        """Median seconds per token of the last runs noted under `label`; None before any."""
        with self._lock:
            seen = self._paces.get(label)
            return statistics.median(seen) if seen else None

    @property
    def seconds_per_token(self) -> float:
        """Median seconds per token of the last runs (a first guess before any)."""
        with self._lock:
            return statistics.median(self._rates) if self._rates else FIRST_GUESS_S_PER_TOKEN
