"""HFCausalLM: any transformers causal LM behind the model protocol, with a real KV cache.

``truncate`` really crops a session's cache, so after a rejected draft nothing past the
committed tokens stays in it. Two forwards, one cache each, and why each is kept:

* the lean bodies (:mod:`.lean`, :mod:`.lean_gemma`, run by :mod:`.fast`) with a ``LeanCache``:
  Llama, Qwen2, Mistral and Gemma 3 on CPU, every model the app ships; a tree compacts this
  cache in place. Kept for speed: ``bench.kernels`` times its step against the own forward's.
* the model's own forward with a ``DynamicCache``: every other model (other families, off CPU,
  logits not ``lm_head(hidden)``, too little memory for the fused weights) and
  ``SPECDEC_FAST=0``; the reference the lean bodies are tested against.

A ``DynamicCache`` is only cropped (``crop``): it has no public way to keep positions that
are not a prefix, so a tree on it is cropped to its prefix and its path fed again.
Loading is in :mod:`.loading`.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from specdec_core.models.hf import kernel_choice, thread_choice
from specdec_core.models.hf.fast import FastForward, LogitRows, lean_body, plain_head, tree_arguments
from specdec_core.models.hf.lean import LeanCache
from specdec_core.models.hf.loading import (
    dtype_name,
    locate,
    read_pretrained,
    resolve_device,
    resolve_dtype,
    transformers_quiet,
)
from specdec_core.models.tokens import TokenTexts
from specdec_core.token_tree import TreeSegment

#: Environment variable: "0" runs transformers' own forward for every model built without `fast`.
FAST_ENV = "SPECDEC_FAST"


def fast_enabled() -> bool:
    """False when ``SPECDEC_FAST`` is "0" (or "false", "no", "off"); read at each model's build."""
    raw = os.environ.get(FAST_ENV, "").strip().lower()
    if raw in ("", "1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{FAST_ENV} must be 0 or 1, got {raw!r}.")


class HFCausalLM:
    """A transformers causal LM with its tokenizer, implementing ``LanguageModel``.

    Attributes a UI can use: ``name``, ``vocab_size``, ``eos_token_id`` (and the set
    ``eos_token_ids``), ``encode``/``decode``/``token_text``/``token_texts``, ``device``,
    ``dtype``, ``num_layers``, ``source``.
    Build one with :meth:`load` (or ``load_bundled()``); wrap an already loaded module
    with the constructor. `fast` False runs transformers' own forward instead of the fast
    forward (``self.fast`` is then None); None reads ``SPECDEC_FAST`` (:func:`fast_enabled`).
    """

    def __init__(
        self,
        module: torch.nn.Module,
        tokenizer: Any,
        *,
        name: str,
        source: str | None = None,
        fast: bool | None = None,
    ) -> None:
        module.eval()
        self.module = module
        self.tokenizer = tokenizer
        self.name = name
        self.source = source
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
        thread_choice.choose()  # first: the kernel choice is timed at the engine's thread count
        #: a lean body + head with faster linears (None: the model's own forward runs)
        self.fast: FastForward | None = None
        if (fast_enabled() if fast is None else bool(fast)) and plain_head(module) is not None:
            body = lean_body(module)
            self.fast = FastForward(module, body) if body is not None else None
        # a decode step's seconds and a verification of γ + 1 tokens in steps, on this machine
        # (timed once per model and machine, at load, kept with the kernel choice): the engine
        # prices a draft and a round with them
        costs = kernel_choice.step_costs(self._step_key(), self._time_costs)
        self.step_seconds: float = costs["step_s"]
        self.verify_steps: dict[int, float] = costs["verify_steps"]

    def _step_key(self) -> str:
        """What a step's time depends on besides the machine: the model, its dtype, shapes and
        forward (the lean or own one)."""
        shapes = ";".join("x".join(map(str, p.shape)) for p in self.module.parameters())
        digest = hashlib.sha1(shapes.encode()).hexdigest()[:12]
        forward = "own" if self.fast is None else "lean"
        return f"{self.name}|{dtype_name(self.dtype)}|{self.device}|{forward}|{digest}"

    def _time_costs(self) -> dict[str, Any]:
        """A one-token decode step and verification forwards after a short prompt, timed."""
        ids = [i % self._vocab for i in range(1, 40)]
        session = self.session(ids[:8])
        base = session.length

        def step() -> None:
            session.logits(ids[8:9], last_only=True)
            session.truncate(base)

        def verify(rows: int) -> None:
            session.lazy_logits(ids[8 : 8 + rows]).all()
            session.truncate(base)

        return kernel_choice.time_costs(step, verify)

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

    def __repr__(self) -> str:
        return f"HFCausalLM({self.name!r}, dtype={dtype_name(self.dtype)}, device={self.device})"

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
        fast: bool | None = None,
    ) -> HFCausalLM:
        """Load a local folder, a ``.gguf`` file, or a Hugging Face id from the local cache.

        `allow_download=True` lets transformers fetch a missing id from the Hub (needs a
        network); by default nothing touches the network. Raises ``ModelNotAvailableError``
        when the model is not there and ``ModelLoadError`` for anything else that stops it.
        `fast`: as in the constructor.
        """
        torch_dtype, dev = resolve_dtype(dtype), resolve_device(device)
        found = locate(source, gguf_file=gguf_file, name=name, allow_download=allow_download)
        module, tokenizer = read_pretrained(found, torch_dtype, dev)
        return cls(module, tokenizer, name=found.label, source=found.where, fast=fast)


class HFSession:
    """A growing context of one ``HFCausalLM`` with its KV cache (implements ``Session``)."""

    def __init__(self, model: HFCausalLM) -> None:
        self.model = model
        fast = model.fast
        self._cache = (
            fast.new_cache() if fast is not None else transformers_quiet().DynamicCache()
        )  # built without the config: every layer keeps its whole history, so it can always crop
        self._ids: list[int] = []
        self._tree: TreeSegment | None = None
        #: final hidden states of the fed tokens (a trained draft head reads them: ``features``)
        self._hidden: torch.Tensor | None = None

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
        self._keep_hidden(hidden)
        return hidden

    def _keep_hidden(self, hidden: torch.Tensor) -> None:
        """Store the final hidden states of the tokens just fed (buffer doubles as it fills)."""
        end = len(self._ids)
        start = end - hidden.shape[0]
        buf = self._hidden
        # Inference mode either way: the buffer may have been made inside it (engine) and be
        # written outside it (a plain forward), which torch refuses for in-place updates.
        with torch.inference_mode():
            if buf is None or buf.shape[0] < end:
                size = max(end, 64, 2 * (0 if buf is None else buf.shape[0]))
                grown = torch.empty(size, hidden.shape[-1], dtype=torch.float32, device=hidden.device)
                if buf is not None:
                    grown[:start] = buf[:start]
                self._hidden = buf = grown
            buf[start:end] = hidden

    def features(self, start: int, stop: int) -> torch.Tensor:
        """Final hidden states (stop − start, hidden) at positions start … stop − 1 of the text fed:
        what the LM head reads there; a trained draft head (``models.head``) drafts from them."""
        if not 0 <= start <= stop <= len(self._ids):
            raise ValueError(f"features {start}:{stop} are outside a context of {len(self._ids)} tokens.")
        if self._hidden is None:
            raise ValueError("this session has fed no tokens yet.")
        return self._hidden[start:stop]

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
            result = m.module(input_ids=inp, output_hidden_states=True, **kwargs)
            out = result.logits[0]
            if last_only:
                out = out[-1:]
            out = out.float()
            self._ids.extend(ids)
            self._keep_hidden(result.hidden_states[-1][0])
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
        self._tree = None

    # -- tree drafts: one forward over tree nodes, then compaction to the accepted path --------
    def lazy_tree_logits(self, token_ids: Sequence[int], parents: Sequence[int]) -> LogitRows:
        """Feed tree nodes in one forward pass (``token_tree.TreeSegment`` parents; -1 starts
        a tree at the current length): each node sees the cache before the tree and its own
        ancestors, at position id root + depth. Rows as in :meth:`lazy_logits`."""
        ids = [int(t) for t in token_ids]
        if len(parents) != len(ids):
            raise ValueError("a tree forward needs one parent per token.")
        self._check_room(ids)
        if parents[0] == -1:
            self._tree = TreeSegment(len(self._ids))
        if self._tree is None:
            raise ValueError("a tree starts with its root (parent -1).")
        positions, mask = self._tree.add(parents)
        m = self.model
        pos = torch.as_tensor(positions, device=m.device)
        allowed = torch.as_tensor(mask, device=m.device)
        inp = torch.tensor([ids], dtype=torch.long, device=m.device)
        with torch.inference_mode():
            if m.fast is not None:
                hidden = m.fast.body(inp, self._cache, pos, allowed)
                self._ids.extend(ids)
                self._keep_hidden(hidden)
                return LogitRows(hidden=hidden, head=m.fast.head, block=m.fast.block)
            extra = tree_arguments(pos, allowed, m.module.dtype)
            cache = {m._cache_kw: self._cache, "use_cache": True}
            out = m.module(input_ids=inp, **cache, output_hidden_states=True, **extra)
            rows = out.logits[0].float()
            self._ids.extend(ids)
            self._keep_hidden(out.hidden_states[-1][0])
        return LogitRows(rows=rows)

    def extend_tree(self, token_ids: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """:meth:`lazy_tree_logits` as float64 numpy rows (the protocol's version)."""
        return self.lazy_tree_logits(token_ids, parents).all().cpu().double().numpy()

    def compact(self, keep: Sequence[int]) -> None:
        """Keep the prefix and the tree path `keep` (tree indices, root first); every other
        tree node is dropped. A ``LeanCache`` moves the path's keys and values into place.
        transformers' ``DynamicCache`` has no public way to keep positions that are not a
        prefix, so it is cropped to the prefix (``crop``) and the path is fed again: one more
        forward of at most D + 1 tokens, on the models that run their own forward."""
        if self._tree is None:
            raise ValueError("no tree to compact.")
        kept = self._tree.kept(keep)
        if not isinstance(self._cache, LeanCache):
            root = self._tree.root
            path = [self._ids[i] for i in kept[root:]]
            self.truncate(root)
            if path:
                self.feed(path)
            return
        with torch.inference_mode():
            self._cache.keep(kept)
            if self._hidden is not None:
                self._hidden[: len(kept)] = self._hidden[torch.tensor(kept, device=self._hidden.device)]
        self._ids = [self._ids[i] for i in kept]
        self._tree = None


def _eos_ids(module: torch.nn.Module, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    for source in (getattr(module, "generation_config", None), module.config, tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return frozenset(ids)
