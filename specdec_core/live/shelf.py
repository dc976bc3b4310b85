"""The models one server process holds: built once per key, shared by every session, bounded.

:class:`ModelShelf` builds each model once (a second caller of a key that is still loading
waits for that build), remembers the order of use, and keeps at most ``limit`` models: after
each build the least recently used go first (``models.memory.lru_evictions``), never one a
run is holding (its lock is taken) nor one pinned (the models a teacher preloads), and a
target goes with the drafts built from it. ``limit`` None: no bound (as before the bound).
``after_build`` runs after each build and its evictions (the app settles Python's collector
there: pages/common/gc_settle.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from specdec_core.models.locking import lock_of
from specdec_core.models.memory import lru_evictions

_MISSING = object()


def _busy(model: Any) -> bool:
    lock = lock_of(model)
    return lock is not None and lock.busy


class ModelShelf:
    """Models built once per process, by key; concurrent callers of one key share one build.

    A failed build is not kept, so the next call tries again (e.g. after a folder is fixed).
    `limit` bounds how many stay loaded (None: no bound); `busy(model)` tells a model a run
    holds (default: its lock is taken); `after_build()` is called after each build, once the
    models beyond the bound are unloaded.
    """

    def __init__(
        self,
        limit: int | None = None,
        busy: Callable[[Any], bool] = _busy,
        after_build: Callable[[], None] | None = None,
    ) -> None:
        self.limit = limit
        self._busy = busy
        self._after_build = after_build
        self._models: OrderedDict[Hashable, Any] = OrderedDict()  # least recently used first
        self._parents: dict[Hashable, Hashable] = {}
        self._pinned: set[Hashable] = set()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()
        self.evicted = 0  # models unloaded by the bound since the process started

    def cached(self, key: Hashable) -> bool:
        """True when the model of `key` is built already."""
        return key in self._models

    def peek(self, key: Hashable) -> Any:
        """The model of `key` if it is built, else None (builds nothing, changes no order)."""
        return self._models.get(key)

    def _touch(self, key: Hashable) -> None:
        """Mark `key` (then its parents, so a draft goes before its target) most recently used."""
        with self._guard:
            while key in self._models:
                self._models.move_to_end(key)
                key = self._parents.get(key, _MISSING)

    def get(
        self,
        key: Hashable,
        build: Callable[[], Any],
        on_wait: Callable[[], None] | None = None,
        parent: Hashable | None = None,
        pin: bool = False,
    ) -> Any:
        """The model of `key`, building it with `build()` unless it exists.

        When another thread is building the same key, `on_wait()` is called once and this
        call blocks until that build ends (then uses its model, or builds if it failed).
        `parent`: the key of the model this one is built from (unloaded together); `pin`:
        never unload it to make room.
        """
        model = self._models.get(key, _MISSING)
        if model is not _MISSING:
            self._touch(key)
            return model
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        if not lock.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            lock.acquire()
        try:
            model = self._models.get(key, _MISSING)
            built = model is _MISSING
            if built:
                model = build()
                with self._guard:
                    self._models[key] = model
                    if parent is not None:
                        self._parents[key] = parent
                    if pin:
                        self._pinned.add(key)
            self._touch(key)
            self.trim(keep=key)
            if built and self._after_build is not None:
                self._after_build()
            return model
        finally:
            lock.release()

    def trim(self, keep: Hashable | None = None) -> list[Any]:
        """Unload the least recently used models beyond :attr:`limit` (never `keep`, a pinned
        model or one a run holds); returns the models unloaded."""
        with self._guard:
            held = {k for k, m in self._models.items() if k in self._pinned or k == keep or self._busy(m)}
            keys = lru_evictions(list(self._models), self.limit, held, self._parents)
            gone = [self._models.pop(k) for k in keys]
            for k in keys:
                self._parents.pop(k, None)
            self.evicted += len(gone)
        return gone

    def loaded(self) -> list[Any]:
        """The models built so far, least recently used first."""
        return list(self._models.values())

    def pinned(self, model: Any) -> bool:
        """Whether `model` is on the shelf pinned (preloaded for a class)."""
        return any(m is model and k in self._pinned for k, m in list(self._models.items()))

    def release(self) -> int:
        """Forget every built model, so its memory can be freed; returns how many there were.

        A generation that is running keeps the models it holds until it ends; the next
        ``get`` builds a model again.
        """
        with self._guard:
            count = len(self._models)
            self._models.clear()
            self._parents.clear()
            self._pinned.clear()
        return count
