"""The models one server process holds: built once per key, shared by every session, bounded.

:class:`ModelShelf` keeps each model built under its key (the run service's one worker builds
them, so no two builds meet), remembers the order of use, and keeps at most ``limit`` models:
after each :meth:`~ModelShelf.put` the least recently used go first
(``models.memory.lru_evictions``), never one pinned (the models a teacher preloads), and a
target goes with the drafts built from it. ``limit`` None: no bound. ``after_build`` runs after
each put and its evictions (the app settles Python's collector there:
pages/common/gc_settle.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from specdec_core.models.memory import lru_evictions

_MISSING = object()


class ModelShelf:
    """Models built once per process, by key: :meth:`get` one built already, :meth:`put` one
    just built. `limit` bounds how many stay loaded (None: no bound); `after_build()` is called
    after each put, once the models beyond the bound are unloaded.
    """

    def __init__(self, limit: int | None = None, after_build: Callable[[], None] | None = None) -> None:
        self.limit = limit
        self._after_build = after_build
        self._models: OrderedDict[Hashable, Any] = OrderedDict()  # least recently used first
        self._parents: dict[Hashable, Hashable] = {}
        self._pinned: set[Hashable] = set()
        self._guard = threading.Lock()  # pages read the shelf while the worker fills it
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

    def get(self, key: Hashable) -> Any:
        """The model of `key`, marked most recently used; None when it is not built."""
        model = self._models.get(key, _MISSING)
        if model is _MISSING:
            return None
        self._touch(key)
        return model

    def put(self, key: Hashable, model: Any, parent: Hashable | None = None, pin: bool = False) -> Any:
        """Keep `model`, just built, under `key` (`parent`: the key of the model it is built from,
        unloaded together; `pin`: never unloaded to make room), then unload the least recently
        used beyond the bound; returns `model`."""
        with self._guard:
            self._models[key] = model
            if parent is not None:
                self._parents[key] = parent
            if pin:
                self._pinned.add(key)
        self._touch(key)
        self.trim(keep=key)
        if self._after_build is not None:
            self._after_build()
        return model

    def trim(self, keep: Hashable | None = None) -> list[Any]:
        """Unload the least recently used models beyond :attr:`limit` (never `keep` nor a pinned
        model; a job holding one it unloads finishes with it); returns the models unloaded."""
        with self._guard:
            held = {k for k in self._models if k in self._pinned or k == keep}
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

        A job that is running keeps the models it holds until it ends; the next job builds
        them again.
        """
        with self._guard:
            count = len(self._models)
            self._models.clear()
            self._parents.clear()
            self._pinned.clear()
        return count
