"""The fastest exact kernel per weight and row count, measured on the machine that runs it.

When a model loads (:class:`~specdec_core.models.hf.fast.FastForward`), every candidate of
``kernels.KERNELS`` is timed on each of its weights for the row counts the engine asks for
(:data:`BODY_ROWS`: a decode step, each γ + 1 up to 9, the live pages' tree forwards; the
head sees at most ``RowLinear.max_rows`` rows at a time), and the fastest is kept
(``kernels.record``). A sample is one pass over all the model's weights of one shape, as a
forward pass reads them (a single small weight would sit in cache and mislead). Candidates
run interleaved and each keeps its fastest time, so a neighbour's burst slows one sample,
not one candidate; a candidate far behind the leader after two samples is dropped, which
keeps Gemma-3-270M's 672 MB head to a few seconds.

The choice is saved under a key of the machine (CPU model, torch version, threads, OpenMP
wait policy: :func:`machine_key`) in the user's cache folder, one entry per weight shape and
dtype (two models with the same shapes share it), so it is measured once per key. Each
model's step costs (:func:`step_costs`: a decode step's seconds and a verification of γ + 1
tokens in steps) are kept there too: the engine prices a draft and a round with them
(``engine.gamma.draft_cost_ratio``, ``engine.gamma.target_verify_cost``).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from specdec_core.models import user_cache
from specdec_core.models.hf import kernels
from specdec_core.models.user_cache import cpu_model

#: Rows of the body's forward passes: a decode step (1), each verification block γ + 1 up to 9,
#: and the live pages' tree forwards (nodes + 1 for the shapes of ``live.settings.TREE_SHAPES``).
BODY_ROWS: tuple[int, ...] = (*range(1, 10), 7, 11, 15, 16, 21)
#: Rows of the head's calls (``LogitRows`` computes at most ``RowLinear.max_rows`` at a time).
HEAD_ROWS: tuple[int, ...] = tuple(range(1, kernels.RowLinear.max_rows + 1))
#: A candidate slower than this many times the leader after two samples is not timed further.
DROP_BEHIND = 1.5
#: Samples per surviving candidate.
SAMPLES = 3
#: Bytes of same-shape weights one sample passes over at most (enough to leave the core's own
#: caches; a whole model's worth would make the choice take minutes).
PASS_BYTES = 64 * 2**20

_LOCK = threading.Lock()


def machine_key() -> dict[str, Any]:
    """What a kernel's speed depends on besides the weight: CPU, torch, threads, OpenMP's wait."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "gomp_spincount": os.environ.get("GOMP_SPINCOUNT", ""),
    }


def cache_file() -> Path:
    """This machine key's file in the user cache folder (``user_cache.cache_root``)."""
    return user_cache.machine_file(user_cache.cache_root() / "kernels", machine_key())


def _load() -> dict[str, Any]:
    data = user_cache.read_machine_file(cache_file(), machine_key())
    data.setdefault("kernels", {})
    data.setdefault("steps", {})
    return data


def _weight_key(shape: Sequence[int], dtype: torch.dtype) -> str:
    return "x".join(str(int(n)) for n in shape) + "/" + str(dtype).removeprefix("torch.")


def fastest(
    contenders: dict[str, Callable[[], object]], samples: int = SAMPLES
) -> tuple[str, dict[str, float]]:
    """The contender with the smallest time, and each one's best seconds.

    Interleaved (A B C, A B C, …), each keeping its fastest sample; after two samples a
    contender slower than ``DROP_BEHIND`` × the leader is no longer timed.
    """
    if not contenders:
        raise ValueError("fastest needs at least one contender.")
    best = {name: float("inf") for name in contenders}
    alive = list(contenders)
    for round_ in range(max(samples, 2)):
        for name in alive:
            start = time.perf_counter()
            contenders[name]()
            best[name] = min(best[name], time.perf_counter() - start)
        if round_ >= 1 and len(alive) > 1:
            lead = min(best[n] for n in alive)
            alive = [n for n in alive if best[n] <= DROP_BEHIND * lead]
    return min(best, key=best.__getitem__), best


def measure(weights: Sequence[torch.Tensor], rows: Iterable[int], samples: int = SAMPLES) -> dict[int, str]:
    """The fastest candidate for each row count times `weights` (CPU weights of one shape and a
    ``KERNELS`` dtype), each sample one pass over all of them, as a forward pass reads them."""
    first = weights[0]
    size = first.numel() * first.element_size()
    weights = weights[: max(1, PASS_BYTES // max(size, 1))]
    options = kernels.candidates(first)
    if "packed" in options and any(kernels.packed_weight(w) is None for w in weights):
        del options["packed"]
    out: dict[int, str] = {}
    with torch.inference_mode():
        for r in sorted(set(rows)):
            if len(options) == 1:
                out[r] = next(iter(options))
                continue
            x = torch.randn(r, first.shape[1]).to(first.dtype)
            for f in options.values():  # warm-up: oneDNN builds its primitive on first use
                f(x, first)

            def one_pass(f: kernels.Product, x: torch.Tensor = x) -> None:
                for w in weights:
                    f(x, w)

            out[r] = fastest({name: (lambda f=f: one_pass(f)) for name, f in options.items()}, samples)[0]
    return out


def calibrate(weights: Iterable[tuple[torch.Tensor, Sequence[int]]]) -> dict[str, dict[int, str]]:
    """Choose the kernel for each weight shape and dtype at its row counts, measuring (over all
    the given weights of that shape) only what neither this process nor this machine key's
    cache file knows; returns the choices by weight key ("576x576/float32")."""
    groups: dict[tuple[tuple[int, ...], torch.dtype], tuple[list[torch.Tensor], set[int]]] = {}
    for w, rows in weights:
        if w.device.type != "cpu" or w.dtype not in kernels.KERNELS or w.dim() != 2:
            continue
        group = groups.setdefault((tuple(w.shape), w.dtype), ([], set()))
        if all(w is not other for other in group[0]):
            group[0].append(w)
        group[1].update(rows)
    chosen: dict[str, dict[int, str]] = {}
    with _LOCK:
        data = None
        for (shape, dtype), (ws, rows) in groups.items():
            key = _weight_key(shape, dtype)
            have = kernels.recorded(shape, dtype) or {}
            if rows <= set(have):
                chosen[key] = {r: have[r] for r in sorted(rows)}
                continue
            data = data if data is not None else _load()
            saved = {int(r): name for r, name in data["kernels"].get(key, {}).items()}
            missing = sorted(rows - set(saved))
            if missing:
                saved.update(measure(ws, missing))
                data["kernels"][key] = {str(r): name for r, name in sorted(saved.items())}
                user_cache.write_machine_file(cache_file(), data)
            kernels.record(shape, dtype, saved)
            chosen[key] = {r: saved[r] for r in sorted(rows)}
    return chosen


def step_costs(key: str, time_costs: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A model's step costs on this machine (``{"step_s": s, "verify_steps": {γ: steps}}``): saved
    under `key` for this machine key, else `time_costs()` (measured once and saved)."""
    with _LOCK:
        saved = _load()["steps"].get(key)
    if _valid_costs(saved):
        return {
            "step_s": float(saved["step_s"]),
            "verify_steps": {int(g): float(v) for g, v in saved["verify_steps"].items()},
        }
    costs = time_costs()
    with _LOCK:
        data = _load()
        data["steps"][key] = {
            "step_s": costs["step_s"],
            "verify_steps": {str(g): v for g, v in costs["verify_steps"].items()},
        }
        user_cache.write_machine_file(cache_file(), data)
    return costs


def forget_steps() -> None:
    """Drop this machine key's saved step costs (the kernel choice stays), so each model loaded
    next times its step afresh (``bench.profile``)."""
    with _LOCK:
        data = _load()
        data["steps"] = {}
        user_cache.write_machine_file(cache_file(), data)


def _valid_costs(saved: object) -> bool:
    if not isinstance(saved, dict) or not isinstance(saved.get("verify_steps"), dict):
        return False
    step = saved.get("step_s")
    return isinstance(step, int | float) and step > 0


#: γ of the verification forwards timed at load (γ + 1 rows each); others are interpolated.
VERIFY_GAMMAS: tuple[int, ...] = (1, 2, 4, 8, 16)


def medians(calls: dict[Any, Callable[[], object]], repeats: int) -> dict[Any, float]:
    """Median seconds of each call, run interleaved (A B C, A B C, …) after one warm-up each, so
    a burst of load hits them alike."""
    times: dict[Any, list[float]] = {name: [] for name in calls}
    for f in calls.values():
        f()
    for _ in range(repeats):
        for name, f in calls.items():
            start = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def time_costs(
    step: Callable[[], object], verify: Callable[[int], object], repeats: int = 5
) -> dict[str, Any]:
    """Median seconds of `step()` (one decode step) and, for each γ of :data:`VERIFY_GAMMAS`, of
    `verify(γ + 1)` (a forward of γ + 1 tokens, every logit row computed) in steps (:func:`medians`)."""
    got = medians({0: step, **{g: (lambda g=g: verify(g + 1)) for g in VERIFY_GAMMAS}}, repeats)
    return {"step_s": got[0], "verify_steps": {g: round(got[g] / got[0], 4) for g in VERIFY_GAMMAS}}


def summary() -> list[dict[str, str]]:
    """Each weight measured in this process: its shape, dtype and kernel per row count, as runs of
    row counts ("1–4: linear, 5–9: packed")."""
    out = []
    for shape, dtype, by_rows in kernels.all_recorded():
        out.append(
            {
                "weight": "×".join(str(n) for n in shape),
                "dtype": str(dtype).removeprefix("torch."),
                "kernels": runs(by_rows),
            }
        )
    return out


def runs(by_rows: dict[int, str]) -> str:
    """{1: a, 2: a, 3: b} → "1–2: a, 3: b"."""
    parts: list[str] = []
    items = sorted(by_rows.items())
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1][1] == items[i][1] and items[j + 1][0] == items[j][0] + 1:
            j += 1
        lo, hi = items[i][0], items[j][0]
        parts.append(f"{lo}: {items[i][1]}" if lo == hi else f"{lo}–{hi}: {items[i][1]}")
        i = j + 1
    return ", ".join(parts)
