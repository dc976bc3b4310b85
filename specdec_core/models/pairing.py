"""Pairing a draft with a target: the draft itself when it scores the target's ids, else the same
model drafting across the two vocabularies (a ``CrossVocabularyDraft``), else a clear refusal."""

from __future__ import annotations

from specdec_core.models.base import Draft, LanguageModel
from specdec_core.models.compat import TokenizerMismatchError, check_compatible
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.vocab_map import cross_vocabulary_draft


def paired_draft(target: LanguageModel, draft: Draft) -> Draft:
    """The draft the engine runs against `target`.

    `draft` itself when it scores the target's token ids; a ``CrossVocabularyDraft`` drafting
    in the target's vocabulary when both have tokenizers that differ, or one tokenizer whose
    logit widths differ only by padding. Raises ``TokenizerMismatchError`` when the
    vocabularies differ and cannot be bridged: no tokenizer to read, or not one shared token.
    """
    if isinstance(draft, CrossVocabularyDraft):
        check_compatible(target, draft)
        return draft
    try:
        check_compatible(target, draft)
        return draft
    except TokenizerMismatchError:
        if getattr(target, "tokenizer", None) is None or getattr(draft, "tokenizer", None) is None:
            raise
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
