"""Is there room for an optional copy of some weights? (the fast kernels' extra memory)
How much memory does this process hold? (shown beside the loaded models) And which loaded
models go first when a shared server holds too many? (:func:`lru_evictions`)

The packed weights of ``hf.kernels.RowLinear`` and the fused ones of ``hf.lean.LeanBody`` are copies
that only buy speed. Loading a big custom model must never fail because of them, so each
copy is made only while the machine keeps ``KEEP_FREE`` of its memory available after it.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Collection, Hashable, Mapping, Sequence
from pathlib import Path

#: Fraction of the machine's memory left available after an optional copy (at least 1 GiB).
KEEP_FREE = 0.2
_MIN_FREE = 1 << 30
_MEMINFO = Path("/proc/meminfo")
_STATUS = Path("/proc/self/status")


def available_bytes() -> tuple[int, int] | None:
    """(available, total) bytes of memory from /proc/meminfo; None where it cannot be read."""
    try:
        fields = dict(line.split(":", 1) for line in _MEMINFO.read_text().splitlines() if ":" in line)
        kib = {k: int(v.split()[0]) for k, v in fields.items() if k in ("MemAvailable", "MemTotal")}
        return kib["MemAvailable"] * 1024, kib["MemTotal"] * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def room_for(nbytes: int) -> bool:
    """True when `nbytes` more still leave max(1 GiB, KEEP_FREE of all memory) available.

    Where the memory cannot be read (not Linux), True: the copies are then always made.
    """
    got = available_bytes()
    if got is None:
        return True
    available, total = got
    return available - nbytes >= max(_MIN_FREE, KEEP_FREE * total)


def process_bytes() -> int | None:
    """Resident memory of this process (VmRSS in /proc/self/status); None where unreadable."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def collect_all(freeze: bool) -> None:
    """One full collection that sees frozen objects too (``gc.unfreeze`` first: a released
    model's reference cycles, frozen with it when it loaded, would otherwise never be freed);
    with `freeze`, what survives is frozen out of the collector's view again (``gc.freeze``)."""
    gc.unfreeze()
    gc.collect()
    if freeze:
        gc.freeze()


def return_freed_memory() -> bool:
    """Collect garbage and hand freed heap memory back to the system (glibc's malloc_trim).

    Without the trim, glibc keeps most of a released model's small allocations for later
    use, so the process would not shrink after an unload. True when the trim ran (Linux
    with glibc). The collection sees frozen objects too (:func:`collect_all`), and a process
    that froze some (as the app does after each load) has them frozen again.
    """
    collect_all(freeze=gc.get_freeze_count() > 0)
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def lru_evictions(
    order: Sequence[Hashable],
    limit: int | None,
    held: Collection[Hashable] = (),
    parents: Mapping[Hashable, Hashable] | None = None,
) -> list[Hashable]:
    """The keys to unload so that at most `limit` models stay: least recently used first.

    `order` lists the loaded keys, least recently used first. A key in `held` (a run holds
    it, or the teacher pinned it) is never chosen, nor is the parent of a kept key (a draft
    built from a target keeps that target's weights alive anyway); unloading a parent takes
    its children (`parents` maps a child to its parent) with it. When too much is held to
    reach `limit`, as much as may go goes and the rest waits for a later call. None: no bound.
    """
    if limit is None:
        return []
    parents = dict(parents or {})
    children: dict[Hashable, list[Hashable]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)

    def family(key: Hashable) -> list[Hashable]:
        out, todo = [], [key]
        while todo:
            k = todo.pop(0)
            if k in live and k not in out:
                out.append(k)
                todo += children.get(k, [])
        return out

    live = list(order)
    evicted: list[Hashable] = []
    for key in list(order):
        if len(live) <= max(int(limit), 0):
            break
        if key not in live:
            continue
        group = family(key)
        if any(k in held for k in group):
            continue
        for k in group:
            live.remove(k)
        evicted += group
    return evicted
