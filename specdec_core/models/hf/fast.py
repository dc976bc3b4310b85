"""The fast forward of plain-head models: a lean body and the head run apart, logit rows
computed on demand.

For causal-LM classes whose logits are exactly ``lm_head(hidden)`` (see :func:`plain_head`)
and whose layers a lean body computes (:class:`~specdec_core.models.hf.lean.LeanBody` for
Llama, Qwen2 and Mistral on CPU, :class:`~specdec_core.models.hf.lean_gemma.GemmaLeanBody` for
Gemma 3), a session runs that body and the head itself, the head as a
:class:`~specdec_core.models.hf.kernels.RowLinear` sharing the module's weight.
:class:`LogitRows` holds the body's output and computes head rows only when verification
reads them. Every other model runs its own forward (``HFCausalLM.fast`` is None).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from specdec_core.models import memory
from specdec_core.models.hf import kernel_choice
from specdec_core.models.hf.kernels import RowLinear, row_kernel
from specdec_core.models.hf.lean import LEAN_CLASSES, LeanBody, LeanCache, fused_bytes, lean_eligible
from specdec_core.models.hf.lean_gemma import GemmaLeanBody, fused_bytes_gemma, gemma_lean_eligible
from specdec_core.models.hf.library_internals import hooked

# -- the fast head ---------------------------------------------------------------------------------
#: The causal-LM classes a lean body serves, whose logits are exactly
#: ``lm_head(model(...).last_hidden_state)``.
PLAIN_HEAD_CLASSES = frozenset({*LEAN_CLASSES, "Gemma3ForCausalLM"})
#: Config fields that scale or cap the logits in some families (Gemma, Cohere, Granite, …):
#: present on a model's config → its own forward is used.
LOGIT_CONFIG_FIELDS = (
    "final_logit_softcapping",
    "logit_softcapping",
    "logit_scale",
    "logits_scaling",
    "output_multiplier_scale",
    "lm_head_multiplier",
)


def plain_head(module: torch.nn.Module) -> torch.nn.Linear | None:
    """The LM head when `module`'s logits are exactly ``lm_head(model(...)[0])``, else None.

    Only the transformers classes of ``PLAIN_HEAD_CLASSES`` qualify (not subclasses, not
    patched forwards), with a bias-free ``nn.Linear`` head, no hooks (offloading) and no
    logit-scaling field in the config.
    """
    cls = type(module)
    if cls.__name__ not in PLAIN_HEAD_CLASSES or not cls.__module__.startswith("transformers.models."):
        return None
    head, body = getattr(module, "lm_head", None), getattr(module, "model", None)
    if type(head) is not torch.nn.Linear or head.bias is not None or not isinstance(body, torch.nn.Module):
        return None
    if hooked(module) or hooked(head):
        return None
    config = getattr(module, "config", None)
    if any(getattr(config, name, None) is not None for name in LOGIT_CONFIG_FIELDS):
        return None
    return head


def lean_body(module: torch.nn.Module) -> LeanBody | GemmaLeanBody | None:
    """The lean body that computes `module`'s body, None when none does or when its fused
    weights would leave too little memory available (``memory.room_for``)."""
    if lean_eligible(module) and memory.room_for(fused_bytes(module)):
        return LeanBody(module, row_kernel)
    if gemma_lean_eligible(module) and memory.room_for(fused_bytes_gemma(module)):
        return GemmaLeanBody(module, row_kernel)
    return None


class FastForward:
    """A plain-head model's lean body (:func:`lean_body`) and its head as a ``RowLinear``.

    ``body(ids, cache)`` gives the final hidden states; ``head(hidden)`` their logits;
    ``new_cache()`` the ``LeanCache`` a session passes to ``body``.
    """

    def __init__(self, module: torch.nn.Module, lean: LeanBody | GemmaLeanBody) -> None:
        self.lean = lean
        self.head: torch.nn.Module = RowLinear.sharing(module.lm_head)
        weight = self.head.weight
        #: rows per head call in ``LogitRows`` (float32 CPU: the most ``RowLinear`` speeds up)
        self.block: int | None = (
            RowLinear.max_rows if weight.dtype == torch.float32 and weight.device.type == "cpu" else None
        )
        #: the kernel chosen per weight shape and row count on this machine (measured on load,
        #: taking ``calibration_s`` seconds; 0 when this machine's cache already knew them)
        start = time.perf_counter()
        self.kernels = kernel_choice.calibrate(
            [
                *((w, kernel_choice.BODY_ROWS) for w in lean.weights() if w is not weight),
                (weight, kernel_choice.HEAD_ROWS),
            ]
        )
        self.calibration_s = time.perf_counter() - start

    def new_cache(self) -> LeanCache:
        """An empty cache for :meth:`body`."""
        return self.lean.new_cache()

    def body(
        self,
        input_ids: torch.Tensor,
        cache: LeanCache,
        positions: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Final hidden states (n, hidden) of one sequence; `cache` is updated. A tree forward
        gives each token's `positions` and a boolean `mask` (n, cache length after the call)."""
        return self.lean(input_ids, cache, positions, mask)


def tree_arguments(
    positions: torch.Tensor, mask: torch.Tensor, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """``position_ids`` (1, n) and a 4-D additive ``attention_mask`` (1, 1, n, total) for a tree.

    transformers uses a 4-D mask as given; additive (0 where allowed, the dtype's minimum
    elsewhere) works for both its eager and its SDPA attention.
    """
    blocked = torch.finfo(dtype).min
    add = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, blocked)
    return {"position_ids": positions.reshape(1, -1), "attention_mask": add[None, None]}


class LogitRows:
    """Logit rows of one forward pass, computed from the hidden states when first read.

    ``row(i)`` is float32 (1, vocab). Reading a row not yet computed computes it and the
    following ones, up to `block` rows in one head call (all rows when None) and never a
    row already there. Verification reads left to right and stops at the first rejection,
    so rows past the block that holds it are never computed (nor processed). Blocks
    rather than single rows because a head call costs about the same for 1 … 8 rows (it
    is bound by reading the head's weight): computing the
    first row alone would pay only when it is rejected more often than not. ``computed``
    counts the rows computed so far; ``seconds`` the time spent computing them.
    """

    def __init__(
        self,
        *,
        rows: torch.Tensor | None = None,
        hidden: torch.Tensor | None = None,
        head: Callable[[torch.Tensor], torch.Tensor] | None = None,
        block: int | None = None,
    ) -> None:
        if rows is not None:
            self._n = int(rows.shape[0])
            self._rows: list[torch.Tensor | None] = [rows[i : i + 1] for i in range(self._n)]
        elif hidden is not None and head is not None:
            self._n = int(hidden.shape[0])
            self._rows = [None] * self._n
        else:
            raise ValueError("LogitRows needs rows, or hidden states and a head.")
        self._hidden = hidden
        self._head = head
        self._block = max(int(block), 1) if block is not None else self._n
        #: seconds spent computing rows on demand (part of the forward pass's cost)
        self.seconds = 0.0

    def __len__(self) -> int:
        return self._n

    @property
    def computed(self) -> int:
        return sum(r is not None for r in self._rows)

    def row(self, i: int) -> torch.Tensor:
        """Float32 logits (1, vocab) scoring the token after fed token `i`."""
        got = self._rows[i]
        if got is not None:
            return got
        assert self._hidden is not None and self._head is not None
        end = min(i + self._block, self._n)
        stop = next((j for j in range(i + 1, end) if self._rows[j] is not None), end)
        start = time.perf_counter()
        with torch.inference_mode():
            block = self._head(self._hidden[i:stop]).float()
        self.seconds += time.perf_counter() - start
        for j in range(i, stop):
            self._rows[j] = block[j - i : j - i + 1]
        return block[:1]

    def all(self) -> torch.Tensor:
        """Every row (n, vocab), computing the missing ones."""
        return torch.cat([self.row(i) for i in range(self._n)])
