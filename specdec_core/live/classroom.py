"""One server, a whole class: identical requests answered from a shared trace cache.

The engine is deterministic (same models, prompt, settings and seed → same events), so a
run that finished is the answer to every later identical request: :class:`Classroom` keeps
the traces of finished runs (least recently used dropped first) under a :func:`request_key`,
and a UI shows a hit as a replay of that run, with that run's timings and the time it was
measured. It also remembers the seconds per token of the last runs, from which a request
waiting for the models estimates its wait. The line itself is the run service's
(specdec_core.live.run_service): first come, first served, and an identical request waiting
or running is joined rather than run again.
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


class Classroom:
    """The shared trace cache and the pace of the last runs, for one server process."""

    def __init__(self, max_traces: int = MAX_TRACES) -> None:
        self.max_traces = max_traces
        self._traces: OrderedDict[Hashable, Cached] = OrderedDict()
        self._rates: deque[float] = deque(maxlen=HISTORY)
        self._paces: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    # -- the cache ---------------------------------------------------------------------------
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
            while len(self._traces) > self.max_traces:
                self._traces.popitem(last=False)

    def forget(self) -> int:
        """Drop every stored trace (e.g. after the models were unloaded); how many there were."""
        with self._lock:
            n = len(self._traces)
            self._traces.clear()
            return n

    def record(self, key: Hashable, trace: Any) -> None:
        """A finished run's `trace` (a ``LiveTrace``): its pace feeds the estimate and, when
        both of its runs are complete, it is stored as the answer to `key`."""
        records = [trace.speculative] + ([trace.baseline] if trace.baseline is not None else [])
        if all(r.complete for r in records) and (trace.baseline is not None or not trace.settings.compare):
            self.store(key, trace)
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
