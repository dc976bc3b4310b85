"""Starting a live generation safely: check the prompt, wait for busy models, time the run.

* :func:`encode_prompt` refuses an empty prompt, an over-long one (before tokenising it:
  :func:`check_prompt`, which needs no model) and one that leaves no room in the model's
  context, each with a ``PromptError`` whose ``code`` a UI can translate.
* :func:`starter` gives the ``start(lock_timeout)`` of a speculative run (or of a
  target-only one, without a draft) with a run's settings.
* :class:`Stream` iterates a run's events; when another generation holds the models it
  polls with a short lock timeout, calling ``on_wait(seconds waited)`` between tries, and
  gives up with ``ModelBusyError`` after ``timeout`` seconds. It measures the run's wall
  time without the wait, and closing it closes the run (the engine releases its locks).
* :class:`Pacer` tells a UI streaming the events when it is due a repaint, so that painting
  weighs little on the timed run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from specdec_core.engine import RoundEvent, RunOptions, autoregressive, generate
from specdec_core.live.limits import MAX_PROMPT_CHARS
from specdec_core.live.settings import DecodeSettings
from specdec_core.models import ModelBusyError


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


def encode_prompt(model: Any, text: str, chat: bool, max_new_tokens: int) -> list[int]:
    """Token ids of `text` (with the chat template when `chat`), checked to fit the context."""
    check_prompt(text)
    try:
        ids = model.encode(text, chat=chat)
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


def starter(
    target: Any, draft: Any, prompt_ids: Sequence[int], settings: DecodeSettings, top_n: int
) -> Callable[[float], Iterator[RoundEvent]]:
    """``start(lock_timeout)`` for a :class:`Stream`: the speculative run of `draft` with
    `settings` (its sampling, γ, adaptive γ, length and seed), or the target-only run when
    `draft` is None; `top_n` probabilities are kept per row."""
    s, cfg = settings, settings.sampling()  # checked now, before any run starts
    if draft is None:
        return lambda wait: autoregressive(
            target,
            prompt_ids,
            cfg,
            s.max_new_tokens,
            s.seed,
            options=RunOptions(top_n=top_n, lock_timeout=wait),
        )
    return lambda wait: generate(
        target,
        draft,
        prompt_ids,
        cfg,
        s.gamma,
        s.max_new_tokens,
        s.seed,
        s.adaptive and not s.tree,
        options=RunOptions(top_n=top_n, lock_timeout=wait),
        tree=s.tree or None,
    )


class Stream:
    """The events of one run, started by ``start(lock_timeout)``, waiting politely for busy models.

    ``wall_s`` (after the run) is the time from when the models were free to the last
    event; ``waited_s`` the time spent waiting for another generation to finish.
    """

    def __init__(
        self,
        start: Callable[[float], Iterator[RoundEvent]],
        on_wait: Callable[[float], None] | None = None,
        timeout: float = 300.0,
        poll: float = 0.5,
    ) -> None:
        self._start = start
        self._on_wait = on_wait
        self.timeout = timeout
        self.poll = poll
        self.waited_s = 0.0
        self.wall_s = 0.0
        self._gen: Iterator[RoundEvent] | None = None

    def __iter__(self) -> Iterator[RoundEvent]:
        begin = time.perf_counter()
        first, t0 = self._first(begin)
        if first is None:
            return
        try:
            yield first
            self.wall_s = time.perf_counter() - t0
            for event in self._gen:  # type: ignore[union-attr]
                yield event
                self.wall_s = time.perf_counter() - t0
        finally:
            self.close()

    def _first(self, begin: float) -> tuple[RoundEvent | None, float]:
        while True:
            gen = self._start(self.poll)
            asked = time.perf_counter()
            try:
                first = next(gen)
            except StopIteration:
                return None, asked
            except ModelBusyError:
                gen.close()  # type: ignore[attr-defined]
                self.waited_s = time.perf_counter() - begin
                if self.waited_s >= self.timeout:
                    raise
                if self._on_wait is not None:
                    self._on_wait(self.waited_s)
                continue
            self._gen = gen
            if self.waited_s > 0:  # the lock came free during this try: start the clock there
                asked = time.perf_counter() - first.total_s
                self.waited_s = max(0.0, asked - begin)
            return first, asked

    def close(self) -> None:
        """Stop the run (releases the models); safe to call twice."""
        if self._gen is not None:
            self._gen.close()  # type: ignore[attr-defined]
            self._gen = None


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
