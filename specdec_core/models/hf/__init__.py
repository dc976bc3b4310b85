"""Real transformers models behind the model protocol (torch and transformers needed).

:mod:`.library_internals` is the one file reaching into torch's and transformers' internals.
``SPECDEC_FAST=0`` (or ``HFCausalLM(..., fast=False)``) runs transformers' own forward.
"""

from specdec_core.models.hf.fast import LogitRows, plain_head
from specdec_core.models.hf.kernels import RowLinear, packed_weight, row_linear
from specdec_core.models.hf.loading import (
    THREADS_ENV,
    ModelLoadError,
    ModelNotAvailableError,
    configure_torch_threads,
    report,
    resolve_device,
    resolve_dtype,
)
from specdec_core.models.hf.model import HFCausalLM, HFSession

__all__ = [
    "THREADS_ENV",
    "HFCausalLM",
    "HFSession",
    "LogitRows",
    "ModelLoadError",
    "ModelNotAvailableError",
    "RowLinear",
    "configure_torch_threads",
    "packed_weight",
    "plain_head",
    "report",
    "resolve_device",
    "resolve_dtype",
    "row_linear",
]
