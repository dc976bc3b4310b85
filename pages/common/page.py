"""The start of every page: language, style, strings, lesson text, title and the link's values;
and the two pieces every lesson page builds its body from (a controls box, one fragment)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import streamlit as st
from streamlit import config

from pages.common.class_answers import send_waiting
from pages.common.i18n import Strings, current_lang, strings
from pages.common.lesson import Lesson, lesson
from pages.common.nav import PAGES
from pages.common.urlstate import Param, arrive, restore

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


#: Whether app.py's navigation has been declared in this server process (see :func:`navigation`).
_navigation_declared = False


def navigation(pages: dict[str, list[st.Page]], expanded: bool = False) -> st.Page:
    """app.py's ``st.navigation`` over `pages` (section → pages), remembered for
    :func:`_through_entry_script`; `expanded` shows every page of the menu."""
    global _navigation_declared
    _navigation_declared = True
    return st.navigation(pages, expanded=expanded)


def _through_entry_script() -> None:
    """Make a page opened by its own URL run under app.py's navigation.

    Until a run calls ``st.navigation``, Streamlit serves a ``pages/`` folder as a legacy
    multipage app: the first visit to e.g. ``/overlap`` on a fresh server runs that file
    alone, with Streamlit's own sidebar and without the language switch. Once
    ``st.navigation`` has been called Streamlit ignores the folder, so such a run declares
    a navigation of the course's pages and reruns, which goes through app.py.

    Under AppTest pages run alone (a rerun there would swallow button clicks; see
    support/apptest.py).
    """
    if _navigation_declared or config.get_option("global.appTest"):
        return
    navigation({"": [st.Page(page.file) for page in PAGES]})
    st.rerun()


def start(name: str, with_lesson: bool = True, params: Sequence[Param] = ()) -> tuple[Strings, Lesson | None]:
    """Set up a page: style, strings and lesson of `name` in the session language, title, and
    its controls `params` seeded from the link (urlstate.restore, with :func:`warn_rejected`).
    Arriving from another page makes the URL's values a link to follow (urlstate.arrive).
    On a classroom server, quiz answers waiting for the database are sent (class_answers)."""
    _through_entry_script()
    send_waiting()
    arrive(name)
    lang = current_lang()
    if st.query_params.get("lang") != lang:
        st.query_params["lang"] = lang
    style()
    s = strings(name)
    text = lesson(name) if with_lesson else None
    st.title(s["title"])
    if params:
        warn_rejected(s, restore(params))
    return s, text


def warn_rejected(s: Strings, keys: Sequence[str]) -> None:
    """Say, in the page's words (`s`'s ``url_rejected``, given the keys), that the link's values
    for `keys` could not be read and were reset (the keys urlstate.restore returned)."""
    if keys:
        st.warning(s("url_rejected", keys=", ".join(keys)))


@contextmanager
def controls_box(s: Strings, key: str | None = None) -> Iterator[None]:
    """The bordered box a lesson's controls sit in, headed by the page's ``controls`` string;
    a `key` starting ``noprint_`` leaves it out of print (assets/print.css)."""
    with st.container(border=True, key=key):
        st.markdown(f"**{s['controls']}**")
        yield


def lesson_body(body: Callable[[], None]) -> None:
    """Draw `body` — a lesson's controls and everything they drive — as one fragment, so a
    control changed reruns only this part of the page (CONTRIBUTING: one st.fragment each)."""
    st.fragment(body)()
