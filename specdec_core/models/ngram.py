"""NGramDraft: prompt lookup, a draft that costs (almost) nothing.

It finds the latest earlier occurrence of the context's last n tokens (n from ``max_ngram``
down to ``min_ngram``) and proposes the tokens that followed it. ``min_ngram`` defaults to
2: a single matching token rarely predicts the next one on chat text, and every wasted
proposal costs a longer verification. Its q is one-hot on what
it proposes, so under any temperature / top-k / top-p it stays one-hot: the draft samples
from exactly the q it reports. When no n-gram matches it proposes nothing and the engine
runs a plain target step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class NGramDraft:
    """Prompt-lookup drafter over a vocabulary of `vocab_size` tokens (the target's).

    A ``Proposer``: the engine calls :meth:`propose`.
    """

    def __init__(
        self, vocab_size: int, max_ngram: int = 3, min_ngram: int = 2, eos_token_id: int | None = None
    ) -> None:
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be at least 1, got {vocab_size}.")
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need 1 ≤ min_ngram ≤ max_ngram, got {min_ngram} and {max_ngram}.")
        self.vocab_size = int(vocab_size)
        self.max_ngram = int(max_ngram)
        self.min_ngram = int(min_ngram)
        self.eos_token_id = eos_token_id
        self.name = f"n-gram prompt lookup (n = {min_ngram}…{max_ngram})"

    @classmethod
    def for_model(cls, target: object, max_ngram: int = 3, min_ngram: int = 2) -> NGramDraft:
        """A drafter over the vocabulary of `target` (any model with ``vocab_size``)."""
        return cls(target.vocab_size, max_ngram, min_ngram, getattr(target, "eos_token_id", None))  # type: ignore[attr-defined]

    def propose(self, context: Sequence[int], max_tokens: int) -> list[int]:
        """Up to `max_tokens` tokens that followed the latest earlier match of the context's tail."""
        n_ctx = len(context)
        if max_tokens < 1 or n_ctx < 2:
            return []
        arr = np.asarray(context, dtype=np.int64)
        for n in range(min(self.max_ngram, n_ctx - 1), self.min_ngram - 1, -1):
            tail = arr[n_ctx - n :]
            # candidate starts s with arr[s:s+n] == tail and s + n < n_ctx (a continuation exists)
            hits = arr[: n_ctx - n] == tail[0]
            for j in range(1, n):
                hits &= arr[j : n_ctx - n + j] == tail[j]
            starts = np.flatnonzero(hits)
            if starts.size:
                begin = int(starts[-1]) + n
                return [int(t) for t in arr[begin : begin + max_tokens]]
        return []
