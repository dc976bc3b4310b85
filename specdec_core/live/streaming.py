"""A run's text and counters while it streams, and the pace of a kept run played back.

:class:`TextFeed` keeps the spans of the events seen so far with running totals, and
:meth:`TextFeed.take` hands out the spans not shown yet, each with the text
:func:`specdec_core.live.text.readable` would give it (the same UTF-8 decoder, fed token by
token). :func:`played` says how many of a kept run's rounds a playback shows after some time.

The one difference from ``readable``: the bytes of a character still incomplete at the end
of the text are not shown on its last token until the run ends (a later token may complete
them); a finished view drawn from the whole trace shows them as ``readable`` does.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from specdec_core.engine import RoundEvent
from specdec_core.live.text import TokenSpan, spans, token_bytes


@dataclass(frozen=True)
class Shown:
    """One span and what it shows (None: a piece of a character that a later token completes)."""

    span: TokenSpan
    text: str | None


class TextFeed:
    """The spans of a streaming run, each handed out once, with the run's totals so far."""

    def __init__(self, text_of: Callable[[int], str], show_void: bool = False) -> None:
        self._text_of = text_of
        self._show_void = show_void
        self._decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
        self._pending: list[Shown] = []
        self.rounds = 0
        self.tokens = 0
        self.seconds = 0.0  # model compute time (the events' total_s)

    def add(self, event: RoundEvent) -> None:
        """Take in one event: its spans join the text, its tokens and time the totals."""
        self.rounds += 1
        self.tokens += len(event.committed)
        self.seconds += event.total_s
        for span in spans([event], show_void=self._show_void):
            raw = token_bytes(self._text_of(span.token))
            if span.kind in ("rejected", "void"):  # not in the text: read on its own
                self._pending.append(Shown(span, raw.decode("utf-8", "backslashreplace")))
                continue
            shown = self._decoder.decode(raw)
            self._pending.append(Shown(span, shown if shown or not raw else None))

    def take(self) -> list[Shown]:
        """The spans added since the last call."""
        out, self._pending = self._pending, []
        return out

    @property
    def tokens_per_second(self) -> float:
        """Tokens per second of model time so far (0 before any time is measured)."""
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def played(seconds: Sequence[float], elapsed: float, max_pause: float) -> int:
    """How many rounds a playback shows `elapsed` seconds after it began: round i appears once
    the pauses of the rounds before it (each round's recorded `seconds`, capped at
    `max_pause`) have passed; the first at once."""
    shown, clock = 0, 0.0
    for s in seconds:
        if clock > elapsed:
            break
        shown += 1
        clock += min(max(s, 0.0), max_pause)
    return shown
