"""The protocols every model implements, so the engine runs the same on a toy chain and a transformer.

* :class:`LanguageModel` / :class:`Session` — a next-token model and its growing context.
* :class:`Proposer` — a drafter without logits (n-gram prompt lookup): it proposes tokens
  and its q is one-hot on each.
* :class:`FastSession` — what an HF session adds for the engine's fast path (torch logit
  rows, rows computed on demand); the engine uses it where a session has it.
* :class:`Draft` — what ``generate`` accepts as a draft: a model or a proposer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

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
class FastSession(Session, Protocol):
    """A session with the engine's fast path (``HFSession``).

    ``logits(ids, last_only)`` feeds tokens and returns float32 torch rows on the model's
    device; ``lazy_logits(ids)`` feeds them in one forward pass and computes each row when
    first read (``row(i)``, ``used(n)``, ``all()``, ``seconds``).
    """

    def logits(self, token_ids: Sequence[int], last_only: bool = False) -> Any: ...

    def lazy_logits(self, token_ids: Sequence[int]) -> Any: ...


@runtime_checkable
class LanguageModel(Protocol):
    """A next-token model over ``vocab_size`` tokens; ``session(ids)`` starts a context.

    Optional attributes the engine reads when present: ``eos_token_ids`` (every token that
    ends a run), ``max_length`` (the context limit), ``name``.
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_token_id(self) -> int | None: ...

    def session(self, prompt_ids: Sequence[int]) -> Session: ...


@runtime_checkable
class Proposer(Protocol):
    """A drafter without logits: ``propose(context, k)`` gives up to k next tokens.

    Its q is one-hot on each proposed token, so it samples from exactly the q it reports
    under any sampling settings.
    """

    @property
    def vocab_size(self) -> int: ...

    def propose(self, context: Sequence[int], max_tokens: int) -> list[int]: ...


#: What ``engine.generate`` takes as its draft.
Draft = LanguageModel | Proposer
