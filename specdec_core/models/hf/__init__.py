"""Real transformers models behind the model protocol (torch and transformers needed).

* :mod:`.model` — ``HFCausalLM`` and its ``HFSession`` (KV cache, truncate, logits).
* :mod:`.loading` — sources without a network, dtypes, devices, threads, GGUF progress.
* :mod:`.fast` — the fast forward (a lean body and the head): ``FastForward``, ``LogitRows``.
* :mod:`.kernels` — ``RowLinear``'s small-row kernels, the oneDNN switch, packed weights.
* :mod:`.lean` — ``LeanBody``, a lean decoder body for Llama, Qwen2 and Mistral on CPU
  (:mod:`.lean_gemma`: Gemma 3's).
* :mod:`.derived` — packed and fused weight copies, keyed on the tensors they came from.
* :mod:`.library_internals` — the one file reaching into torch's and transformers' internals.

``SPECDEC_FAST=0`` (or ``HFCausalLM(..., fast=False)``) runs transformers' own forward.
"""

from specdec_core.models.hf.fast import (
    LOGIT_CONFIG_FIELDS,
    PLAIN_HEAD_CLASSES,
    FastForward,
    LogitRows,
    plain_head,
)
from specdec_core.models.hf.kernels import RowLinear, packed_weight, row_kernel, row_linear
from specdec_core.models.hf.loading import (
    DTYPES,
    THREADS_ENV,
    ModelLoadError,
    ModelNotAvailableError,
    configure_torch_threads,
    report,
    resolve_device,
    resolve_dtype,
)
from specdec_core.models.hf.model import FAST_ENV, HFCausalLM, HFSession, fast_enabled

__all__ = [
    "DTYPES",
    "FAST_ENV",
    "LOGIT_CONFIG_FIELDS",
    "PLAIN_HEAD_CLASSES",
    "THREADS_ENV",
    "FastForward",
    "HFCausalLM",
    "HFSession",
    "LogitRows",
    "ModelLoadError",
    "ModelNotAvailableError",
    "RowLinear",
    "configure_torch_threads",
    "fast_enabled",
    "packed_weight",
    "plain_head",
    "report",
    "resolve_device",
    "resolve_dtype",
    "row_kernel",
    "row_linear",
]
