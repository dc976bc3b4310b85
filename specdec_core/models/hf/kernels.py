"""Matrix-product kernels for a few CPU rows: ``RowLinear``, the per-pass kernel choice, packing.

torch's CPU ``F.linear`` is slow for the 1 … 8 rows of a decode step or a verification
block; :class:`RowLinear` (and :func:`row_kernel`, which the lean body takes once per
forward pass) pick an exact kernel that is faster for them. Same maths, other rounding.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

from specdec_core.models import memory
from specdec_core.models.hf.derived import DerivedCache


class RowLinear(torch.nn.Linear):
    """``nn.Linear`` sharing another's weight, with faster CPU kernels for a few rows.

    Same maths, other matmul kernels (results differ only by float rounding):

    * float32, 1 or 2 rows: ``(W @ xᵀ)ᵀ``. torch's CPU ``F.linear`` (``x @ Wᵀ``) runs a
      slow small-M path, while a tall matrix times a thin one runs an efficient gemm; one
      row is duplicated into two, since a single column falls back to the slow
      matrix-vector kernel.
    * float32, 3 rows or more (verification blocks, prefills): oneDNN's linear on a copy of
      the weight re-laid out once for small batches (:func:`packed_weight`, made on first
      use and kept while the weight is unchanged, so twins sharing a weight share it; it
      costs the weight's size in memory once more). Without these oneDNN ops: ``W @ xᵀ``
      up to ``max_rows`` rows, ``F.linear`` above.
    * bfloat16, one or two rows: torch's native kernel instead of oneDNN's, which re-lays
      out the weight on every call (from 3 rows on oneDNN is as fast). Two rows
      are a draft's usual first step of a round: the last draft and the bonus token.
      oneDNN is switched off only around that call, but the switch is process-wide: a
      bf16 matmul in another thread at that moment may take the native kernel too (an
      exact bf16 matmul as well; last-bit rounding may differ).
    * anything else (bfloat16 blocks of 3 rows or more, other dtypes or devices): ``F.linear``.
    """

    #: Largest block of float32 rows computed as ``W @ xᵀ`` (without the packed weight), and
    #: the rows per head call in ``LogitRows``.
    max_rows = 8
    #: Smallest block of float32 rows given to oneDNN's linear on the packed weight.
    min_packed_rows = 3
    #: Largest block of bfloat16 rows given to torch's native kernel.
    max_native_bf16_rows = 2

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


def row_linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, w, bias)`` with :class:`RowLinear`'s kernels (see there)."""
    rows = x.numel() // max(x.shape[-1], 1) if x.dim() else 0
    if rows < 1 or x.device.type != "cpu" or x.dtype != w.dtype:
        return F.linear(x, w, bias)
    with row_kernel(rows, w.dtype) as product:
        y = product(x.reshape(rows, x.shape[-1]), w, bias)
    return y.reshape(*x.shape[:-1], w.shape[0])


def _thin_product(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``x @ wᵀ (+ bias)`` for a few float32 rows (n, in) as ``(w @ xᵀ)ᵀ`` (one row taken twice)."""
    rows = x.shape[0]
    if rows == 1:
        x = torch.cat([x, x])
    y = torch.mm(w, x.t())[:, :rows].t().contiguous()
    return y if bias is None else y + bias


def _block_product(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``x @ wᵀ (+ bias)`` for a block of float32 rows: oneDNN on the packed weight, or without
    it ``W @ xᵀ`` up to ``RowLinear.max_rows`` rows and ``F.linear`` above."""
    packed = packed_weight(w)
    if packed is not None:
        return torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")
    if x.shape[0] > RowLinear.max_rows:
        return F.linear(x, w, bias)
    return _thin_product(x, w, bias)


#: A matrix product ``f(x, w, bias=None) = x @ wᵀ (+ bias)`` of 2-D rows.
Product = Callable[..., torch.Tensor]


@contextlib.contextmanager
def row_kernel(rows: int, dtype: torch.dtype) -> Iterator[Product]:
    """The product ``f(x, w, bias=None)`` of :class:`RowLinear`'s kernels for `rows` CPU rows of
    `dtype` (the one place that choice is made; :func:`row_linear` uses it per call).

    The lean body takes it once for a whole forward pass, so the choice (and the oneDNN
    switch of the bfloat16 case) is made once instead of in every product. The switch then lasts the whole
    forward pass; like ``RowLinear``'s, it is process-wide (a product in another thread
    meanwhile may take another exact kernel; last-bit rounding may differ).
    """
    if dtype == torch.bfloat16 and rows <= RowLinear.max_native_bf16_rows:
        with _without_onednn():
            yield F.linear
    elif dtype == torch.float32:
        yield _thin_product if rows < RowLinear.min_packed_rows else _block_product
    else:
        yield F.linear


#: Batch size the packed weights are laid out for (verification blocks are 3 … 8 rows).
PACK_BATCH = 4
_PACKED = DerivedCache()


def packed_weight(weight: torch.Tensor) -> torch.Tensor | None:
    """`weight` (float32, CPU) re-laid out by oneDNN for small batches, made once and kept
    while `weight` is unchanged (:mod:`.derived`; twins sharing a weight share it).

    None when this torch build lacks the oneDNN ops (or they fail), or when the copy would
    leave too little memory available (``memory.room_for``; decided once per weight);
    callers then use their other kernel.
    """
    packed = _PACKED.get(weight, (weight,), lambda: _pack(weight))
    return packed if packed is not False else None


def _pack(weight: torch.Tensor) -> torch.Tensor | bool:
    if not memory.room_for(weight.numel() * weight.element_size()):
        return False
    try:
        with torch.inference_mode():
            return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACK_BATCH)
    except (AttributeError, RuntimeError):  # pragma: no cover - torch builds without oneDNN
        return False


_ONEDNN_LOCK = threading.Lock()
#: Callers inside the switch now, and the flag before the first of them entered.
_onednn_users = 0
_onednn_before = True


@contextlib.contextmanager
def _without_onednn() -> Iterator[None]:
    """oneDNN (mkldnn) switched off for the calls inside (process-wide; see ``RowLinear``).

    A reference-counted switch under a lock: the first caller in saves the flag and turns
    it off, the last one out restores it, so overlapping runs in several threads never
    leave oneDNN off for the process.
    """
    get = getattr(torch._C, "_get_mkldnn_enabled", None)
    set_ = getattr(torch._C, "_set_mkldnn_enabled", None)
    if get is None or set_ is None:  # pragma: no cover - other torch builds
        yield
        return
    global _onednn_users, _onednn_before
    with _ONEDNN_LOCK:
        if _onednn_users == 0:
            _onednn_before = get()
            set_(False)
        _onednn_users += 1
    try:
        yield
    finally:
        with _ONEDNN_LOCK:
            _onednn_users -= 1
            if _onednn_users == 0:
                set_(_onednn_before)
