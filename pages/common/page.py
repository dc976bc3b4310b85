"""The start of every page: language, style, strings, lesson text and title."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st
from streamlit import config
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.pages_manager import PagesManager

from pages.common.gc_settle import settle_after_imports
from pages.common.i18n import Strings, current_lang, strings
from pages.common.lesson import Lesson, lesson

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@cache
def _css(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def style() -> None:
    """Inject the stylesheet and the print sheet, plus the projector sheet when projector mode is on."""
    css = _css("style.css") + _css("print.css")
    if st.session_state.get("projector"):
        css += _css("projector.css")
    st.html(f"<style>{css}</style>")


def _through_entry_script() -> None:
    """Make a page opened by its own URL run under app.py's navigation.

    Streamlit treats a ``pages/`` folder as a legacy multipage app until some run calls
    ``st.navigation``: a first visit to e.g. ``/overlap`` would run the page file alone,
    with Streamlit's automatic sidebar and without the language switch. Switching the
    legacy mode off and rerunning sends the request through app.py instead.

    AppTest resets the legacy flag before every run, and a rerun there would swallow button
    clicks, so under AppTest pages run alone (see support/apptest.py).
    """
    if PagesManager.uses_pages_directory and not config.get_option("global.appTest"):
        PagesManager.uses_pages_directory = False
        st.rerun()


def start(name: str, with_lesson: bool = True) -> tuple[Strings, Lesson | None]:
    """Set up a page: style, strings and lesson of `name` in the session language, and title."""
    _through_entry_script()
    settle_after_imports()  # once per process, with the first page's modules imported
    lang = current_lang()
    if st.query_params.get("lang") != lang:
        st.query_params["lang"] = lang
    style()
    s = strings(name)
    text = lesson(name) if with_lesson else None
    st.title(s["title"])
    return s, text


def slot() -> DeltaGenerator:
    """A container that is always on the page, for elements that come and go.

    The browser matches a rerun's elements to those on screen by position: a note written
    straight into the flow moves everything after it one place on, and all of it is mounted
    afresh (on the overlap lesson that doubled the redraw). Inside a slot it moves nothing.
    """
    return st.container()
