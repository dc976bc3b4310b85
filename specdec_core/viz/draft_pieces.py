"""The draft's own pieces under each target token, for a draft over another tokenizer.

Plain data in (target token texts and, per token, ``[piece text, has a twin]`` pairs), escaped
HTML out: one column per committed target token, its text on top and the draft's pieces below.
A target token the draft spells with other than one twin piece is one it could not propose
(``sd-piece-apart``); a piece with no target twin is marked (``sd-piece-alone``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {"pieces_html": ("no_twin", "apart")}


def _shown(text: str) -> str:
    return escape(text).replace(" ", "␣").replace("\n", "⏎") or "∅"


def _piece(text: str, twin: bool, no_twin: str) -> str:
    if twin:
        return f'<span class="sd-piece">{_shown(text)}</span>'
    return f'<span class="sd-piece sd-piece-alone" title="{escape(no_twin)}">{_shown(text)}</span>'


def pieces_html(tokens: Sequence[tuple[str, Sequence[Sequence[Any]]]], text: Mapping[str, str]) -> str:
    """Columns of (target token text, its draft pieces); `text` gives ``no_twin`` and ``apart``
    (hover titles)."""
    text = pick(text, KEYS, "pieces_html")
    cols = []
    for target_text, pieces in tokens:
        apart = not (len(pieces) == 1 and pieces[0][1])
        head = (
            f'<span class="sd-piece-target sd-piece-apart" title="{escape(text["apart"])}">'
            if apart
            else '<span class="sd-piece-target">'
        )
        rows = "".join(_piece(str(p), bool(twin), text["no_twin"]) for p, twin in pieces)
        cols.append(f'<span class="sd-piece-col">{head}{_shown(target_text)}</span>{rows}</span>')
    return f'<div class="sd-pieces">{"".join(cols)}</div>'
