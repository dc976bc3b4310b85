"""The roofline lesson: when does speculation pay, on given hardware, at a batch and context?

A forward pass of a model over ``batch`` sequences, ``tokens`` new positions each, after
``context`` positions already in the KV cache, moves ``bytes`` (every weight once, plus every
sequence's cache) and does ``flops`` (2 per weight per token, plus attention's 4 per layer,
hidden unit and cached position per token). Its time is the larger of bytes ÷ bandwidth and
FLOPs ÷ compute: the roofline, with memory traffic and arithmetic overlapping perfectly, both
at the hardware's peak, and nothing else (kernel launches, activations, communication) costing
time. Its arithmetic intensity is FLOPs ÷ bytes; the ridge, compute ÷ bandwidth, is where a
pass turns from memory-bound to compute-bound.

A speculative round costs γ draft steps and one target pass over γ + 1 tokens per sequence;
it commits ``theory.expected_tokens(α, γ)`` tokens per sequence on average. Speedup over plain
decoding is tokens per second of the round over those of one plain step, so at batch 1 it is
``theory.speedup(α, γ, c, verify_cost)`` with c and the verification cost measured in plain
steps (tested). Every number is float64; hardware figures come from the caller, never from
this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specdec_core.theory import expected_tokens


@dataclass(frozen=True)
class Architecture:
    """A decoder's size as the roofline needs it: parameters, layers, hidden width, and the
    width of one position's keys (= of its values) over all KV heads."""

    key: str
    params: float
    layers: int
    hidden: int
    kv_dim: int

    def weight_bytes(self, bytes_per_param: float) -> float:
        return self.params * bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """Bytes one position adds to the KV cache: keys and values of every layer, 16-bit."""
        return 2.0 * self.layers * self.kv_dim * KV_BYTES


#: Published configurations (the models' config.json files).
MODELS: dict[str, Architecture] = {
    "smollm2_135m": Architecture("smollm2_135m", 134.5e6, 30, 576, 192),
    "llama_1b": Architecture("llama_1b", 1.24e9, 16, 2048, 512),
    "llama_8b": Architecture("llama_8b", 8.03e9, 32, 4096, 1024),
    "llama_70b": Architecture("llama_70b", 70.6e9, 80, 8192, 1024),
}
#: Bytes per weight of each precision.
PRECISIONS: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "int8": 1.0, "int4": 0.5}
#: Bytes per cached key or value entry (a 16-bit KV cache at every weight precision).
KV_BYTES = 2.0


@dataclass(frozen=True)
class Machine:
    """Peak memory bandwidth (GB/s) and peak compute (GFLOP/s) of one device."""

    bandwidth_gbs: float
    compute_gflops: float

    def __post_init__(self) -> None:
        for name in ("bandwidth_gbs", "compute_gflops"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}.")

    @property
    def ridge(self) -> float:
        """FLOPs per byte at which compute catches up with memory."""
        return self.compute_gflops / self.bandwidth_gbs


@dataclass(frozen=True)
class Pass:
    """One forward pass: bytes moved (weights and KV cache), FLOPs, and the roofline's time."""

    weight_bytes: float
    kv_bytes: float
    flops: float
    memory_s: float
    compute_s: float

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.kv_bytes

    @property
    def seconds(self) -> float:
        return max(self.memory_s, self.compute_s)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOPs per byte moved."""
        return self.flops / self.bytes

    @property
    def memory_bound(self) -> bool:
        return self.memory_s >= self.compute_s


def _check(batch: int, tokens: int, context: int) -> None:
    if batch < 1 or tokens < 1 or context < 0:
        raise ValueError(f"batch and tokens must be ≥ 1 and context ≥ 0, got {batch}, {tokens}, {context}.")


def pass_parts(
    model: Architecture,
    bytes_per_param: float,
    machine: Machine,
    batch: np.ndarray | float,
    tokens: np.ndarray | float,
    context: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, flops, seconds) of passes over `batch` sequences × `tokens` new positions after
    `context` cached ones; arrays broadcast (float64)."""
    b = np.asarray(batch, dtype=np.float64)
    n = np.asarray(tokens, dtype=np.float64)
    moved = model.weight_bytes(bytes_per_param) + b * context * model.kv_bytes_per_token
    flops = b * n * (2.0 * model.params + 4.0 * model.layers * model.hidden * context)
    seconds = np.maximum(moved / (machine.bandwidth_gbs * 1e9), flops / (machine.compute_gflops * 1e9))
    return moved, flops, seconds


def forward(
    model: Architecture, bytes_per_param: float, machine: Machine, batch: int, tokens: int, context: int
) -> Pass:
    """One pass of `model` over `batch` sequences × `tokens` new positions after `context` cached ones."""
    _check(batch, tokens, context)
    weights = model.weight_bytes(bytes_per_param)
    kv = float(batch) * context * model.kv_bytes_per_token
    flops = float(batch) * tokens * (2.0 * model.params + 4.0 * model.layers * model.hidden * context)
    return Pass(
        weights,
        kv,
        flops,
        (weights + kv) / (machine.bandwidth_gbs * 1e9),
        flops / (machine.compute_gflops * 1e9),
    )


@dataclass(frozen=True)
class Setup:
    """Everything the lesson's controls set."""

    machine: Machine
    target: Architecture
    draft: Architecture
    bytes_per_param: float
    batch: int
    context: int
    gamma: int
    alpha: float


@dataclass(frozen=True)
class Verdict:
    """A setup's three passes and what they predict.

    ``cost_ratio`` (c) and ``verify_cost`` are the draft step and the verification pass in
    plain target steps; ``tokens`` the expected tokens per sequence and round; ``speedup`` the
    round's tokens per second over plain decoding's.
    """

    plain: Pass
    verify: Pass
    draft: Pass
    tokens: float
    round_s: float
    speedup: float

    @property
    def cost_ratio(self) -> float:
        return self.draft.seconds / self.plain.seconds

    @property
    def verify_cost(self) -> float:
        return self.verify.seconds / self.plain.seconds


def evaluate(setup: Setup) -> Verdict:
    """The plain step, the verification pass, the draft step and the predicted speedup."""
    if setup.gamma < 1:
        raise ValueError(f"γ must be ≥ 1, got {setup.gamma}.")
    m, bpp, b, ctx = setup.machine, setup.bytes_per_param, setup.batch, setup.context
    plain = forward(setup.target, bpp, m, b, 1, ctx)
    verify = forward(setup.target, bpp, m, b, setup.gamma + 1, ctx)
    draft = forward(setup.draft, bpp, m, b, 1, ctx)
    tokens = float(expected_tokens(setup.alpha, setup.gamma))
    round_s = setup.gamma * draft.seconds + verify.seconds
    return Verdict(plain, verify, draft, tokens, round_s, tokens * plain.seconds / round_s)


def speedup_by_batch(setup: Setup, batches: np.ndarray, context: int | None = None) -> np.ndarray:
    """The predicted speedup at each batch size (`context`: another context length than the setup's)."""
    b = np.asarray(batches, dtype=np.float64)
    if b.size and b.min() < 1:
        raise ValueError("batch sizes must be ≥ 1.")
    ctx = setup.context if context is None else context
    m, bpp, g = setup.machine, setup.bytes_per_param, setup.gamma
    plain = pass_parts(setup.target, bpp, m, b, 1, ctx)[2]
    verify = pass_parts(setup.target, bpp, m, b, g + 1, ctx)[2]
    draft = pass_parts(setup.draft, bpp, m, b, 1, ctx)[2]
    return float(expected_tokens(setup.alpha, g)) * plain / (g * draft + verify)


def break_even_batch(setup: Setup, max_batch: int, context: int | None = None) -> int | None:
    """The smallest batch (1 … `max_batch`) at which speculation no longer pays (speedup < 1),
    or None when it pays at every batch up to `max_batch`."""
    batches = np.arange(1, max_batch + 1)
    losing = np.flatnonzero(speedup_by_batch(setup, batches, context) < 1.0)
    return int(batches[losing[0]]) if losing.size else None


def kv_share(setup: Setup) -> float:
    """The share of the plain step's bytes that are the KV cache (the rest are weights)."""
    step = forward(setup.target, setup.bytes_per_param, setup.machine, setup.batch, 1, setup.context)
    return step.kv_bytes / step.bytes


def curve_tokens(setup: Setup) -> int:
    """How far the roofline figure runs in tokens per sequence: four times past both the ridge
    (one sequence's tokens there are about the ridge's FLOPs per byte) and the verification pass."""
    return 4 * max(setup.gamma + 1, int(setup.machine.ridge) + 1)


def roofline_curve(
    model: Architecture,
    bytes_per_param: float,
    machine: Machine,
    batch: int,
    context: int,
    max_tokens: int,
    points: int = 120,
) -> tuple[np.ndarray, np.ndarray]:
    """(arithmetic intensity, seconds) of `model`'s pass over `batch` sequences as the new tokens
    per sequence grow from 1 to `max_tokens` (a log grid): the bytes stay, the FLOPs grow, so
    the time is flat while memory-bound and rises past the ridge. A plain step (1 token) and a
    verification pass (γ + 1) of the same batch lie on it."""
    _check(batch, 1, context)
    tokens = np.unique(np.round(np.geomspace(1, max(max_tokens, 2), points)))
    moved, flops, seconds = pass_parts(model, bytes_per_param, machine, float(batch), tokens, context)
    return flops / moved, seconds
