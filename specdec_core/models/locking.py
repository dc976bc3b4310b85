"""One lock per model, so two users (two browser sessions) never run the same model at once.

Every model object carries ``lock: ModelLock``. The engine holds the locks of the models it
runs for a whole generation and releases them when the generator finishes or is closed
(breaking out of a ``for`` loop closes it). ``model.lock.busy`` tells a UI, without
blocking, that someone else is generating with that model right now.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class ModelBusyError(RuntimeError):
    """A model is in use by another generation and its lock could not be taken in time."""


class ModelLock:
    """A plain (non-reentrant) lock with a non-blocking ``busy`` view and a display name."""

    def __init__(self, name: str = "model") -> None:
        self.name = name
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        """True while some generation holds this model (never blocks)."""
        return self._lock.locked()

    def acquire(self, timeout: float | None = None) -> bool:
        """Take the lock; ``timeout`` None waits forever, 0 tries once. True when taken."""
        if timeout is None:
            return self._lock.acquire()
        if timeout <= 0:
            return self._lock.acquire(blocking=False)
        return self._lock.acquire(timeout=timeout)

    def release(self) -> None:
        self._lock.release()

    def __repr__(self) -> str:
        return f"ModelLock({self.name!r}, busy={self.busy})"


def lock_of(model: object) -> ModelLock | None:
    """The model's lock, or None for a protocol implementation without one."""
    lock = getattr(model, "lock", None)
    return lock if isinstance(lock, ModelLock) else None


@contextmanager
def hold(models: Iterable[object], timeout: float | None = None) -> Iterator[None]:
    """Hold the locks of all `models` (each distinct lock once, in a fixed order).

    Raises ``ModelBusyError`` naming the busy model when a lock is not free within
    `timeout` seconds (None waits forever, 0 does not wait).
    """
    locks: dict[int, ModelLock] = {}
    for m in models:
        lock = lock_of(m)
        if lock is not None:
            locks[id(lock)] = lock
    taken: list[ModelLock] = []
    try:
        for key in sorted(locks):  # one global order: two generations never deadlock
            lock = locks[key]
            if not lock.acquire(timeout):
                raise ModelBusyError(
                    f"{lock.name} is busy: another generation is using it. Try again when it ends."
                )
            taken.append(lock)
        yield
    finally:
        for lock in reversed(taken):
            lock.release()
