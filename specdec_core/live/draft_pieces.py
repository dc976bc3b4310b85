"""What a draft over another tokenizer read for each target token: its own pieces, and which of
them have no target twin (it can never propose those). Kept in a live trace's ``meta`` so a
replayed run shows them without the models."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from specdec_core.models.vocab_map import token_texts

#: ``meta`` key of a trace: target id (as text) → [[piece text, has a twin], …].
META_KEY = "draft_pieces"


def draft_pieces(draft: Any, target_ids: Iterable[int]) -> dict[str, list[list[Any]]]:
    """For each target id, the draft's own pieces spelling it; {} for a draft that reads the
    target's own tokens (the same tokenizer, or a head cut down to some target tokens)."""
    if getattr(draft, "to_draft", None) is None or not hasattr(draft, "pieces"):
        return {}
    tokenizer = draft.draft.tokenizer
    texts = token_texts(tokenizer)
    out: dict[str, list[list[Any]]] = {}
    for t in sorted({int(i) for i in target_ids}):
        pieces = draft.pieces([t])[0]
        out[str(t)] = [
            [
                texts[i] if i < len(texts) and texts[i] is not None else tokenizer.decode([i]),
                draft.twin(i) is not None,
            ]
            for i in pieces
        ]
    return out
