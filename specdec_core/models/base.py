"""The protocol every model implements, so the engine runs the same on a toy chain and a transformer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Session(Protocol):
    """A growing context with its cache.

    ``extend(ids)`` feeds tokens and returns float64 logits, one row per fed token: row i
    scores the token that follows ``ids[i]``. ``truncate(n)`` rolls the context (and any
    KV cache) back to its first n tokens.
    """

    @property
    def length(self) -> int: ...

    def extend(self, token_ids: Sequence[int]) -> np.ndarray: ...

    def truncate(self, length: int) -> None: ...


@runtime_checkable
class LanguageModel(Protocol):
    """A next-token model over ``vocab_size`` tokens; ``session(ids)`` starts a context."""

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_token_id(self) -> int | None: ...

    def session(self, prompt_ids: Sequence[int]) -> Session: ...
