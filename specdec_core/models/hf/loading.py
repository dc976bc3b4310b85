"""Loading a transformers model without a network: sources, dtypes, devices, threads, GGUF progress.

Loading reports its steps as log records of :data:`log` (``specdec_core.models.loading``, INFO):
no caller hands a callback in; a script that wants them shown attaches a handler.

A local folder (safetensors + config + tokenizer), a GGUF file, or a Hugging Face id
already in the local cache. Anything missing raises ``ModelNotAvailableError`` (a
``ValueError``) whose message names what is missing. No ``trust_remote_code``; weights
only from safetensors or GGUF.

Threads: ``SPECDEC_TORCH_THREADS`` (read once, see :func:`configure_torch_threads`) names the
count; without it the first model to load chooses one by measurement (:mod:`.thread_choice`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from specdec_core.models.hf.library_internals import gguf_tensor_loop

#: Where loading reports its steps (INFO records; nothing is shown unless a handler is attached).
log = logging.getLogger("specdec_core.models.loading")

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says why in plain words."""


class ModelNotAvailableError(ModelLoadError):
    """The model is neither a local folder nor in the local Hugging Face cache (offline)."""


def report(message: str) -> None:
    """Log one loading step (loading code reports through this)."""
    log.info(message)


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """ "float32" / "bfloat16" / "float16" (or a torch dtype) → torch dtype."""
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPES.values():
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype}.")
        return dtype
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}.")
    return DTYPES[dtype]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """None → CUDA when available, else CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but no CUDA GPU is available here.")
    return dev


def dtype_name(dtype: torch.dtype) -> str:
    """ "float32" / "bfloat16" / "float16" (or torch's own name of any other dtype)."""
    return next((k for k, v in DTYPES.items() if v == dtype), str(dtype).removeprefix("torch."))


#: Environment variable: torch threads for every model (unset: torch's own default).
THREADS_ENV = "SPECDEC_TORCH_THREADS"
_threads_done = False


def configure_torch_threads(threads: int | None = None) -> int:
    """Set torch's intra-op threads from `threads` or ``SPECDEC_TORCH_THREADS``, once.

    Without either, torch's default (one per core) is kept. On a machine shared with other
    busy processes fewer threads can be much faster: a thread that waits for a busy core
    stalls every matmul of the step. Returns the thread count now in use. An explicit
    `threads` always applies; the environment variable is read on the first call only.
    """
    global _threads_done
    if threads is None and not _threads_done:
        _threads_done = True
        raw = os.environ.get(THREADS_ENV, "").strip()
        if raw:
            try:
                threads = int(raw)
            except ValueError:
                raise ValueError(f"{THREADS_ENV} must be a whole number ≥ 1, got {raw!r}.") from None
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a whole number ≥ 1, got {threads!r}.")
        torch.set_num_threads(threads)
        _threads_done = True
    return torch.get_num_threads()


def threads_configured() -> bool:
    """Whether this process's thread count is settled (read from the environment or set)."""
    return _threads_done


# -- loading helpers ---------------------------------------------------------------------------
def transformers_quiet() -> Any:
    """The transformers module, imported on first use, its logging and progress bars off."""
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def _looks_like_path(text: str) -> bool:
    """Anything that is not shaped like a Hub id ("name" or "owner/name") is a path."""
    return _HUB_ID.fullmatch(text) is None or text.endswith(".gguf")


def _pick_weights(folder: Path) -> str | None:
    """None for a safetensors folder, the file name when the folder only holds one GGUF file."""
    if any(folder.glob("*.safetensors")):
        return None
    ggufs = sorted(p.name for p in folder.glob("*.gguf"))
    if len(ggufs) == 1:
        return ggufs[0]
    if len(ggufs) > 1:
        raise ModelLoadError(
            f"{folder} holds several GGUF files ({', '.join(ggufs)}); pass gguf_file= to pick one."
        )
    if any(folder.glob("*.bin")) or any(folder.glob("*.pt")):
        raise ModelLoadError(
            f"{folder} only has pickled PyTorch weights (.bin/.pt); SpecDec Studio loads safetensors "
            "or GGUF weights only (pickles can run code). Convert the weights to safetensors."
        )
    raise ModelLoadError(f"{folder} has no model weights (*.safetensors or a .gguf file).")


def _explain(source: str, is_dir: bool, allow_download: bool, exc: Exception) -> ModelLoadError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "trust_remote_code" in str(exc) or "custom code" in str(exc):
        return ModelLoadError(
            f"{source!r} needs custom model code (trust_remote_code), which SpecDec Studio never runs."
        )
    if is_dir:
        return ModelLoadError(f"Could not load the model folder {source!r}: {reason}")
    if not allow_download and _missing_from_cache(source):
        return ModelNotAvailableError(
            f"Model {source!r} is not available offline: it is not a local folder and not in the "
            "Hugging Face cache on this machine. Download it once where there is a network "
            f"(for example `hf download {source}`), or give the path of a local model folder."
        )
    if "safetensors" in str(exc).lower():
        return ModelLoadError(
            f"{source!r} has no safetensors weights; SpecDec Studio loads safetensors or GGUF only."
        )
    return ModelNotAvailableError(f"Could not load model {source!r}: {reason}")


def _missing_from_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an invalid id is missing too
        return True
    return not isinstance(found, str)


def _gguf_progress() -> Any:
    """Report transformers' per-tensor GGUF de-quantisation (about 50 reports)."""

    def on_tensor(i: int, total: int) -> None:
        if total and i % max(1, total // 50) == 0:
            report(f"De-quantising GGUF tensors ({i}/{total})…")

    return gguf_tensor_loop(on_tensor)


@dataclass(frozen=True)
class Source:
    """Where a model is read from, as ``from_pretrained`` takes it (:func:`locate`)."""

    #: the folder, or the Hugging Face id (what ``HFCausalLM.source`` records)
    where: str
    #: the GGUF file in `where` (None: safetensors)
    gguf_file: str | None
    #: the model's name for a UI
    label: str
    #: a local folder
    is_dir: bool
    #: nothing may come from the network
    local: bool
    #: the source as the caller wrote it (messages name it)
    given: str


def locate(
    source: str | os.PathLike[str],
    gguf_file: str | None = None,
    name: str | None = None,
    allow_download: bool = False,
) -> Source:
    """Where `source` (a local folder, a ``.gguf`` file or a Hub id) is read from; raises
    ``ModelNotAvailableError`` for a path that does not exist, ``ModelLoadError`` for a folder
    without usable weights."""
    text = str(source)
    path = Path(text).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        path, gguf_file = path.parent, path.name
    if path.is_dir():
        gguf_file = gguf_file or _pick_weights(path)
        label = name or (Path(gguf_file).stem if gguf_file else path.name)
        return Source(str(path), gguf_file, label, is_dir=True, local=True, given=text)
    if _looks_like_path(text):
        raise ModelNotAvailableError(f"The folder {text!r} does not exist.")
    label = name or (Path(gguf_file).stem if gguf_file else text)
    return Source(text, gguf_file, label, is_dir=False, local=not allow_download, given=text)


def read_pretrained(found: Source, dtype: torch.dtype, device: torch.device) -> tuple[torch.nn.Module, Any]:
    """(module on `device`, tokenizer) read from `found`, reporting its steps (:func:`report`); what
    stops it raises ``ModelLoadError`` (``ModelNotAvailableError`` when it is not there)."""
    label = found.label
    report(f"Loading the tokenizer of {label}…")
    kwargs: dict[str, Any] = {"local_files_only": found.local, "trust_remote_code": False}
    if found.gguf_file:
        kwargs["gguf_file"] = found.gguf_file
    try:
        tokenizer = transformers_quiet().AutoTokenizer.from_pretrained(found.where, **kwargs)
        report(f"Loading the weights of {label}…")
        with _gguf_progress() if found.gguf_file else contextlib.nullcontext():
            module = transformers_quiet().AutoModelForCausalLM.from_pretrained(
                found.where, dtype=dtype, use_safetensors=None if found.gguf_file else True, **kwargs
            )
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError, ImportError, RuntimeError) as exc:
        raise _explain(found.given, found.is_dir, not found.local, exc) from None
    module.to(device)
    report(f"{label} is ready.")
    return module, tokenizer
