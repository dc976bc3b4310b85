"""When a run stops: the target's end-of-sequence tokens and the cut of a round after one.

Shared by the chain loop (:mod:`.loop`) and the token-tree loop, so that neither imports the other.
"""

from __future__ import annotations

from specdec_core.models.base import LanguageModel


def eos_set(target: LanguageModel) -> frozenset[int]:
    """The token ids that end a run for `target` (its list of EOS ids, else its one EOS id)."""
    ids = getattr(target, "eos_token_ids", None)
    if ids:
        return frozenset(int(i) for i in ids)
    eos = getattr(target, "eos_token_id", None)
    return frozenset() if eos is None else frozenset({int(eos)})


def finish_round(
    committed: list[int], kinds: list[str], eos: frozenset[int], stop_at_eos: bool, produced: int, limit: int
) -> tuple[list[int], list[str], str | None]:
    """Cut the round after an EOS token and say why the run stops, if it does."""
    if stop_at_eos:
        for i, tok in enumerate(committed):
            if tok in eos:
                return committed[: i + 1], kinds[: i + 1], "eos"
    if produced + len(committed) >= limit:
        return committed, kinds, "max_new_tokens"
    return committed, kinds, None
