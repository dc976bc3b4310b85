"""Token labels for figures: one short line with visible whitespace, escaped for plotly text."""

from __future__ import annotations

from specdec_core.viz.escape import html_text

_MAX_LABEL = 10


def short_label(label: str, limit: int = _MAX_LABEL) -> str:
    """A token label on one short line: visible whitespace (a token's leading space matters),
    at most `limit` characters. Not escaped."""
    shown = label.replace("\n", "↵").replace("\t", "⇥").replace(" ", "␣") or "∅"
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def display_label(label: str, limit: int = _MAX_LABEL) -> str:
    """:func:`short_label`, HTML escaped for plotly text."""
    return html_text(short_label(label, limit))
