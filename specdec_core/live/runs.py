"""Starting a live generation: check the prompt (a ``PromptError`` whose ``code`` a UI
translates), start the run, time it, and pace its repaints so that painting weighs little on it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate
from specdec_core.live.limits import MAX_PROMPT_CHARS
from specdec_core.live.settings import DecodeSettings


class PromptError(ValueError):
    """A prompt that cannot run; ``code`` is "empty", "too_long", "no_room" or "encode"."""

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


def check_prompt(text: str) -> None:
    """Refuse an empty prompt or one over the length limit (``PromptError``), before any model."""
    if not text.strip():
        raise PromptError("empty", "The prompt is empty: type something for the model to continue.")
    if len(text) > MAX_PROMPT_CHARS:
        raise PromptError(
            "too_long",
            f"The prompt has {len(text):,} characters; the limit is {MAX_PROMPT_CHARS:,}.",
            chars=len(text),
            limit=MAX_PROMPT_CHARS,
        )


def encode_text(model: Any, text: str, chat: bool) -> list[int]:
    """The one encoding rule: through the chat template when `chat` (``catalog.chat_for``) and
    the model has one, else as plain text."""
    return list(model.encode(text, chat=chat and bool(getattr(model, "has_chat_template", False))))


def encode_prompt(model: Any, text: str, chat: bool, max_new_tokens: int) -> list[int]:
    """Token ids of `text` (:func:`encode_text`), checked to fit the context."""
    check_prompt(text)
    try:
        ids = encode_text(model, text, chat)
    except ValueError as exc:
        raise PromptError("encode", str(exc), reason=str(exc)) from None
    limit = getattr(model, "max_length", None)
    if limit is not None and len(ids) + max_new_tokens > limit:
        raise PromptError(
            "no_room",
            f"{len(ids)} prompt tokens + {max_new_tokens} new tokens exceed the {limit}-token context.",
            tokens=len(ids),
            new=max_new_tokens,
            limit=limit,
        )
    return ids


def run_of(
    target: Any, draft: Any, prompt_ids: Sequence[int], settings: DecodeSettings, top_n: int
) -> Iterator[RoundEvent]:
    """The speculative run of `draft` with `settings` (its sampling, γ, adaptive γ, length and
    seed), or the target-only run when `draft` is None; `top_n` probabilities are kept per row."""
    s, cfg, options = settings, settings.sampling(), RunOptions(top_n=top_n)  # checked now
    if draft is None:
        return autoregressive(target, prompt_ids, cfg, s.max_new_tokens, s.seed, options=options)
    return generate(
        target, draft, prompt_ids, cfg, s.gamma, s.max_new_tokens, s.seed, s.adaptive and not s.tree,
        options=options, tree=s.tree or None,
    )  # fmt: skip


class Timed:
    """The events of one run; ``wall_s`` (after the run) is the time from its start to its last
    event. Closing it closes the run."""

    def __init__(self, run: Iterator[RoundEvent]) -> None:
        self._run: Iterator[RoundEvent] | None = run
        self.wall_s = 0.0

    def __iter__(self) -> Iterator[RoundEvent]:
        t0 = time.perf_counter()
        try:
            for event in self._run or ():
                yield event
                self.wall_s = time.perf_counter() - t0
        finally:
            self.close()

    def close(self) -> None:
        """Stop the run; safe to call twice."""
        if self._run is not None:
            self._run.close()  # type: ignore[attr-defined]
            self._run = None


class Pacer:
    """Paces the repaints of a streaming view: the first event, then at most one every `every`
    seconds, and the last one."""

    def __init__(self, every: float) -> None:
        self.every = every
        self._last = 0.0

    def due(self, last: bool = False) -> bool:
        """True when the view should repaint now (always for the `last` event)."""
        now = time.perf_counter()
        if now - self._last < self.every and not last:
            return False
        self._last = now
        return True
