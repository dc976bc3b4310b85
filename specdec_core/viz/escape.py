"""Untrusted text shown literally: token texts, labels, prompts, model names, file contents.

Model output and learners' labels can hold ``**``, ``[x](y)``, ``$…$``, backticks or
``<b>``. Shown through Markdown (``st.markdown``, captions, radio labels, metric labels,
alerts) they must read as what they are, never as bold, a live link or a formula; shown
through HTML (``st.html``, plotly text) they must never become tags. :func:`md` escapes every
ASCII punctuation character with a backslash (CommonMark allows that for each of them, and
Streamlit's own extensions — ``$`` maths, ``:red[…]`` colours, ``:emoji:`` shortcodes — all
start with punctuation); :func:`md_strong` does that inside bold markers; :func:`html_text`
escapes for HTML.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Iterable
from pathlib import Path

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md(text: object) -> str:
    """`text` as Markdown source that renders as exactly `text` (one line stays one line).

    Line breaks become hard breaks (two spaces, newline), so a line never runs into the next.
    """
    escaped = _PUNCTUATION.sub(r"\\\1", str(text))
    return escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "  \n")


def md_strong(text: object) -> str:
    """`text` escaped and set in bold: a token named on a lesson line."""
    return f"**{md(text)}**"


def html_text(text: object, quote: bool = True) -> str:
    """`text` escaped for HTML content or a quoted attribute value."""
    return html.escape(str(text), quote=quote)


def html_all(texts: Iterable[object]) -> list[str]:
    """:func:`html_text` of each item (plotly tick labels, hover data)."""
    return [html_text(t) for t in texts]


_PATH = re.compile(r"(?:/[\w.+@~-]+){2,}/?")
_SERVER_DIRS = (
    sys.prefix,
    str(Path(__file__).resolve().parents[2]),
    "site-packages",
    "dist-packages",
    "/.cache/",
    "/usr/lib/",
)


def server_paths_hidden(text: object) -> str:
    """`text` (an error message) with paths inside the server's own installation, caches and
    the app's folder cut to their last part (``…/config.json``): a learner needs the file's
    name, not where the server keeps it. Paths elsewhere (a folder the user typed) stay."""

    def cut(m: re.Match[str]) -> str:
        path = m.group(0)
        if any(d in path for d in _SERVER_DIRS):
            return "…/" + path.rstrip("/").rsplit("/", 1)[-1]
        return path

    return _PATH.sub(cut, str(text))
