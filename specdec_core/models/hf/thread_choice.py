"""The engine's thread count, chosen by measurement the first time a model loads, like the kernels.

A decode step of a small model is hundreds of small matrix products, and each one wakes every
thread of torch's pool and waits for the slowest: on cores shared with other work (a browser, a
web server, other users' jobs) fewer threads can be faster than one per core. So unless
``SPECDEC_TORCH_THREADS`` names a count, the first model to load in a process times a pass of
one-row products over a decode step's worth of weights (a fixed set, so every model and machine
times the same work) at each candidate count, interleaved, keeps each count's fastest pass, and
runs the engine at the fastest count (a count within :data:`TIE` of a smaller one loses to it).
The choice is saved per machine key (CPU, cores, torch, OpenMP's wait) in the user's cache
folder, so it is measured once; :func:`last` tells what was chosen and how each count did.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from specdec_core.models.hf import kernel_choice
from specdec_core.models.hf.loading import THREADS_ENV, configure_torch_threads, threads_configured
from specdec_core.models.user_cache import cache_root

#: The pass timed at each count: one row through this many weights of this shape (float32), a
#: decode step of SmolLM2-135M's size (its 30 layers' MLP matrices are 576 × 1536).
WEIGHTS, SHAPE = 60, (1536, 576)
#: Passes per count, interleaved across the counts; each count keeps its fastest.
SAMPLES = 7
#: A count must beat every smaller one by this share to be chosen.
TIE = 0.05

_last: dict[str, Any] | None = None


def candidates(most: int) -> list[int]:
    """1, 2, 4, … below `most`, and `most` (torch's default: one per core)."""
    out, n = [], 1
    while n < most:
        out.append(n)
        n *= 2
    return [*out, max(most, 1)]


def machine() -> dict[str, Any]:
    """What the choice depends on: the CPU, its cores, torch, and OpenMP's waiting."""
    key = kernel_choice.machine_key()
    key.pop("threads")
    return key


def cache_file() -> Path:
    """This machine's choice in the user cache folder."""
    digest = hashlib.sha1(json.dumps(machine(), sort_keys=True).encode()).hexdigest()[:16]
    return cache_root() / "threads" / f"{digest}.json"


def measure(counts: list[int], samples: int = SAMPLES) -> dict[int, float]:
    """The fastest pass (ms) at each thread count (torch's count is restored afterwards)."""
    before = torch.get_num_threads()
    gen = torch.Generator().manual_seed(0)
    weights = [torch.randn(SHAPE, generator=gen) for _ in range(WEIGHTS)]
    x = torch.randn(1, SHAPE[1], generator=gen)
    best = {n: float("inf") for n in counts}
    try:
        with torch.inference_mode():
            for _ in range(samples + 1):  # the first pass warms the pool and the pages
                for n in counts:
                    torch.set_num_threads(n)
                    start = time.perf_counter()
                    for w in weights:
                        torch.nn.functional.linear(x, w)
                    best[n] = min(best[n], (time.perf_counter() - start) * 1e3)
    finally:
        torch.set_num_threads(before)
    return best


def pick(timings: dict[int, float], tie: float = TIE) -> int:
    """The fastest count; a larger count must beat the best smaller one by more than `tie`."""
    chosen = min(timings)
    for n in sorted(timings):
        if timings[n] < timings[chosen] * (1 - tie):
            chosen = n
    return chosen


def choose() -> int:
    """The engine's thread count for this process, set once: ``SPECDEC_TORCH_THREADS`` when set,
    else this machine's saved choice, else measured now and saved."""
    global _last
    if threads_configured() or os.environ.get(THREADS_ENV, "").strip():
        return configure_torch_threads()
    try:
        saved = json.loads(cache_file().read_text())
    except (OSError, ValueError):
        saved = None
    if not (
        isinstance(saved, dict)
        and saved.get("machine") == machine()
        and isinstance(saved.get("threads"), int)
    ):
        timings = measure(candidates(torch.get_num_threads()))
        saved = {
            "machine": machine(),
            "threads": pick(timings),
            "timings_ms": {str(n): t for n, t in timings.items()},
        }
        try:
            cache_file().parent.mkdir(parents=True, exist_ok=True)
            cache_file().write_text(json.dumps(saved, indent=1))
        except OSError:  # a read-only home: measured again next time
            pass
    _last = saved
    return configure_torch_threads(int(saved["threads"]))


def last() -> dict[str, Any] | None:
    """This process's choice: ``threads`` and each count's fastest pass (``timings_ms``), or None
    when no model has loaded or the environment named the count."""
    return _last
