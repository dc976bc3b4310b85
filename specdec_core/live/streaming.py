"""A run's text and counters while it streams, handed to the view a piece at a time.

A repaint that re-sent the whole coloured text every fraction of a second grew with the run
(each message carried every token so far, and the browser rebuilt all of it) and re-added
the run's events for its caption. :class:`TextFeed` keeps the spans of the events seen so
far with running totals, and :meth:`TextFeed.take` hands out only the spans not shown yet,
each with the text :func:`specdec_core.live.text.readable` would give it (the same UTF-8
decoder, fed token by token), so a view can append them. :class:`Chunks` groups those pieces
into a few elements: where every repaint makes the browser redraw every element on the page
(Streamlit), one new element per repaint made each repaint dearer as the run grew.

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


class Chunks:
    """A streaming text's pieces in a bounded number of elements, each rewritten as it grows.

    :meth:`add` takes the pieces of one repaint and says whether they start a new element, with
    every piece of the current element: a view rewrites that element with them. An element takes
    `repaints` repaints, so a run of R repaints makes R / `repaints` elements, and a repaint
    sends no more than `repaints` repaints' pieces.
    """

    def __init__(self, repaints: int) -> None:
        if repaints < 1:
            raise ValueError(f"repaints must be at least 1, not {repaints}")
        self.repaints = repaints
        self._count = 0
        self._current: list[Shown] = []

    def add(self, pieces: Sequence[Shown]) -> tuple[bool, list[Shown]]:
        """(whether `pieces` start a new element, the current element's pieces with them)."""
        fresh = self._count % self.repaints == 0
        self._current = [*([] if fresh else self._current), *pieces]
        self._count += 1
        return fresh, self._current
