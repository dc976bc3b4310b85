"""The start of every page: language, style, strings, lesson text, title and the link's values;
and the two pieces every lesson page builds its body from (a controls box, one fragment)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit import config

from pages.common.class_answers import send_waiting
from pages.common.i18n import Strings, current_lang, strings
from pages.common.lesson import Lesson, lesson
from pages.common.nav import PAGES
from pages.common.urlstate import Param, arrive, restore, share, shared
from specdec_core.live.limits import MAX_UPLOAD_MB

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def style() -> None:
    """Inject the stylesheet, the print sheet and Streamlit's own strings in the page's language,
    plus the projector sheet when projector mode is on."""
    css = _asset("style.css") + _asset("print.css") + _streamlit_strings(current_lang())
    if st.session_state.get("projector"):
        css += _asset("projector.css")
    st.html(f"<style>{css}</style>")


@cache
def _streamlit_strings(lang: str) -> str:
    """Streamlit's own visible strings (the uploader's button and note, the inputs' Enter hints)
    in `lang`: common.toml's ``[streamlit]`` as the custom properties that
    assets/streamlit_strings.css draws in their place."""
    table = {**Strings("common", lang).get("streamlit")}
    table["upload_note"] = table["upload_note"].format(mb=MAX_UPLOAD_MB)
    props = " ".join(f"--sd-st-{k}: {json.dumps(v, ensure_ascii=False)};" for k, v in table.items())
    return f":root {{ {props} }}\n" + _asset("streamlit_strings.css")


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
    arrived = arrive(name)
    lang = current_lang()
    style()
    s = strings(name)
    text = lesson(name) if with_lesson else None
    st.title(s["title"])
    _back_to_route(s, name, arrived)
    _share_control(s, lang)
    if params:
        warn_rejected(s, restore(params))
    return s, text


#: A teaching route's link names its step: ``from_step=<route>:<step key>:<number>``.
FROM_STEP = "from_step"
_FROM_STEP = re.compile(r"([a-z_]+):([a-z0-9_]+):([0-9]{1,3})")
_FROM = "_route_from"  # (route, step key, number) of the route step this page was opened from
_RETURN = "_route_return"  # the route step's container a return to the route scrolls to


def route_step_query(route: str, step: str, n: int) -> dict[str, str]:
    """What a route's link adds to its query so the page opened shows "back to step `n`"."""
    return {FROM_STEP: f"{route}:{step}:{n}"}


def _back_to_route(s: Strings, name: str, arrived: bool) -> None:
    """On a page opened from a teaching route, a link back to the route's step (kept until the
    learner leaves the page, a copied link dropping the step from the address); the route, when
    shown again (this link or the browser's Back), scrolls to that step (:func:`return_to_route`)."""
    ss = st.session_state
    if arrived:
        found = _FROM_STEP.fullmatch(st.query_params.get(FROM_STEP, ""))
        ss[_FROM] = None if found is None or name == "teach" else found.groups()
    if not ss.get(_FROM):
        return
    route, step, n = ss[_FROM]
    ss[_RETURN] = f"teach_{route}_{step}"
    st.page_link("pages/teach.py", label=s("back_to_step", n=int(n)))


def return_to_route() -> None:
    """On the teaching route's page: scroll to the step whose page the lecturer comes back from."""
    key = st.session_state.pop(_RETURN, None)
    if key is not None:
        scroll_to(key)


def scroll_to(key: str, focus: bool = False) -> None:
    """Scroll the container keyed `key` (drawn in this run) into view, and give it the keyboard's
    focus with `focus` (assets/scroll_to.js)."""
    n = st.session_state["_scroll_n"] = st.session_state.get("_scroll_n", 0) + 1  # a new element each time
    args = json.dumps({"selector": f".st-key-{key}", "focus": focus, "n": n})
    st.html(f"<script>{_asset('scroll_to.js')}\nsdScrollTo({args});</script>", unsafe_allow_javascript=True)


def _share_control(s: Strings, lang: str) -> None:
    """The sidebar's "copy link to this setup": the address is written once, when asked
    (urlstate.share), and the link is shown with a copy button."""
    st.sidebar.button(
        s["share_link"], key="_share_link", on_click=share, args=(lang, (FROM_STEP,)), icon=":material/link:"
    )
    query = shared()
    if query is not None:
        n = st.session_state["_shared_n"] = st.session_state.get("_shared_n", 0) + 1
        with st.sidebar.container(key=f"shared_link_{n}"):  # a new block for each link asked for
            st.code(f"{st.context.url or ''}?{urlencode(query)}", language=None, wrap_lines=True)
            st.caption(s["share_link_done"])


def warn_rejected(s: Strings, keys: Sequence[str]) -> None:
    """Say, in the page's words (`s`'s ``url_rejected``, given the keys; or the first key's own,
    ``url_rejected_<key>``, where the page has one), that the link's values for `keys` could not
    be read and were reset (the keys urlstate.restore returned)."""
    if keys:
        try:
            st.warning(s[f"url_rejected_{keys[0]}"])
        except KeyError:
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
