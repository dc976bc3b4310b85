"""Weights derived from a model's parameters (packed, fused copies), keyed on what they came from.

A derived copy is kept per owner tensor together with the fingerprint of its sources:
dtype, device, storage address and version counter of each. ``module.to(dtype)`` in place
keeps the Parameter objects but gives them new storage; an in-place update bumps their
version. Either way the fingerprint no longer matches and the copy is made again, so a
converted or edited model never runs on stale weights. Nothing is stored on the
parameters themselves; an entry goes when its owner is garbage-collected.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from specdec_core.models.hf.library_internals import version

T = TypeVar("T")
Fingerprint = tuple[tuple[torch.dtype, torch.device, int, int], ...]


def fingerprint(sources: Sequence[torch.Tensor | None]) -> Fingerprint:
    """What a derived copy depends on: (dtype, device, storage address, version) per source."""
    return tuple([_key(s) for s in sources if s is not None])


def _key(s: torch.Tensor) -> tuple[torch.dtype, torch.device, int, int]:
    return s.dtype, s.device, s.data_ptr(), version(s)


class DerivedCache:
    """Copies derived from tensors, one per owner tensor, valid while their sources are unchanged."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a forgotten owner may be collected while it is held
        self._entries: dict[int, tuple[weakref.ref, Fingerprint, object]] = {}

    def peek(self, owner: torch.Tensor, sources: Sequence[torch.Tensor | None]) -> object | None:
        """The valid copy for `owner`, or None."""
        entry = self._entries.get(id(owner))  # one dict read: atomic, no lock needed
        if entry is None or entry[0]() is not owner or entry[1] != fingerprint(sources):
            return None
        return entry[2]

    def get(self, owner: torch.Tensor, sources: Sequence[torch.Tensor | None], make: Callable[[], T]) -> T:
        """The copy for `owner` made by `make()` from `sources`, made again when they changed."""
        got = self.peek(owner, sources)
        if got is not None:
            return got  # type: ignore[return-value]
        value = make()
        key = id(owner)

        def forget(_ref: weakref.ref, key: int = key) -> None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and entry[0] is _ref:
                    del self._entries[key]

        with self._lock:
            self._entries[key] = (weakref.ref(owner, forget), fingerprint(sources), value)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
