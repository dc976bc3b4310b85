"""HFCausalLM: any transformers causal LM behind the model protocol, with a real KV cache.

Loading never needs a network unless asked: a local folder (safetensors + config +
tokenizer), a GGUF file, or a Hugging Face id already in the local cache. Anything missing
raises ``ModelNotAvailableError`` (a ``ValueError``) whose message names what is missing.
No ``trust_remote_code``; weights only from safetensors or GGUF.

Sessions hold a transformers ``DynamicCache``; ``truncate`` really crops it, so after a
rejected draft nothing past the committed tokens stays in the cache.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from specdec_core.models.locking import ModelLock
from specdec_core.models.tokens import TokenTexts

#: ``progress(fraction in [0, 1], message)``, called while a model loads.
Progress = Callable[[float, str], None]

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says why in plain words."""


class ModelNotAvailableError(ModelLoadError):
    """The model is neither a local folder nor in the local Hugging Face cache (offline)."""


def report(progress: Progress | None, fraction: float, message: str) -> None:
    """Call `progress` if given (loading code reports through this)."""
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


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


def _dtype_name(dtype: torch.dtype) -> str:
    return next((k for k, v in DTYPES.items() if v == dtype), str(dtype).removeprefix("torch."))


class HFCausalLM:
    """A transformers causal LM with its tokenizer, implementing ``LanguageModel``.

    Attributes a UI can use: ``name``, ``vocab_size``, ``eos_token_id`` (and the set
    ``eos_token_ids``), ``encode``/``decode``/``token_text``/``token_texts``, ``lock``
    (``lock.busy``), ``device``, ``dtype``, ``num_layers``, ``source``.
    Build one with :meth:`load` (or ``load_bundled()``); wrap an already loaded module
    with the constructor.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        tokenizer: Any,
        *,
        name: str,
        source: str | None = None,
        lock: ModelLock | None = None,
    ) -> None:
        module.eval()
        self.module = module
        self.tokenizer = tokenizer
        self.name = name
        self.source = source
        self.lock = lock if lock is not None else ModelLock(name)
        self.config = module.config
        param = next(module.parameters())
        self.device: torch.device = param.device
        self.dtype: torch.dtype = param.dtype
        head = module.get_output_embeddings()
        self._vocab = int(head.weight.shape[0]) if head is not None else int(self.config.vocab_size)
        self.eos_token_ids: frozenset[int] = _eos_ids(module, tokenizer)
        eos = getattr(tokenizer, "eos_token_id", None)
        self._eos = int(eos) if eos is not None else (min(self.eos_token_ids) if self.eos_token_ids else None)
        self.max_length: int = int(getattr(self.config, "max_position_embeddings", 0) or 1 << 30)
        self._texts = TokenTexts(tokenizer)
        params = inspect.signature(module.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._keep_kw = "logits_to_keep" in params

    # -- the LanguageModel protocol --------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of logits per position (can exceed the tokenizer's length when padded)."""
        return self._vocab

    @property
    def eos_token_id(self) -> int | None:
        return self._eos

    def session(self, prompt_ids: Sequence[int]) -> HFSession:
        """A fresh context with its own KV cache, prefilled with `prompt_ids` (may be empty)."""
        s = HFSession(self)
        if len(prompt_ids):
            s.feed(prompt_ids)
        return s

    # -- text helpers for a UI -------------------------------------------------------------
    @property
    def num_layers(self) -> int:
        return int(getattr(self.config, "num_hidden_layers", 0))

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def encode(self, text: str, chat: bool = False, system: str | None = None) -> list[int]:
        """Token ids of `text`; ``chat=True`` wraps it as a user turn with the chat template.

        A plain empty text gives just the BOS token when the tokenizer has one (the engine
        needs at least one token to predict from).
        """
        if chat:
            if not self.has_chat_template:
                raise ValueError(f"{self.name} has no chat template; encode the text with chat=False.")
            messages = [{"role": "user", "content": text}]
            if system is not None:
                messages.insert(0, {"role": "system", "content": system})
            out = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
            ids = out["input_ids"] if hasattr(out, "keys") else out
            return [int(i) for i in ids]
        ids = [int(i) for i in self.tokenizer.encode(text, add_special_tokens=True)]
        bos = getattr(self.tokenizer, "bos_token_id", None)
        if not ids and bos is not None:
            ids = [int(bos)]
        return ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """The text of `ids` (special tokens kept unless asked otherwise)."""
        return self.tokenizer.decode(
            [int(i) for i in ids], skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False
        )

    def token_text(self, token_id: int) -> str:
        """Raw display text of one token (leading spaces and newlines kept, not HTML-escaped)."""
        return self._texts(token_id)

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        return [self._texts(i) for i in ids]

    def describe(self) -> dict[str, object]:
        """Plain facts for a UI: name, source, dtype, device, layers, vocabulary, parameters."""
        return {
            "name": self.name,
            "source": self.source,
            "dtype": _dtype_name(self.dtype),
            "device": str(self.device),
            "layers": self.num_layers,
            "vocab_size": self.vocab_size,
            "parameters": int(sum(p.numel() for p in self.module.parameters())),
        }

    def __repr__(self) -> str:
        return f"HFCausalLM({self.name!r}, dtype={_dtype_name(self.dtype)}, device={self.device})"

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str],
        *,
        dtype: str | torch.dtype = "float32",
        device: str | torch.device | None = None,
        gguf_file: str | None = None,
        name: str | None = None,
        allow_download: bool = False,
        progress: Progress | None = None,
    ) -> HFCausalLM:
        """Load a local folder, a ``.gguf`` file, or a Hugging Face id from the local cache.

        `allow_download=True` lets transformers fetch a missing id from the Hub (needs a
        network); by default nothing touches the network. Raises ``ModelNotAvailableError``
        when the model is not there and ``ModelLoadError`` for anything else that stops it.
        """
        torch_dtype = resolve_dtype(dtype)
        dev = resolve_device(device)
        text = str(source)
        path = Path(text).expanduser()
        if path.is_file() and path.suffix == ".gguf":
            path, gguf_file = path.parent, path.name
        if path.is_dir():
            gguf_file = gguf_file or _pick_weights(path)
            where, local = str(path), True
        elif _looks_like_path(text):
            raise ModelNotAvailableError(f"The folder {text!r} does not exist.")
        else:
            where, local = text, not allow_download
        label = name or (Path(gguf_file).stem if gguf_file else path.name if path.is_dir() else text)
        report(progress, 0.0, f"Loading the tokenizer of {label}…")
        kwargs: dict[str, Any] = {"local_files_only": local, "trust_remote_code": False}
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        try:
            tokenizer = _auto().AutoTokenizer.from_pretrained(where, **kwargs)
            report(progress, 0.1, f"Loading the weights of {label}…")
            with _gguf_progress(progress, 0.1, 0.95) if gguf_file else contextlib.nullcontext():
                module = _auto().AutoModelForCausalLM.from_pretrained(
                    where, dtype=torch_dtype, use_safetensors=None if gguf_file else True, **kwargs
                )
        except ModelLoadError:
            raise
        except (OSError, ValueError, KeyError, ImportError, RuntimeError) as exc:
            raise _explain(text, path.is_dir(), allow_download, exc) from None
        module.to(dev)
        report(progress, 1.0, f"{label} is ready.")
        return cls(module, tokenizer, name=label, source=str(path) if path.is_dir() else text)


class HFSession:
    """A growing context of one ``HFCausalLM`` with its KV cache (implements ``Session``)."""

    def __init__(self, model: HFCausalLM) -> None:
        self.model = model
        self._cache = _auto().DynamicCache(config=model.config)
        self._ids: list[int] = []
        #: forward passes run by this session (prefill included)
        self.forward_count = 0

    @property
    def length(self) -> int:
        return len(self._ids)

    @property
    def token_ids(self) -> list[int]:
        return list(self._ids)

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> torch.Tensor:
        """Feed tokens; float32 logits on the model's device, one row per token (or the last).

        The engine's fast path; :meth:`extend` is the protocol's float64 numpy version.
        """
        ids = [int(t) for t in token_ids]
        if not ids:
            raise ValueError("extend needs at least one token.")
        if len(self._ids) + len(ids) > self.model.max_length:
            raise ValueError(
                f"{self.model.name} handles at most {self.model.max_length} tokens; this context "
                f"would reach {len(self._ids) + len(ids)}."
            )
        m = self.model
        kwargs: dict[str, Any] = {m._cache_kw: self._cache, "use_cache": True}
        if last_only and m._keep_kw:
            kwargs["logits_to_keep"] = 1
        with torch.inference_mode():
            inp = torch.tensor([ids], dtype=torch.long, device=m.device)
            out = m.module(input_ids=inp, **kwargs).logits[0]
            if last_only:
                out = out[-1:]
            out = out.float()
        self._ids.extend(ids)
        self.forward_count += 1
        return out

    def feed(self, token_ids: Sequence[int]) -> None:
        """Feed tokens into the cache without keeping their logits (a cheaper prefill)."""
        self.logits(token_ids, last_only=True)

    def extend(self, token_ids: Sequence[int]) -> np.ndarray:
        """Feed tokens; float64 logits, row i scores the token after ``token_ids[i]``."""
        return self.logits(token_ids).cpu().double().numpy()

    def truncate(self, length: int) -> None:
        """Roll the context and the KV cache back to the first `length` tokens."""
        if not 0 <= length <= len(self._ids):
            raise ValueError(f"cannot truncate a context of {len(self._ids)} tokens to {length}.")
        drop = len(self._ids) - length
        if drop:
            self._cache.crop(-drop)
            del self._ids[length:]


# -- loading helpers ---------------------------------------------------------------------------
def _auto() -> Any:
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


def _eos_ids(module: torch.nn.Module, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    for source in (getattr(module, "generation_config", None), module.config, tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return frozenset(ids)


_GGUF_PATCH = threading.Lock()


@contextlib.contextmanager
def _gguf_progress(progress: Progress | None, lo: float, hi: float) -> Iterator[None]:
    """Report transformers' per-tensor GGUF de-quantisation loop through `progress`."""
    try:
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - gguf support missing
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    if original is None:
        yield
        return

    def counted(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        total = len(iterable) if hasattr(iterable, "__len__") else 0
        step = max(1, total // 50)
        for i, item in enumerate(iterable):
            if total and i % step == 0:
                report(progress, lo + (hi - lo) * i / total, f"De-quantising GGUF tensors ({i}/{total})…")
            yield item

    with _GGUF_PATCH:
        gguf_utils.tqdm = counted
        try:
            yield
        finally:
            gguf_utils.tqdm = original
