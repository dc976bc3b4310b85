"""This machine's costs, the one source of every hardware-dependent number the course quotes.

A draft's cost c, the verification cost of γ + 1 rows, a model's step and its floor (weight
bytes ÷ read bandwidth) change from one machine to the next, so no lesson writes them down: it
reads a :class:`MachineProfile`. The *measured* profile (:func:`load`) is this machine's, kept
per machine key in the user's cache folder (never in the repository) and filled by model
loading, in the run service's worker: :func:`record_target` and :func:`record_draft` keep the
step costs every model times at load (``kernel_choice.step_costs``) with the machine's read
bandwidth and compute rate (timed once per machine key, ``models.hf.machine``). Until a model
has loaded here there is none, and a lesson reads the *memory-bound reference*
(:func:`memory_bound`: every cost from weight bytes, what a GPU at batch 1 approaches).
:func:`hardware_references` are the published data-sheet peaks of ``assets/hardware.json``.

Reading a profile loads no torch (a page may call :func:`load`); measuring does.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdec_core.models import user_cache

HARDWARE_FILE = Path(__file__).resolve().parents[2] / "assets" / "hardware.json"
#: Environment variable naming the folder of the profiles (unset: ``<cache>/profile``); tests
#: point it at a folder of their own, so no test reads this machine's profile.
PROFILE_ENV = "SPECDEC_PROFILE_DIR"
#: Target kinds (``models.catalog``) whose costs the course quotes, by their profile name.
MODELS: dict[str, str] = {"bundled": "smollm2", "gemma": "gemma"}
#: Rows of the verification forwards timed at load (γ + 1 for ``kernel_choice.VERIFY_GAMMAS``).
VERIFY_ROWS: tuple[int, ...] = (2, 3, 5, 9, 17)
#: Above this relative difference a page shows the measured and the reference figure side by side.
DIFFERS = 0.15
#: Sources a profile names.
MEASURED = "measured"
MEMORY_BOUND = "memory-bound"

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Hardware:
    """One machine's peaks: read bandwidth (GB/s) and dense compute (GFLOP/s), with their source."""

    key: str
    label: str
    source: str
    bandwidth_gbs: float
    compute_gflops: float


def hardware_references() -> list[Hardware]:
    """The published peaks of ``assets/hardware.json``, each with its citation."""
    return list(_references())


@functools.cache
def _references() -> tuple[Hardware, ...]:
    data = json.loads(HARDWARE_FILE.read_text(encoding="utf-8"))
    return tuple(
        Hardware(
            key=str(h["key"]),
            label=str(h["label"]),
            source=str(h["source"]),
            bandwidth_gbs=float(h["bandwidth_gbs"]),
            compute_gflops=float(h["compute_gflops"]),
        )
        for h in data["hardware"]
    )


def reference(key: str) -> Hardware:
    """The published hardware of `key` ("a100", "h100", "laptop")."""
    for h in hardware_references():
        if h.key == key:
            return h
    raise KeyError(f"no hardware {key!r} in {HARDWARE_FILE.name}")


@dataclass(frozen=True)
class MachineProfile:
    """A machine's costs, per model (``"smollm2"``, ``"gemma"``): a decode step and its floor in
    ms, the verification of r rows in steps (``verify_ratio[model][r]``) and each draft's step in
    target steps (``draft_c[model][draft]``); ``source`` says where they come from ("measured" on
    this machine, or "memory-bound": from weight bytes)."""

    cpu: str
    cores: int
    threads: int
    bandwidth_gbs: float
    compute_gflops: float
    step_ms: dict[str, float] = field(default_factory=dict)
    floor_ms: dict[str, float] = field(default_factory=dict)
    verify_ratio: dict[str, dict[int, float]] = field(default_factory=dict)
    draft_c: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str = MEASURED

    def hardware(self) -> Hardware:
        """This profile's machine as a :class:`Hardware` (its measured, not its published, peaks)."""
        return Hardware(
            key="this",
            label=f"{self.cpu}, {self.cores} cores",
            source=f"{self.source} ({self.threads} threads)",
            bandwidth_gbs=self.bandwidth_gbs,
            compute_gflops=self.compute_gflops,
        )

    def models(self) -> list[str]:
        """The models this profile has a step for."""
        return sorted(self.step_ms)

    def verify_steps(self, model: str, rows: int) -> float:
        """Target steps of a verification of `rows` rows (1 for one row; linear between the rows
        timed, extended at the last segment's slope)."""
        table = self.verify_ratio.get(model, {})
        if rows <= 1 or not table:
            return 1.0
        known = [(1, 1.0), *sorted(table.items())]
        for (r0, v0), (r1, v1) in itertools.pairwise(known):
            if rows <= r1:
                return v0 + (v1 - v0) * (rows - r0) / (r1 - r0)
        (r0, v0), (r1, v1) = known[-2], known[-1]
        return v1 + (v1 - v0) * (rows - r1) / (r1 - r0)

    def as_json(self) -> dict[str, Any]:
        """The flat object ``bench.profile`` prints: ``source``, ``cpu``, ``threads``, the peaks,
        then per model ``<model>_step_ms``, ``_floor_ms``, ``_verify_ratio`` and ``_draft_c``."""
        out: dict[str, Any] = {
            "source": self.source,
            "cpu": self.cpu,
            "cores": self.cores,
            "threads": self.threads,
            "bandwidth_gbs": round(self.bandwidth_gbs, 2),
            "compute_gflops": round(self.compute_gflops, 1),
        }
        for m in self.models():
            out[f"{m}_step_ms"] = round(self.step_ms[m], 2)
            out[f"{m}_floor_ms"] = round(self.floor_ms[m], 2) if m in self.floor_ms else None
            out[f"{m}_verify_ratio"] = {
                str(r): round(v, 3) for r, v in sorted(self.verify_ratio.get(m, {}).items())
            }
            out[f"{m}_draft_c"] = {d: round(c, 3) for d, c in sorted(self.draft_c.get(m, {}).items())}
        return out


def differs(a: float, b: float, tolerance: float = DIFFERS) -> bool:
    """Whether two figures of one quantity differ by more than `tolerance` of the larger."""
    top = max(abs(a), abs(b))
    return top > 0 and abs(a - b) / top > tolerance


# -- the memory-bound reference ------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSize:
    """What a decode step of a model reads: ``params`` weights (a tied head counted once, an
    untied input embedding left out) at ``bytes_per_param`` bytes each, ``layer_params`` of them
    in each of its ``layers`` decoder layers."""

    params: int
    layers: int
    layer_params: int
    bytes_per_param: float = 4.0

    def draft_bytes(self, draft: str, sizes: Mapping[str, ModelSize]) -> float | None:
        """Bytes a step of `draft` reads (a profile's draft name), None for a draft not priced by
        bytes: a bf16 copy half of float32's, ``layerskip:k`` the first k layers and the rest,
        another model of `sizes` its own."""
        if draft == "bf16":
            return self.params * 2.0
        if draft.startswith("layerskip:"):
            k = int(draft.split(":", 1)[1])
            return (self.params - max(self.layers - k, 0) * self.layer_params) * self.bytes_per_param
        other = sizes.get(draft)
        return None if other is None else other.params * other.bytes_per_param


#: The course's two models, from their configurations: the parameters one decode step reads (tied
#: embeddings, so the 49,152 × 576 and 262,144 × 640 heads are read once) and a decoder layer's,
#: in float32 as the engine runs them.
MODEL_SIZES: dict[str, ModelSize] = {
    "smollm2": ModelSize(134_515_008, 30, 3_540_096),
    "gemma": ModelSize(268_098_176, 18, 5_573_632),
}
#: The drafts the memory-bound reference prices, per target.
REFERENCE_DRAFTS: dict[str, tuple[str, ...]] = {
    "smollm2": ("bf16", "layerskip:8", "layerskip:24"),
    "gemma": ("bf16", "layerskip:8", "smollm2"),
}


def memory_bound(hardware: Hardware, sizes: Mapping[str, ModelSize] | None = None) -> MachineProfile:
    """The costs a machine with `hardware`'s peaks would have if every cost were reading weights:
    a step is its floor (weight bytes ÷ bandwidth), r rows cost max(1, the product's 2·params·r
    FLOPs ÷ compute ÷ floor) steps, and a draft's c is its bytes over the target's."""
    sizes = dict(MODEL_SIZES if sizes is None else sizes)
    bw = hardware.bandwidth_gbs * 1e9
    step: dict[str, float] = {}
    verify: dict[str, dict[int, float]] = {}
    drafts: dict[str, dict[str, float]] = {}
    for name, size in sizes.items():
        nbytes = size.params * size.bytes_per_param
        floor_s = nbytes / bw
        step[name] = floor_s * 1e3
        rate = hardware.compute_gflops * 1e9
        verify[name] = {r: max(1.0, 2.0 * size.params * r / rate / floor_s) for r in VERIFY_ROWS}
        costs: dict[str, float] = {}
        for draft in REFERENCE_DRAFTS.get(name, ()):
            read = size.draft_bytes(draft, sizes)
            if read is not None:
                costs[draft] = read / nbytes
        drafts[name] = costs
    return MachineProfile(
        cpu=hardware.label,
        cores=0,
        threads=0,
        bandwidth_gbs=hardware.bandwidth_gbs,
        compute_gflops=hardware.compute_gflops,
        step_ms=step,
        floor_ms=dict(step),
        verify_ratio=verify,
        draft_c=drafts,
        source=MEMORY_BOUND,
    )


# -- this machine's profile, in the user's cache folder -------------------------------------------
def machine_key() -> dict[str, Any]:
    """What this machine's costs depend on, read without torch: the CPU, its cores, and the
    settings that choose the engine's threads and their waiting."""
    env = ("SPECDEC_TORCH_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "SPECDEC_FAST")
    return {
        "cpu": user_cache.cpu_model(),
        "cores": os.cpu_count() or 1,
        **{k.lower(): os.environ.get(k, "") for k in env},
    }


def profile_file() -> Path:
    """This machine key's profile: ``$SPECDEC_PROFILE_DIR`` or ``<user cache>/profile``."""
    folder = os.environ.get(PROFILE_ENV)
    return user_cache.machine_file(
        Path(folder).expanduser() if folder else user_cache.cache_root() / "profile", machine_key()
    )


def _read() -> dict[str, Any]:
    data = user_cache.read_machine_file(profile_file(), machine_key())
    if not isinstance(data.get("models"), dict):
        data["models"] = {}
    return data


def _number(value: object) -> float | None:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
    )


def _profile(data: Mapping[str, Any]) -> MachineProfile | None:
    bandwidth, compute = _number(data.get("bandwidth_gbs")), _number(data.get("compute_gflops"))
    if bandwidth is None or compute is None:
        return None
    step: dict[str, float] = {}
    floor: dict[str, float] = {}
    verify: dict[str, dict[int, float]] = {}
    drafts: dict[str, dict[str, float]] = {}
    for name, entry in data["models"].items():
        ms = _number(entry.get("step_ms")) if isinstance(entry, dict) else None
        if ms is None:
            continue
        step[name] = ms
        nbytes = _number(entry.get("weight_bytes"))
        if nbytes is not None:
            floor[name] = nbytes / (bandwidth * 1e9) * 1e3
        verify[name] = {int(r): float(v) for r, v in dict(entry.get("verify_ratio") or {}).items()}
        drafts[name] = {str(d): float(c) for d, c in dict(entry.get("draft_c") or {}).items()}
    if not step:
        return None
    return MachineProfile(
        cpu=str(data.get("cpu") or data["machine"]["cpu"]),
        cores=int(data.get("cores") or data["machine"]["cores"]),
        threads=int(data.get("threads") or 0),
        bandwidth_gbs=bandwidth,
        compute_gflops=compute,
        step_ms=step,
        floor_ms=floor,
        verify_ratio=verify,
        draft_c=drafts,
        source=MEASURED,
    )


def load() -> MachineProfile | None:
    """This machine's measured profile from the user's cache folder; None when no model of
    :data:`MODELS` has been measured here (reads a file: no torch, no timing)."""
    with _LOCK:
        return _profile(_read())


def save(profile: MachineProfile, weight_bytes: Mapping[str, int] | None = None) -> None:
    """Keep `profile` as this machine key's (``bench.profile`` and the tests' pinned profile);
    a model's floor is kept as its weight bytes (`weight_bytes`, else floor × bandwidth)."""
    data: dict[str, Any] = {
        "machine": machine_key(),
        "cpu": profile.cpu,
        "cores": profile.cores,
        "threads": profile.threads,
        "bandwidth_gbs": profile.bandwidth_gbs,
        "compute_gflops": profile.compute_gflops,
        "models": {},
    }
    for m in profile.models():
        nbytes = (weight_bytes or {}).get(m)
        if nbytes is None and m in profile.floor_ms:
            nbytes = round(profile.floor_ms[m] / 1e3 * profile.bandwidth_gbs * 1e9)
        data["models"][m] = {
            "step_ms": profile.step_ms[m],
            "weight_bytes": nbytes,
            "verify_ratio": {str(r): v for r, v in profile.verify_ratio.get(m, {}).items()},
            "draft_c": dict(profile.draft_c.get(m, {})),
        }
    with _LOCK:
        user_cache.write_machine_file(profile_file(), data)


# -- measuring, at model load (the run service's worker) or from bench.profile --------------------
def _measure_machine(data: dict[str, Any]) -> None:
    """Time the read bandwidth and the compute rate unless this machine key has them (torch)."""
    if _number(data.get("bandwidth_gbs")) is not None and _number(data.get("compute_gflops")) is not None:
        return
    from specdec_core.models.hf import machine

    data["bandwidth_gbs"] = machine.bandwidth_gbs()
    data["compute_gflops"] = machine.compute_gflops()
    data["threads"] = machine.threads()
    data["cpu"], data["cores"] = data["machine"]["cpu"], data["machine"]["cores"]


def target_costs(model: Any) -> dict[str, Any] | None:
    """A loaded target's entry: its step (ms, timed at load), the weight bytes a step reads and
    its verification of each of :data:`VERIFY_ROWS` rows in steps; None for a model not timed
    at load (a Markov chain, a model without a torch module)."""
    step_s = _number(getattr(model, "step_seconds", None))
    module = getattr(model, "module", None)
    if step_s is None or module is None:
        return None
    from specdec_core.models.hf import machine

    steps = getattr(model, "verify_steps", None) or {}
    return {
        "step_ms": step_s * 1e3,
        "weight_bytes": machine.step_bytes(module),
        "verify_ratio": {str(int(g) + 1): float(v) for g, v in steps.items() if int(g) + 1 in VERIFY_ROWS},
    }


def record_target(kind: str, model: Any) -> MachineProfile | None:
    """Keep the loaded target of `kind` in this machine's profile (a kind outside :data:`MODELS`
    or a model not timed at load is left out), timing the machine's peaks the first time;
    returns the profile now kept."""
    name = MODELS.get(kind)
    entry = target_costs(model) if name is not None else None
    with _LOCK:
        data = _read()
        if entry is not None:
            _measure_machine(data)
            old = data["models"].get(name) or {}
            data["models"][name] = {**entry, "draft_c": dict(old.get("draft_c") or {})}
            user_cache.write_machine_file(profile_file(), data)
        return _profile(data)


def draft_name(kind: str, k: int = 0) -> str:
    """How a profile names a draft: its kind, and a layer-skip draft's depth ("layerskip:8")."""
    return f"{kind}:{k}" if kind == "layerskip" else kind


def record_draft(kind: str, target: Any, draft_kind: str, draft: Any, k: int = 0) -> float | None:
    """Keep a loaded draft's c (its step timed at load over its target's) under its target's
    entry; a lookup drafter (c = 0 on every machine) and an untimed draft are left out.
    Returns the c kept, or None."""
    from specdec_core.engine.gamma import measured_cost_ratio

    name = MODELS.get(kind)
    if name is None or hasattr(draft, "propose"):
        return None
    c = measured_cost_ratio(target, draft)
    if c is None:
        return None
    with _LOCK:
        data = _read()
        entry = data["models"].get(name)
        if not isinstance(entry, dict):
            return c  # the target's own entry comes first (record_target)
        entry.setdefault("draft_c", {})[draft_name(draft_kind, k)] = c
        user_cache.write_machine_file(profile_file(), data)
    return c
