"""Reduced-vocabulary drafts (FR-Spec, Zhao et al. 2025): a draft that may propose only the
target's N most frequent tokens.

It is the projection of a draft across vocabularies again (``verify.project``): ``to_target``
keeps the twins of the kept tokens and sends the rest to −1, so the draft samples from its
law restricted to the kept tokens, renormalised, and the target verifies against exactly
that; the output law stays the target's. The speed comes from the LM head: where a draft's
head is a plain linear layer, only its kept rows are computed (for a 262k-token head, most
of a small model's step). Frequencies are counted in the text the project ships.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from specdec_core.models.base import LanguageModel, Proposer
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.user_cache import cache_root

ROOT = Path(__file__).resolve().parents[2]
PRESET_PROMPTS = ROOT / "assets" / "presets" / "prompts.json"
#: Bump when the counted texts or the cache layout change.
COUNTS_FORMAT = 1


def shipped_texts(decode: Callable[[Sequence[int]], str] | None = None) -> list[str]:
    """The lesson texts and UI strings (en, zh) and the preset prompts; with `decode` (the
    bundled SmolLM2 tokenizer's, whose ids they are stored in) also the training prompts and
    answers of ``train/data``, the target's own generated text."""
    texts: list[str] = []
    for path in _shipped_files(decode is not None):
        if path.suffix in (".md", ".toml"):
            texts.append(path.read_text(encoding="utf-8"))
        elif path == PRESET_PROMPTS:
            texts += list(_strings(json.loads(path.read_text(encoding="utf-8"))))
    if decode is not None:
        for shard in sorted((ROOT / "train" / "data").glob("*/shard_*.json")):
            for record in json.loads(shard.read_text(encoding="utf-8")).get("records", []):
                ids = [*record.get("prompt", []), *record.get("answer", [])]
                if ids:
                    texts.append(decode(ids))
    return texts


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def _cache_dir() -> Path:
    return cache_root() / "token-counts"


def token_counts(tokenizer: Any, texts: Sequence[str]) -> np.ndarray:
    """How often each id of `tokenizer` occurs when it encodes `texts` (int64, ``len(tokenizer)``).

    Cached in the user cache folder, keyed on the tokenizer's vocabulary and the texts.
    """
    key = hashlib.sha256()
    for text in texts:
        key.update(hashlib.sha256(text.encode()).digest())
    return _cached_counts(tokenizer, key.hexdigest(), lambda: texts)


def shipped_counts(tokenizer: Any, decode: Callable[[Sequence[int]], str] | None = None) -> np.ndarray:
    """:func:`token_counts` of :func:`shipped_texts`, keyed on the shipped files themselves, so
    a cached count needs no decoding."""
    key = hashlib.sha256(b"decoded" if decode is not None else b"text only")
    for path in _shipped_files(decode is not None):
        key.update(path.relative_to(ROOT).as_posix().encode())
        key.update(hashlib.sha256(path.read_bytes()).digest())
    return _cached_counts(tokenizer, key.hexdigest(), lambda: shipped_texts(decode))


def _shipped_files(with_train: bool) -> list[Path]:
    files = sorted((ROOT / "lessons").glob("*/*.md")) + sorted((ROOT / "lessons").glob("*/*.toml"))
    files.append(PRESET_PROMPTS)
    if with_train:
        files += sorted((ROOT / "train" / "data").glob("*/shard_*.json"))
    return [f for f in files if f.is_file()]


def _cached_counts(tokenizer: Any, text_key: str, texts: Callable[[], Sequence[str]]) -> np.ndarray:
    key = hashlib.sha256(json.dumps(sorted(tokenizer.get_vocab().items())).encode())
    key.update(text_key.encode())
    path = _cache_dir() / f"{key.hexdigest()[:24]}-f{COUNTS_FORMAT}.npy"
    if path.is_file():
        try:
            counts = np.load(path)
            if counts.shape == (len(tokenizer),):
                return counts
        except (OSError, ValueError):
            pass  # a damaged cache file is counted again
    counts = np.zeros(len(tokenizer), dtype=np.int64)
    for ids in tokenizer(list(texts()), add_special_tokens=False)["input_ids"]:
        np.add.at(counts, np.asarray(ids, dtype=np.int64), 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy")
        with os.fdopen(fd, "wb") as f:
            np.save(f, counts)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache folder: counted again next time
    return counts


def frequent_tokens(counts: np.ndarray, n: int, always: Iterable[int] = ()) -> np.ndarray:
    """The ids of the `n` largest counts (ties: the lower id first) together with `always`
    (EOS ids: a draft that can never end would never be accepted at the end), sorted."""
    counts = np.asarray(counts)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 1 <= n <= counts.size:
        raise ValueError(f"n must be a whole number of tokens between 1 and {counts.size}, got {n!r}.")
    order = np.lexsort((np.arange(counts.size), -counts))[: int(n)]
    extra = [int(i) for i in always if 0 <= int(i) < counts.size]
    return np.unique(np.concatenate([order, np.asarray(extra, dtype=np.int64)])).astype(np.int64)


def frequent_target_tokens(
    target: Any, n: int, decode: Callable[[Sequence[int]], str] | None = None
) -> np.ndarray:
    """The `n` most frequent tokens of `target`'s tokenizer in the shipped text (its EOS ids
    always kept); `decode` as in :func:`shipped_texts` adds the training text."""
    counts = shipped_counts(target.tokenizer, decode)
    return frequent_tokens(counts, min(int(n), counts.size), always=getattr(target, "eos_token_ids", ()))


def reduced_draft(
    draft: Any, kept: Sequence[int] | np.ndarray, target_vocab_size: int
) -> CrossVocabularyDraft:
    """`draft` allowed to propose only the target ids `kept`, as a draft in the target's vocabulary.

    `draft`: a model over the target's ids (bf16 copy, layer skip, trained heads, a padded
    twin) or a ``CrossVocabularyDraft`` (another tokenizer). A transformer draft with a plain
    linear LM head computes only the rows of kept tokens; any other draft computes its whole
    row and the rest is masked (exact as well, only not faster).
    """
    if isinstance(draft, Proposer):
        raise ValueError(
            "a drafter without a head (n-gram lookup) proposes from the context; it has nothing to cut."
        )
    kept_ids = np.unique(np.asarray(kept, dtype=np.int64))
    if kept_ids.size == 0 or kept_ids[0] < 0 or kept_ids[-1] >= target_vocab_size:
        raise ValueError(f"kept token ids must be a non-empty list within 0 … {target_vocab_size - 1}.")
    if isinstance(draft, CrossVocabularyDraft):
        inner, to_target, to_draft = draft.draft, draft.to_target, draft.to_draft
        extra: dict[str, Any] = {"start_ids": draft.start_ids, "fallback_id": draft.fallback_id}
        base_name = draft.name
    else:
        inner, to_draft, extra = draft, None, {}
        width = np.arange(draft.vocab_size)
        to_target = np.where(width < target_vocab_size, width, -1)
        base_name = getattr(draft, "name", "draft")
    rows = np.flatnonzero(np.isin(to_target, kept_ids))
    if rows.size == 0:
        raise ValueError("none of the kept tokens has a twin among the draft's tokens.")
    name = f"{base_name} · {kept_ids.size}-token head"
    cut = cut_head(inner, rows, name)
    if cut is not None:
        return CrossVocabularyDraft(cut, to_target[rows], to_draft, target_vocab_size, name=name, **extra)
    masked = np.where(np.isin(to_target, kept_ids), to_target, -1)
    return CrossVocabularyDraft(inner, masked, to_draft, target_vocab_size, name=name, **extra)


def cut_head(model: LanguageModel, rows: np.ndarray, name: str) -> LanguageModel | None:
    """A transformer `model` whose LM head scores only `rows` (its other weights shared), or
    None when its head is not a plain bias-free linear layer of a ``HFCausalLM``."""
    from specdec_core.models.hf import HFCausalLM

    if not isinstance(model, HFCausalLM):
        return None
    import torch

    from specdec_core.models.hf.library_internals import shallow_twin

    module = model.module
    head = module.get_output_embeddings()
    if not isinstance(head, torch.nn.Linear) or head.bias is not None:
        return None
    slot = next((n for n, child in module.named_children() if child is head), None)
    if slot is None:
        return None
    outer = shallow_twin(module)
    idx = torch.as_tensor(rows, dtype=torch.long, device=head.weight.device)
    small = torch.nn.Linear(head.in_features, int(rows.size), bias=False, device=head.weight.device)
    with torch.no_grad():
        small.weight = torch.nn.Parameter(
            head.weight.detach().index_select(0, idx).clone(), requires_grad=False
        )
    setattr(outer, slot, small)
    config = copy.deepcopy(module.config)
    config.vocab_size = int(rows.size)
    outer.config = config
    return HFCausalLM(outer, model.tokenizer, name=name, source=model.source, fast=model.fast is not None)
