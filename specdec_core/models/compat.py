"""Whether a draft and a target can be paired, and how: one vocabulary, or drafting across two.

``check_compatible`` asks for one shared vocabulary, token id by token id. ``paired_draft``
is what the engine runs: the draft itself when the vocabularies agree, a
``CrossVocabularyDraft`` when two tokenizers differ (or one tokenizer's logit widths differ
only by padding), and ``TokenizerMismatchError`` when they share no token at all.

Torch-free, so the engine can check a pair of Markov chains without loading torch.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

from specdec_core.models.base import Draft, LanguageModel


class TokenizerMismatchError(ValueError):
    """A draft and a target do not give the same ids to the same tokens (or share none)."""


#: draft → the targets it was found to share a vocabulary with. Reading a tokenizer's vocabulary
#: builds a dict of every token, and the engine checks its pair at the start of every run.
_matched: weakref.WeakKeyDictionary[Any, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()


def _vocab_of(model: Any) -> dict[str, int] | list[str] | None:
    tok = getattr(model, "tokenizer", None)
    if tok is not None:
        return tok.get_vocab()
    labels = getattr(model, "labels", None)
    return list(labels) if labels is not None else None


def check_compatible(target: LanguageModel, draft: Draft) -> None:
    """Raise ``TokenizerMismatchError`` unless `draft` scores the same token ids as `target`.

    Both must have the same number of logits and, where both have a tokenizer (or labels),
    the same token for every id. A drafter without its own vocabulary (n-gram) only needs
    the same size. A pair found to match is remembered for as long as both models live.
    """
    t_name = getattr(target, "name", "the target")
    d_name = getattr(draft, "name", "the draft")
    if target.vocab_size != draft.vocab_size:
        raise TokenizerMismatchError(
            f"{d_name} scores {draft.vocab_size} tokens but {t_name} scores {target.vocab_size}: "
            "speculative decoding needs one shared vocabulary. Pick a draft from the same model family."
        )
    if getattr(target, "tokenizer", None) is not None and target.tokenizer is getattr(
        draft, "tokenizer", None
    ):
        return
    try:
        if target in _matched.get(draft, ()):
            return
    except TypeError:  # a model that cannot be weakly referenced is checked every time
        pass
    dv = _vocab_of(draft)
    if dv is None:  # a drafter without a vocabulary of its own: the sizes were all to check
        return
    tv = _vocab_of(target)
    if tv is None or tv == dv:
        _remember(target, draft)
        return
    if isinstance(tv, dict) and isinstance(dv, dict):
        t_by_id = {i: s for s, i in tv.items()}
        d_by_id = {i: s for s, i in dv.items()}
        ids = sorted(set(t_by_id) | set(d_by_id))
        diff = [i for i in ids if t_by_id.get(i) != d_by_id.get(i)]
        if not diff:
            _remember(target, draft)
            return
        first = diff[0]
        pair = f"{t_by_id.get(first)!r} vs {d_by_id.get(first)!r}"
        detail = f"{len(diff)} token ids differ, first id {first}: {pair}"
    else:
        diff = [i for i, (a, b) in enumerate(zip(tv, dv, strict=False)) if a != b]
        detail = f"{len(diff)} token labels differ" + (f", first id {diff[0]}" if diff else "")
    raise TokenizerMismatchError(
        f"{d_name} and {t_name} do not share a tokenizer ({detail}). Speculative decoding compares "
        "the two models token id by token id, so they must use the same vocabulary."
    )


def _remember(target: Any, draft: Any) -> None:
    with contextlib.suppress(TypeError):  # not weakly referable: checked every time
        _matched.setdefault(draft, weakref.WeakSet()).add(target)


def paired_draft(target: LanguageModel, draft: Draft) -> Draft:
    """The draft the engine runs against `target`.

    `draft` itself when it scores the target's token ids; a ``CrossVocabularyDraft`` drafting
    in the target's vocabulary when both have tokenizers that differ, or one tokenizer whose
    logit widths differ only by padding. Raises ``TokenizerMismatchError`` when the
    vocabularies differ and cannot be bridged: no tokenizer to read, or not one shared token.
    """
    from specdec_core.models.cross import CrossVocabularyDraft

    if isinstance(draft, CrossVocabularyDraft):
        check_compatible(target, draft)
        return draft
    try:
        check_compatible(target, draft)
        return draft
    except TokenizerMismatchError:
        if getattr(target, "tokenizer", None) is None or getattr(draft, "tokenizer", None) is None:
            raise
    from specdec_core.models.vocab_map import cross_vocabulary_draft

    try:
        return cross_vocabulary_draft(target, draft)
    except TokenizerMismatchError:
        t_name = getattr(target, "name", "the target")
        d_name = getattr(draft, "name", "the draft")
        raise TokenizerMismatchError(
            f"{d_name} and {t_name} share no token: not one of the draft's tokens stands for the same "
            "text as a target token, so nothing it drafts could be checked. Pick a draft whose "
            "tokenizer shares tokens with the target's."
        ) from None
