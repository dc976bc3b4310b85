"""HFCausalLM: any transformers causal LM behind the model protocol, with a real KV cache.

Loading never needs a network unless asked: a local folder (safetensors + config +
tokenizer), a GGUF file, or a Hugging Face id already in the local cache. Anything missing
raises ``ModelNotAvailableError`` (a ``ValueError``) whose message names what is missing.
No ``trust_remote_code``; weights only from safetensors or GGUF.

Sessions hold a transformers ``DynamicCache`` (a ``lean.LeanCache`` on the lean body);
``truncate`` really crops it, so after a rejected draft nothing past the committed tokens
stays in the cache.

Fast forward: for causal-LM classes whose logits are exactly ``lm_head(hidden)`` (Llama,
Mistral, Qwen2/3, Phi-3, OLMo-2, SmolLM3, with no logit scaling or soft-capping in the
config; see :func:`plain_head`) a session runs the transformer body and the head itself,
on a twin of the module whose linear layers are :class:`RowLinear` (weights shared, the
module itself untouched): on CPU, float32 decode steps and verification blocks of a few
rows run a much faster matmul kernel than ``F.linear``. :meth:`HFSession.lazy_logits`
returns the body's output with the head rows computed on demand, so speculative
verification only pays for (and processes) the rows it reads. For Llama, Qwen2 and Mistral
models on CPU the body itself is :class:`~specdec_core.models.lean.LeanBody` (the same
layers with fewer operations; a decode step takes about a third less time in float32 and
bfloat16). Any other model runs its own forward.

Threads: torch's default is kept; ``SPECDEC_TORCH_THREADS`` (read once, see
:func:`configure_torch_threads`) overrides it.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from specdec_core.models import memory
from specdec_core.models.lean import LeanBody, fused_bytes, lean_eligible
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
        #: body + head with faster linears (None: the model's own forward runs)
        self.fast: FastForward | None = FastForward(module) if plain_head(module) is not None else None
        configure_torch_threads()

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
        fast = model.fast
        self._cache = fast.new_cache() if fast is not None else _auto().DynamicCache(config=model.config)
        self._ids: list[int] = []
        #: forward passes run by this session (prefill included)
        self.forward_count = 0

    @property
    def length(self) -> int:
        return len(self._ids)

    @property
    def token_ids(self) -> list[int]:
        return list(self._ids)

    def _check_room(self, ids: list[int]) -> None:
        if not ids:
            raise ValueError("extend needs at least one token.")
        if len(self._ids) + len(ids) > self.model.max_length:
            raise ValueError(
                f"{self.model.name} handles at most {self.model.max_length} tokens; this context "
                f"would reach {len(self._ids) + len(ids)}."
            )

    def _body(self, ids: list[int]) -> torch.Tensor:
        """Run the transformer body on `ids` (cache updated); final hidden states (n, hidden)."""
        m = self.model
        assert m.fast is not None
        hidden = m.fast.body(torch.tensor([ids], dtype=torch.long, device=m.device), self._cache)
        self._ids.extend(ids)
        self.forward_count += 1
        return hidden

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> torch.Tensor:
        """Feed tokens; float32 logits on the model's device, one row per token (or the last).

        The engine's fast path; :meth:`extend` is the protocol's float64 numpy version.
        """
        ids = [int(t) for t in token_ids]
        self._check_room(ids)
        m = self.model
        with torch.inference_mode():
            if m.fast is not None:
                hidden = self._body(ids)
                return m.fast.head(hidden[-1:] if last_only else hidden).float()
            kwargs: dict[str, Any] = {m._cache_kw: self._cache, "use_cache": True}
            if last_only and m._keep_kw:
                kwargs["logits_to_keep"] = 1
            inp = torch.tensor([ids], dtype=torch.long, device=m.device)
            out = m.module(input_ids=inp, **kwargs).logits[0]
            if last_only:
                out = out[-1:]
            out = out.float()
        self._ids.extend(ids)
        self.forward_count += 1
        return out

    def lazy_logits(self, token_ids: Sequence[int]) -> LogitRows:
        """Feed tokens in one forward pass; the logit rows are computed when first read.

        With a fast head only the body runs now (the KV cache needs every position);
        otherwise all rows are computed at once.
        """
        ids = [int(t) for t in token_ids]
        self._check_room(ids)
        fast = self.model.fast
        if fast is None:
            return LogitRows(rows=self.logits(ids))
        with torch.inference_mode():
            return LogitRows(hidden=self._body(ids), head=fast.head, block=fast.block)

    def feed(self, token_ids: Sequence[int]) -> None:
        """Feed tokens into the cache without keeping their logits (a cheaper prefill)."""
        ids = [int(t) for t in token_ids]
        if self.model.fast is None:
            self.logits(ids, last_only=True)
            return
        self._check_room(ids)
        with torch.inference_mode():
            self._body(ids)

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


# -- the fast head ---------------------------------------------------------------------------------
#: transformers causal-LM classes whose logits are exactly ``lm_head(model(...).last_hidden_state)``.
PLAIN_HEAD_CLASSES = frozenset(
    {
        "LlamaForCausalLM",
        "MistralForCausalLM",
        "Qwen2ForCausalLM",
        "Qwen3ForCausalLM",
        "Phi3ForCausalLM",
        "Olmo2ForCausalLM",
        "SmolLM3ForCausalLM",
    }
)
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
    if "forward" in vars(module):
        return None
    head, body = getattr(module, "lm_head", None), getattr(module, "model", None)
    if type(head) is not torch.nn.Linear or head.bias is not None or not isinstance(body, torch.nn.Module):
        return None
    for part in (module, head):
        if part._forward_hooks or part._forward_pre_hooks or hasattr(part, "_hf_hook"):
            return None
    config = getattr(module, "config", None)
    if any(getattr(config, name, None) is not None for name in LOGIT_CONFIG_FIELDS):
        return None
    return head


class RowLinear(torch.nn.Linear):
    """``nn.Linear`` sharing another's weight, with faster CPU kernels for a few rows.

    Same maths, other matmul kernels (results differ only by float rounding):

    * float32, 1 or 2 rows: ``(W @ xᵀ)ᵀ``. torch's CPU ``F.linear`` (``x @ Wᵀ``) runs a
      slow small-M path, while a tall matrix times a thin one runs an efficient gemm; one
      row is duplicated into two, since a single column falls back to the slow
      matrix-vector kernel. Measured on 2 CPU cores (2 threads), SmolLM2-135M shapes:
      1536 × 576 weight, 1 row 318 → 142 µs, 2 rows 597 → 104 µs; the 49152 × 576 head,
      1 row 9.9 → 4.0 ms.
    * float32, 3 rows or more (verification blocks, prefills): oneDNN's linear on a copy of
      the weight re-laid out once for small batches (:func:`packed_weight`, made on first
      use and kept on the weight, so twins sharing a weight share it too; it costs the
      weight's size in memory once more). Weights streamed from memory, 2 cores: 3072 × 576,
      5 rows 346 → 203 µs, 8 rows 458 → 263 µs (``W @ xᵀ`` → packed), 64 rows 1850 →
      1180 µs, 300 rows 6.7 → 5.0 ms (``F.linear`` → packed); the head, 5 rows 5.3 → 3.4 ms,
      8 rows 8.6 → 4.0 ms. A whole SmolLM2 verification of 5 tokens: 1.7 → 1.3 single
      steps, 17 tokens 3.0 → 2.1. Without these oneDNN ops: ``W @ xᵀ`` up to ``max_rows``
      rows, ``F.linear`` above.
    * bfloat16, one or two rows: torch's native kernel instead of oneDNN's, which re-lays
      out the weight on every call (1536 × 576: 1 row 134 → 68 µs, 2 rows 144 → 117 µs,
      3 rows already 139 vs 153; a whole bf16 SmolLM2 decode step 38 → 20 ms). Two rows
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
    switch of the bfloat16 case) is made once instead of in every product, which saves
    about 1 ms of a 15 ms bfloat16 SmolLM2 decode step. The switch then lasts the whole
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
_PACKED_ATTR = "_specdec_packed"


def packed_weight(weight: torch.Tensor) -> torch.Tensor | None:
    """`weight` (float32, CPU) re-laid out by oneDNN for small batches, made once and kept.

    None when this torch build lacks the oneDNN ops (or they fail), or when the copy would
    leave too little memory available (``memory.room_for``; decided once per weight);
    callers then use their other kernel.
    """
    packed = getattr(weight, _PACKED_ATTR, None)
    if packed is None:
        packed = False
        if memory.room_for(weight.numel() * weight.element_size()):
            try:
                with torch.inference_mode():
                    packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACK_BATCH)
            except (AttributeError, RuntimeError):  # pragma: no cover - torch builds without oneDNN
                packed = False
        setattr(weight, _PACKED_ATTR, packed)
    return packed if packed is not False else None


@contextlib.contextmanager
def _without_onednn() -> Iterator[None]:
    """oneDNN (mkldnn) switched off for the calls inside (process-wide; see ``RowLinear``)."""
    get = getattr(torch._C, "_get_mkldnn_enabled", None)
    set_ = getattr(torch._C, "_set_mkldnn_enabled", None)
    if get is None or set_ is None:  # pragma: no cover - other torch builds
        yield
        return
    before = get()
    set_(False)
    try:
        yield
    finally:
        set_(before)


def with_row_linears(module: torch.nn.Module) -> torch.nn.Module:
    """A twin of `module` whose ``nn.Linear`` layers are ``RowLinear`` (weights shared).

    Every module on the way to a linear layer is shallow-copied with its own table of
    children; the original module is left exactly as it was.
    """
    if type(module) is torch.nn.Linear:
        return RowLinear.sharing(module)
    twins = {name: with_row_linears(child) for name, child in module._modules.items() if child is not None}
    if all(twins[name] is child for name, child in module._modules.items() if child is not None):
        return module
    twin = copy.copy(module)
    twin._modules = {**module._modules, **twins}
    return twin


class FastForward:
    """Body and head of a plain-head model (``plain_head``), run separately, with ``RowLinear``s.

    ``body(ids, cache)`` gives the final hidden states; ``head(hidden)`` their logits;
    ``new_cache()`` the cache a session passes to ``body``. The body is
    :class:`~specdec_core.models.lean.LeanBody` where it is eligible (Llama, Qwen2, Mistral
    on CPU; `lean` False turns it off), else transformers' own body on the ``RowLinear`` twin.
    """

    def __init__(self, module: torch.nn.Module, lean: bool = True) -> None:
        twin = with_row_linears(module)
        self.module = twin
        lean = lean and lean_eligible(module) and memory.room_for(fused_bytes(module))
        self.lean = LeanBody(module, row_kernel) if lean else None
        self.head: torch.nn.Module = twin.lm_head
        weight = twin.lm_head.weight
        #: rows per head call in ``LogitRows`` (float32 CPU: the most ``RowLinear`` speeds up)
        self.block: int | None = (
            RowLinear.max_rows if weight.dtype == torch.float32 and weight.device.type == "cpu" else None
        )
        params = inspect.signature(twin.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"

    def new_cache(self) -> Any:
        """An empty cache for :meth:`body`."""
        if self.lean is not None:
            return self.lean.new_cache()
        return _auto().DynamicCache(config=self.module.config)

    def body(self, input_ids: torch.Tensor, cache: Any) -> torch.Tensor:
        """Final hidden states (n, hidden) of one sequence; `cache` is updated."""
        if self.lean is not None:
            return self.lean(input_ids, cache)
        out = self.module.model(input_ids=input_ids, **{self._cache_kw: cache, "use_cache": True})
        return out.last_hidden_state[0]


class LogitRows:
    """Logit rows of one forward pass, computed from the hidden states when first read.

    ``row(i)`` is float32 (1, vocab). Reading a row not yet computed computes it and the
    following ones, up to `block` rows in one head call (all rows when None) and never a
    row already there. Verification reads left to right and stops at the first rejection,
    so rows past the block that holds it are never computed (nor processed). Blocks
    rather than single rows because a head call costs about the same for 1 … 8 rows
    (it is bound by reading the head's weight: SmolLM2 on 2 cores, 4.0 ms for 1 row,
    3.4 ms for 5, 4.0 ms for 8 with ``RowLinear``'s kernels); computing the first row
    alone would pay only when it is rejected more often than not. ``computed``
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

    def used(self, n: int) -> torch.Tensor:
        """The first `n` rows (n, vocab), computing the missing ones."""
        return torch.cat([self.row(i) for i in range(n)])

    def all(self) -> torch.Tensor:
        """Every row (n, vocab), computing the missing ones."""
        return self.used(self._n)


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
    return torch.get_num_threads()


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
