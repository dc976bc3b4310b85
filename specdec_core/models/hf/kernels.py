"""Matrix-product kernels for a few CPU rows: the exact candidates, ``RowLinear``, packing.

A decode step multiplies one row by each weight, a verification block 2 … 9 rows, a tree
forward up to about twenty. Which exact kernel is fastest for so few rows depends on the
CPU, the torch build and the threads (the same product can be 2–3× apart on two
machines), so nothing here is chosen by a constant: :mod:`.kernel_choice` times the
candidates of :data:`KERNELS` on each weight when a model loads and keeps the fastest per
row count; :func:`row_kernel` and :func:`row_linear` then look that choice up.
Every candidate computes ``x @ wᵀ (+ bias)``; they differ only in float rounding.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

from specdec_core.models import memory
from specdec_core.models.hf.derived import DerivedCache
from specdec_core.models.hf.library_internals import onednn_linear, onednn_pack

#: A matrix product ``f(x, w, bias=None) = x @ wᵀ (+ bias)`` of 2-D rows.
Product = Callable[..., torch.Tensor]


def _thin_product(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``(w @ xᵀ)ᵀ``: a tall matrix times a thin one (one row taken twice, since a single
    column falls back to the matrix-vector kernel)."""
    rows = x.shape[0]
    if rows == 1:
        x = torch.cat([x, x])
    y = torch.mm(w, x.t())[:, :rows].t().contiguous()
    return y if bias is None else y + bias


def _packed_product(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """oneDNN's linear on a copy of `w` re-laid out once for small batches (:func:`packed_weight`);
    ``F.linear`` where that copy cannot be made."""
    packed = packed_weight(w)
    if packed is None:
        return F.linear(x, w, bias)
    return onednn_linear(x, packed, bias)


def _native_product(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear`` with oneDNN switched off: torch's own bfloat16 kernel (oneDNN re-lays out a
    bfloat16 weight on every call). The switch is process-wide: a bfloat16 product in another
    thread at that moment may take the native kernel too (as exact; last bits may differ)."""
    with _without_onednn():
        return F.linear(x, w, bias)


#: The exact candidates per dtype, by name (``linear`` first: the default where nothing is chosen).
KERNELS: dict[torch.dtype, dict[str, Product]] = {
    torch.float32: {"linear": F.linear, "packed": _packed_product, "thin": _thin_product},
    torch.bfloat16: {"linear": F.linear, "native": _native_product},
}


def candidates(w: torch.Tensor) -> dict[str, Product]:
    """The kernels that can multiply by `w` here (the packed one only where its copy exists)."""
    if w.device.type != "cpu":
        return {"linear": F.linear}
    found = dict(KERNELS.get(w.dtype, {"linear": F.linear}))
    if "packed" in found and packed_weight(w) is None:
        del found["packed"]
    return found


#: The measured choice per weight shape and dtype: entry r of the list names the kernel for
#: r rows (filled by :func:`record`; row counts past its end take ``linear``, as prefills do).
_CHOICES: dict[tuple[tuple[int, ...], torch.dtype], list[str]] = {}


def record(shape: tuple[int, ...], dtype: torch.dtype, by_rows: dict[int, str]) -> None:
    """Keep the kernel chosen for each measured row count; a row count between two measured
    ones takes the choice of the next one measured above it."""
    unknown = {name for name in by_rows.values() if name not in KERNELS.get(dtype, {})}
    if unknown:
        raise ValueError(f"no {dtype} kernel named {sorted(unknown)}.")
    top = max(by_rows)
    table = ["linear"] * (top + 1)
    for r in range(top, 0, -1):
        table[r] = by_rows.get(r, table[r + 1] if r < top else by_rows[top])
    _CHOICES[(tuple(shape), dtype)] = table


def recorded(shape: tuple[int, ...], dtype: torch.dtype) -> dict[int, str] | None:
    """The kernel per row count recorded for a weight of this shape and dtype (None: none yet)."""
    table = _CHOICES.get((tuple(shape), dtype))
    return None if table is None else {r: table[r] for r in range(1, len(table))}


def all_recorded() -> list[tuple[tuple[int, ...], torch.dtype, dict[int, str]]]:
    """(shape, dtype, kernel per row count) of every weight recorded, by dtype then shape."""
    keys = sorted(_CHOICES, key=lambda k: (str(k[1]), k[0]))
    return [(shape, dtype, recorded(shape, dtype) or {}) for shape, dtype in keys]


def forget_choices() -> None:
    """Drop every recorded choice (the next model load measures again)."""
    _CHOICES.clear()


def chosen(w: torch.Tensor, rows: int) -> str:
    """The kernel's name for `rows` rows times `w` (``linear`` where nothing was measured)."""
    table = _CHOICES.get((tuple(w.shape), w.dtype))
    return table[rows] if table is not None and rows < len(table) else "linear"


def _product(rows: int, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    kernels = KERNELS.get(w.dtype)
    return F.linear(x, w, bias) if kernels is None else kernels[chosen(w, rows)](x, w, bias)


@contextlib.contextmanager
def row_kernel(rows: int, dtype: torch.dtype) -> Iterator[Product]:
    """The product ``f(x, w, bias=None)`` for a forward pass of `rows` CPU rows: for each weight,
    the kernel measured fastest for that many rows (:mod:`.kernel_choice`; ``F.linear`` where
    none was measured). `dtype` is the pass's dtype (kept for the lean body's signature)."""
    if dtype not in KERNELS:
        yield F.linear
    else:
        yield functools.partial(_product, rows)


def row_linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, w, bias)`` with the kernel chosen for `w` and this many rows."""
    rows = x.numel() // max(x.shape[-1], 1) if x.dim() else 0
    if rows < 1 or x.device.type != "cpu" or x.dtype != w.dtype or w.dtype not in KERNELS:
        return F.linear(x, w, bias)
    y = _product(rows, x.reshape(rows, x.shape[-1]), w, bias)
    return y.reshape(*x.shape[:-1], w.shape[0])


class RowLinear(torch.nn.Linear):
    """``nn.Linear`` sharing another's weight, multiplying with the kernel chosen for its rows
    (:func:`row_linear`)."""

    #: Rows per head call in ``LogitRows``: verification reads rows left to right and a head
    #: call costs about the same for 1 … 8 rows (it is bound by reading the weight).
    max_rows = 8

    @classmethod
    def sharing(cls, linear: torch.nn.Linear) -> RowLinear:
        """A RowLinear using `linear`'s weight and bias (no copy)."""
        twin = cls.__new__(cls)
        torch.nn.Module.__init__(twin)
        twin.in_features, twin.out_features = linear.in_features, linear.out_features
        twin.register_parameter("weight", linear.weight)
        twin.register_parameter("bias", linear.bias)
        return twin

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return row_linear(x, self.weight, self.bias)


#: Batch size the packed weights are laid out for (verification blocks are 2 … 9 rows).
PACK_BATCH = 4
_PACKED = DerivedCache()


def packed_weight(weight: torch.Tensor) -> torch.Tensor | None:
    """`weight` (float32, CPU) re-laid out by oneDNN for small batches, made once and kept
    while `weight` is unchanged (:mod:`.derived`; twins sharing a weight share it).

    None when this torch build lacks the oneDNN ops (or they fail), or when the copy would
    leave too little memory available (``memory.room_for``; decided once per weight).
    """
    packed = _PACKED.get(weight, (weight,), lambda: _pack(weight))
    return packed if packed is not False else None


def _pack(weight: torch.Tensor) -> torch.Tensor | bool:
    if weight.dtype != torch.float32 or not memory.room_for(weight.numel() * weight.element_size()):
        return False
    with torch.inference_mode():
        packed = onednn_pack(weight, PACK_BATCH)
    return packed if packed is not None else False


_ONEDNN_LOCK = threading.Lock()
#: Callers inside the switch now, and the flag before the first of them entered.
_onednn_users = 0
_onednn_before = True


@contextlib.contextmanager
def _without_onednn() -> Iterator[None]:
    """oneDNN (mkldnn) switched off for the calls inside (process-wide; see ``_native_product``).

    A reference-counted switch under a lock: the first caller in saves the flag and turns
    it off, the last one out restores it, so overlapping calls in several threads never
    leave oneDNN off for the process.
    """
    flags = torch.backends.mkldnn  # the public switch (torch's notes on its oneDNN backend)
    global _onednn_users, _onednn_before
    with _ONEDNN_LOCK:
        if _onednn_users == 0:
            _onednn_before = flags.enabled
            flags.enabled = False
        _onednn_users += 1
    try:
        yield
    finally:
        with _ONEDNN_LOCK:
            _onednn_users -= 1
            if _onednn_users == 0:
                flags.enabled = _onednn_before
