"""Is there room for an optional copy of some weights? (the fast kernels' extra memory)

The packed weights of ``hf.RowLinear`` and the fused ones of ``lean.LeanBody`` are copies
that only buy speed. Loading a big custom model must never fail because of them, so each
copy is made only while the machine keeps ``KEEP_FREE`` of its memory available after it.
"""

from __future__ import annotations

from pathlib import Path

#: Fraction of the machine's memory left available after an optional copy (at least 1 GiB).
KEEP_FREE = 0.2
_MIN_FREE = 1 << 30
_MEMINFO = Path("/proc/meminfo")


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
