"""The start of every page: language, style, strings, lesson text and title."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st

from pages.common.i18n import Strings, current_lang, strings
from pages.common.lesson import Lesson, lesson

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@cache
def _css(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def style() -> None:
    """Inject the stylesheet, plus the projector sheet when projector mode is on."""
    css = _css("style.css")
    if st.session_state.get("projector"):
        css += _css("projector.css")
    st.html(f"<style>{css}</style>")


def start(name: str, with_lesson: bool = True) -> tuple[Strings, Lesson | None]:
    """Set up a page: style, strings and lesson of `name` in the session language, and title."""
    lang = current_lang()
    if st.query_params.get("lang") != lang:
        st.query_params["lang"] = lang
    style()
    s = strings(name)
    text = lesson(name) if with_lesson else None
    st.title(s["title"])
    return s, text
