"""Every internal of torch or transformers the model layer reaches, each behind one function.

No other file of ``specdec_core`` reads a private attribute of torch, transformers or accelerate,
or calls a private op. Each function says in a line why there is no public route, and
tests/test_library_internals.py fails loudly when a library release moves what it reaches
(each function also refuses loudly at run time where a silent fallback would do harm).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch


# -- torch: tensors and modules -------------------------------------------------------------------
def version(tensor: torch.Tensor) -> int:
    """`tensor`'s counter of in-place updates; -1 for an inference tensor, which keeps none."""
    # torch has no public read of it, and it is the one record of an in-place edit of a weight
    try:
        return tensor._version
    except RuntimeError:
        return -1


def shallow_twin(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of `module` sharing its parameters, buffers and children, with its own table of
    children: replacing a child of the twin (``setattr``) leaves `module` exactly as it was."""
    # copy.copy shares the table (torch keeps children in the _modules dict), deepcopy the weights
    if not isinstance(vars(module).get("_modules"), dict):
        raise RuntimeError("torch no longer keeps a module's children in _modules: see shallow_twin.")
    twin = copy.copy(module)
    twin._modules = dict(module._modules)
    return twin


def hooked(module: torch.nn.Module) -> bool:
    """True when something besides `module`'s class forward shapes its output: a forward hook or
    pre-hook, or a forward patched on the instance (accelerate's offloading hooks are one)."""
    # torch has no public query of a module's hooks
    return bool(module._forward_hooks or module._forward_pre_hooks) or "forward" in vars(module)


# -- torch: oneDNN's packed linear (kernels.py's "packed" candidate) -----------------------------
def onednn_pack(weight: torch.Tensor, batch: int) -> torch.Tensor | None:
    """`weight` re-laid out by oneDNN for matrix products of about `batch` rows (None when this
    torch build has no oneDNN or refuses the weight)."""
    # torch has no public way to keep a weight in oneDNN's layout between products
    try:
        return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), batch)
    except (AttributeError, RuntimeError):  # pragma: no cover - torch builds without oneDNN
        return None


def onednn_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``x @ wᵀ (+ bias)`` with `packed` = :func:`onednn_pack` of w."""
    # the private op that reads onednn_pack's layout (see onednn_pack)
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")


# -- transformers: GGUF de-quantisation progress -------------------------------------------------
_GGUF_PATCH = threading.Lock()


@contextlib.contextmanager
def gguf_tensor_loop(on_tensor: Callable[[int, int], None]) -> Iterator[None]:
    """While inside, transformers' GGUF loader calls ``on_tensor(i, total)`` before de-quantising
    its i-th tensor of `total` (one load at a time: loads in other threads wait)."""
    # transformers has no progress hook for its de-quantisation loop: the loop's tqdm is swapped
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    original = getattr(gguf_utils, "tqdm", None)
    if original is None:  # progress is not worth failing a load for; the test fails instead
        yield
        return

    def counted(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        total = len(iterable) if hasattr(iterable, "__len__") else 0
        for i, item in enumerate(iterable):
            on_tensor(i, total)
            yield item

    with _GGUF_PATCH:
        gguf_utils.tqdm = counted
        try:
            yield
        finally:
            gguf_utils.tqdm = original
