"""Twins between two Hugging Face tokenizers by token text, and the spelling of one in the other.

A token's text is what the tokenizer's own decoder makes of it (decoded after a plain anchor
token, so a decoder that strips a leading space cannot hide it), never its raw piece:
byte-level BPE writes "Ġthe", SentencePiece "▁the", both mean " the". Byte-fallback pieces
(``<0x0A>``) and pieces holding part of a UTF-8 character have no text of their own and no
twin (−1). Special tokens are twins only of special tokens with the same content.

Tokenizer-only (no torch): the maps are built from the tokenizers' batch decoders and kept
for as long as the tokenizers live.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from specdec_core.models.base import LanguageModel
from specdec_core.models.cross import CrossVocabularyDraft

_SP_BYTE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")
_texts: weakref.WeakKeyDictionary[Any, list[str | None]] = weakref.WeakKeyDictionary()
_maps: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[Any, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def special_ids(tokenizer: Any) -> dict[int, str]:
    """Special and added tokens: id → content (matched by content, never by decoded text)."""
    out = {int(i): str(getattr(t, "content", t)) for i, t in (tokenizer.added_tokens_decoder or {}).items()}
    for i in getattr(tokenizer, "all_special_ids", []) or []:
        out.setdefault(int(i), str(tokenizer.convert_ids_to_tokens(int(i))))
    return out


def _anchor(tokenizer: Any, specials: dict[int, str]) -> tuple[list[int], str]:
    """A plain token to decode in front of others (none when no letter is one token), and its text."""
    for probe in ("a", "x", "0", "."):
        ids = tokenizer.encode(probe, add_special_tokens=False)
        if len(ids) == 1 and int(ids[0]) not in specials:
            return [int(ids[0])], _decode(tokenizer, ids)
    return [], ""


def _decode(tokenizer: Any, ids: Sequence[int]) -> str:
    return tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def token_texts(tokenizer: Any) -> list[str | None]:
    """The text of each id of `tokenizer` (``len(tokenizer)`` of them); None for special
    tokens, byte-fallback pieces, partial UTF-8 characters and empty tokens."""
    cached = _texts.get(tokenizer)
    if cached is not None:
        return cached
    n = len(tokenizer)
    specials = special_ids(tokenizer)
    anchor, prefix = _anchor(tokenizer, specials)
    pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
    pairs = [[*anchor, i] for i in range(n)]
    backend = getattr(tokenizer, "backend_tokenizer", None)  # a fast tokenizer decodes in one call
    if backend is not None:
        decoded = backend.decode_batch(pairs, skip_special_tokens=False)
    else:
        decoded = tokenizer.batch_decode(pairs, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    out: list[str | None] = []
    for i, (piece, text) in enumerate(zip(pieces, decoded, strict=True)):
        if i in specials or piece is None or _SP_BYTE.match(str(piece)):
            out.append(None)
            continue
        own = text[len(prefix) :] if text.startswith(prefix) else _decode(tokenizer, [i])
        out.append(own if own and "\ufffd" not in own else None)
    _texts[tokenizer] = out
    return out


def vocabulary_map(
    target_tokenizer: Any, draft_tokenizer: Any, draft_width: int, target_width: int
) -> np.ndarray:
    """``to_target`` for a draft with `draft_width` logits: each one's target twin (same text,
    or a special token with the same content) below `target_width`, else −1 (padding rows too).

    Where several target tokens share a text, the twin is the one the target's tokenizer
    writes for that text alone (else the lowest id).
    """
    by_draft = _maps.get(target_tokenizer)
    cached = None if by_draft is None else by_draft.get(draft_tokenizer)
    if cached is None:
        cached = _build_map(target_tokenizer, draft_tokenizer)
        _maps.setdefault(target_tokenizer, weakref.WeakKeyDictionary())[draft_tokenizer] = cached
    out = np.full(int(draft_width), -1, dtype=np.int64)
    n = min(int(draft_width), cached.size)
    out[:n] = np.where(cached[:n] < int(target_width), cached[:n], -1)
    return out


def _build_map(target_tokenizer: Any, draft_tokenizer: Any) -> np.ndarray:
    t_texts = token_texts(target_tokenizer)
    index: dict[str, int] = {}
    shared: set[str] = set()
    for i, text in enumerate(t_texts):
        if text is None:
            continue
        if text in index:
            shared.add(text)
        else:
            index[text] = i
    for text in shared:
        ids = target_tokenizer.encode(text, add_special_tokens=False)
        if len(ids) == 1 and t_texts[int(ids[0])] == text:
            index[text] = int(ids[0])
    t_special = {content: i for i, content in sorted(special_ids(target_tokenizer).items(), reverse=True)}
    d_special = special_ids(draft_tokenizer)
    out = np.full(len(draft_tokenizer), -1, dtype=np.int64)
    for i, text in enumerate(token_texts(draft_tokenizer)):
        if i in d_special:
            out[i] = t_special.get(d_special[i], -1)
        elif text is not None:
            out[i] = index.get(text, -1)
    return out


class Respeller:
    """``to_draft`` for a pair of tokenizers: target ids → the same text in the draft's ids.

    Runs of ordinary target tokens are decoded (after an anchor token, so no leading space
    is lost) and encoded by the draft's tokenizer without special tokens; a special target
    token becomes the draft's special token with the same content, or nothing.
    """

    def __init__(self, target_tokenizer: Any, draft_tokenizer: Any) -> None:
        self.target = target_tokenizer
        self.draft = draft_tokenizer
        t_special = special_ids(target_tokenizer)
        d_by_content = {content: i for i, content in special_ids(draft_tokenizer).items()}
        self._special: dict[int, int | None] = {i: d_by_content.get(c) for i, c in t_special.items()}
        self._anchor, self._prefix = _anchor(target_tokenizer, t_special)

    def text(self, target_ids: Sequence[int]) -> str:
        """The text of a run of ordinary target tokens, leading space kept."""
        whole = _decode(self.target, [*self._anchor, *target_ids])
        return (
            whole[len(self._prefix) :] if whole.startswith(self._prefix) else _decode(self.target, target_ids)
        )

    def __call__(self, target_ids: Sequence[int]) -> list[int]:
        out: list[int] = []
        run: list[int] = []
        for t in target_ids:
            t = int(t)
            if t in self._special:
                out += self._spell(run)
                run = []
                twin = self._special[t]
                if twin is not None:
                    out.append(twin)
            else:
                run.append(t)
        return out + self._spell(run)

    def _spell(self, run: list[int]) -> list[int]:
        if not run:
            return []
        return [int(i) for i in self.draft.encode(self.text(run), add_special_tokens=False)]


def cross_vocabulary_draft(target: LanguageModel, draft: LanguageModel) -> CrossVocabularyDraft:
    """`draft` (a model with a ``tokenizer``) drafting in the vocabulary of `target` (one too).

    Raises ``ValueError`` when no draft token has a twin in the target's vocabulary.
    """
    t_tok, d_tok = target.tokenizer, draft.tokenizer  # type: ignore[attr-defined]
    if t_tok is d_tok or (len(t_tok) == len(d_tok) and t_tok.get_vocab() == d_tok.get_vocab()):
        # one tokenizer, logit widths that differ only by padding: cut to the tokens both score
        n = min(len(t_tok), target.vocab_size)
        to_target = np.where(np.arange(draft.vocab_size) < n, np.arange(draft.vocab_size), -1)
        return CrossVocabularyDraft(
            draft, to_target, None, target.vocab_size, name=getattr(draft, "name", None)
        )
    to_target = vocabulary_map(t_tok, d_tok, draft.vocab_size, target.vocab_size)
    start = [int(i) for i in d_tok.encode("", add_special_tokens=True)]
    fallback = next((i for i in (d_tok.bos_token_id, d_tok.eos_token_id) if i is not None), None)
    return CrossVocabularyDraft(
        draft,
        to_target,
        Respeller(t_tok, d_tok),
        target.vocab_size,
        start_ids=start,
        fallback_id=fallback,
        name=getattr(draft, "name", None),
    )
