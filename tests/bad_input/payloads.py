"""Hostile text and how to tell that a page showed it literally.

``PAYLOADS`` are tokens / labels built from Markdown, KaTeX and HTML specials, each with a
marker word so a test can find where it is shown. A shown Markdown string passes
:func:`shows_literally` when (1) rendering it (CommonMark, as Streamlit's renderer reads it)
gives the payload back as plain text — no tag, link, emphasis or code span made of it — and
(2) every punctuation character of the payload is backslash-escaped in the source, which is
what keeps Streamlit's own extensions (``$`` maths, ``:red[…]`` colours, ``:emoji:``) off it:
CommonMark alone does not know them, so (1) cannot see them.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

PAYLOADS: tuple[str, ...] = (
    "**zq1**",
    "_zq2_",
    "$zq3^2$",
    "`zq4`",
    "[zq5](h:x)",
    "<b>zq6</b>",
    "a\\zq7",
    "#zq8",
    ":red[zq9]",
    "&amp;zq0",
)
#: The marker word inside each payload.
MARKERS: tuple[str, ...] = tuple(f"zq{(i + 1) % 10}" for i in range(len(PAYLOADS)))

_MD = MarkdownIt("commonmark")


def rendered_text(source: str) -> str:
    """The visible text of Markdown `source` (tags removed, entities read), or raise if it made
    markup other than paragraphs and line breaks."""
    out = _MD.render(source)
    tags = set(re.findall(r"</?([a-z0-9]+)", out))
    if tags - {"p", "br", "strong", "em"}:  # the page's own bold and italics are fine
        raise AssertionError(f"{source!r} renders markup {sorted(tags)}: {out!r}")
    return html.unescape(re.sub(r"<[^>]+>", "", out)).strip()


def _escaped_pattern(payload: str) -> re.Pattern[str]:
    parts = [r"\\" + re.escape(c) if re.match(r"[!-/:-@\[-`{-~]", c) else re.escape(c) for c in payload]
    return re.compile("".join(parts))


def shows_literally(source: str, payload: str) -> bool:
    """`source` (a Markdown string shown by a page) shows `payload` as its literal text."""
    try:
        text = rendered_text(source)
    except AssertionError:
        return False
    return payload in text and bool(_escaped_pattern(payload).search(source))


def figure_is_escaped(spec: str, payload: str) -> bool:
    """A plotly figure's JSON shows `payload` only HTML-escaped (plotly text reads some HTML)."""
    return payload not in spec or not any(c in payload for c in "<>&")


def literal_everywhere(sources: list[str], payloads: tuple[str, ...], shown: dict[str, str]) -> list[str]:
    """Problems: each payload must be shown literally in some source, and every source carrying
    its marker must show it literally. `shown` maps a payload to its display form (a label)."""
    problems = []
    for payload, marker in zip(payloads, MARKERS, strict=True):
        want = shown.get(payload, payload)
        carrying = [s for s in sources if marker in s]
        if not carrying:
            problems.append(f"{payload!r} is not shown at all")
        problems += [f"{payload!r} not literal in {s!r}" for s in carrying if not shows_literally(s, want)]
    return problems
