"""Drafts built from a target: its first k layers, or a lower-precision copy; pair checks.

* ``LayerSkipDraft(target, k)`` — self-speculation: the target's first k decoder layers,
  then its final norm and LM head, all weights shared (no extra memory).
* ``precision_copy(target, "bfloat16")`` — the same network run in bf16: a cheap draft
  whose q is very close to p.
* ``check_compatible(target, draft)`` — a pair must share one vocabulary, token for token;
  otherwise ``TokenizerMismatchError`` says what differs.
"""

from __future__ import annotations

import copy

import torch

from specdec_core.models.compat import TokenizerMismatchError, check_compatible
from specdec_core.models.hf import HFCausalLM, resolve_dtype
from specdec_core.models.hf.library_internals import shallow_twin

__all__ = ["LayerSkipDraft", "TokenizerMismatchError", "check_compatible", "precision_copy"]


def _decoder_stack(module: torch.nn.Module) -> tuple[torch.nn.Module, str]:
    """The inner model holding the decoder layers and the attribute name of their ModuleList."""
    inner = getattr(module, "model", None) or getattr(module, "transformer", None)
    for name in ("layers", "h"):
        stack = getattr(inner, name, None)
        if isinstance(stack, torch.nn.ModuleList):
            return inner, name
    raise ValueError(
        f"{type(module).__name__} does not expose its decoder layers as model.layers or "
        "transformer.h; a layer-skip draft cannot be built from it."
    )


class LayerSkipDraft(HFCausalLM):
    """The target's first `k` layers + final norm + LM head (weights shared, not copied).

    Shares the target's tokenizer (both run the same weights).
    """

    def __init__(self, target: HFCausalLM, k: int) -> None:
        total = target.num_layers
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= total:
            raise ValueError(f"k must be a whole number of layers between 1 and {total}, got {k!r}.")
        outer = shallow_twin(target.module)  # cutting its layers leaves the target whole
        inner_name = "model" if getattr(target.module, "model", None) is not None else "transformer"
        inner, stack_name = _decoder_stack(target.module)
        inner = shallow_twin(inner)
        setattr(inner, stack_name, torch.nn.ModuleList(list(getattr(inner, stack_name))[:k]))
        config = copy.deepcopy(target.module.config)
        config.num_hidden_layers = k
        if isinstance(getattr(config, "layer_types", None), list):
            config.layer_types = config.layer_types[:k]
        if hasattr(config, "n_layer"):
            config.n_layer = k
        inner.config = config
        outer.config = config
        setattr(outer, inner_name, inner)
        self.target = target
        self.k = k
        super().__init__(
            outer,
            target.tokenizer,
            name=f"{target.name} · first {k} of {total} layers",
            source=target.source,
            fast=target.fast is not None,
        )


def precision_copy(target: HFCausalLM, dtype: str | torch.dtype = "bfloat16") -> HFCausalLM:
    """The target's network in another precision (a real bf16/fp16 copy of the weights)."""
    torch_dtype = resolve_dtype(dtype)
    module = copy.deepcopy(target.module).to(torch_dtype)
    short = str(torch_dtype).removeprefix("torch.").replace("bfloat16", "bf16").replace("float16", "fp16")
    name = f"{target.name} ({short})"
    return HFCausalLM(module, target.tokenizer, name=name, source=target.source, fast=target.fast is not None)
