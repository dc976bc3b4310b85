"""The live page's coloured text: its figure strings in the session language, and the tokens as HTML."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from pages.common.i18n import strings
from pages.common.page import ASSETS
from specdec_core.live.streaming import Shown
from specdec_core.live.text import SPAN_KINDS, TokenSpan
from specdec_core.viz import live as viz

PROMPT_TAIL = 160  # characters of the prompt shown before the generated text
_KINDS = tuple(k for k in SPAN_KINDS if k != "void")  # "void" has its own string, not kinds.void


def fig_text() -> dict[str, str]:
    """The live figures' strings: the ``[fig]`` table, the token kinds and "not examined"."""
    s = strings("live")
    return {**s["fig"], **{k: s[f"kinds.{k}"] for k in _KINDS}, "void": s["void"]}


def tokens_html(
    prompt: str, items: Sequence[TokenSpan], text_of: Callable[[int], str], selected_round: int | None = None
) -> str:
    """The prompt's tail (grey) and the coloured tokens of `items`, with `selected_round` marked."""
    return viz.tokens_html(
        prompt, items, text_of, fig_text(), selected_round=selected_round, prompt_chars=PROMPT_TAIL
    )


def prompt_html(prompt: str) -> str:
    """The prompt's tail (grey) alone: the start of a streaming run's text."""
    return viz.tokens_html(prompt, [], str, fig_text(), prompt_chars=PROMPT_TAIL)


def feed_html(shown: Sequence[Shown]) -> str:
    """The coloured tokens of `shown` (from a ``TextFeed``), to append to a streaming text."""
    t = fig_text()  # viz has no default strings: the TOML is their only source
    return f'<div class="sd-tokens">{"".join(viz.span_html(x.span, x.text, t) for x in shown)}</div>'


#: The coloured tokens as a component that reports clicks (``assets/pick_tokens.js``); its
#: HTML is not isolated, so the app's stylesheet colours it like the ``st.html`` blocks.
_PICKER = st.components.v2.component(
    "sd_token_picker",
    js=(ASSETS / "pick_tokens.js").read_text(encoding="utf-8"),
    isolate_styles=False,
)


def pickable_tokens(html: str, key: str, on_pick: Callable[[], None]) -> None:
    """Show `html` (from :func:`tokens_html`); a click on a token calls `on_pick`, which finds
    ``{"round": r, "slot": i}`` in ``st.session_state[key].pick``."""
    _PICKER(data={"html": html}, key=key, on_pick_change=on_pick)
