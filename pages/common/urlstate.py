"""Mirror a page's controls in the URL so a teacher can share the exact example.

Call :func:`restore` before the widgets (it seeds their session state from the URL, or
from the defaults) and :func:`mirror` after them (it writes the current values back).
Widgets are created with ``key=param.key`` and no ``value=`` of their own.
:func:`arrive` (called by ``pages.common.page.start`` at the top of every page run) tells a
learner's arrival on a page from a rerun of the page they are on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from specdec_core.course.sampling_lab import snap_temperature

_LAST = "_url_last"
_WRITTEN = "_url_written"  # per key, the values this session has put in the address (recent first)
_KEEP_WRITTEN = 64
_PAGE = "_url_page"  # the page the session's last whole-page run showed


@dataclass(frozen=True)
class Param:
    """One control: its session-state / widget key (also its URL name) and codec, with the
    bounds (`lo`, `hi`) or `options` its widget offers (pages/common/form.py draws it): names
    for a choice, or the steps of a select slider (numbers there)."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str
    lo: Any = None
    hi: Any = None
    options: tuple[Any, ...] = ()


def _bounded(cast: Callable[[str], Any], lo: float, hi: float) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        value = cast(raw)
        if not lo <= value <= hi:
            raise ValueError(f"{value} outside [{lo}, {hi}]")
        return value

    return parse


def float_param(key: str, default: float, lo: float, hi: float) -> Param:
    return Param(key, default, _bounded(float, lo, hi), lambda v: f"{float(v):.6g}", lo, hi)


def int_param(key: str, default: int, lo: int, hi: int) -> Param:
    return Param(key, default, _bounded(int, lo, hi), str, lo, hi)


def bool_param(key: str, default: bool) -> Param:
    def parse(raw: str) -> bool:
        if raw not in ("0", "1"):
            raise ValueError(raw)
        return raw == "1"

    return Param(key, default, parse, lambda v: "1" if v else "0")


def choice_param(key: str, default: str, choices: Sequence[str]) -> Param:
    def parse(raw: str) -> str:
        if raw not in choices:
            raise ValueError(raw)
        return raw

    return Param(key, default, parse, options=tuple(choices))


def text_param(key: str, default: str, max_len: int) -> Param:
    """A free-text control; a URL value longer than `max_len` characters is refused."""

    def parse(raw: str) -> str:
        if len(raw) > max_len:
            raise ValueError("too long")
        return raw

    return Param(key, default, parse, hi=max_len)


def temperature_param(key: str, default: float, steps: Sequence[float]) -> Param:
    """A temperature slider over `steps`; a link's value is snapped to the nearest step (one
    between two steps is not refused)."""
    return Param(
        key,
        default,
        lambda raw: snap_temperature(float(raw), steps),
        lambda v: f"{v:g}",
        options=tuple(steps),
    )


def keys_param(key: str, default: Sequence[str], allowed: Sequence[str]) -> Param:
    """Several of `allowed` (a multiselect), comma-separated in the URL and kept in `allowed`'s
    order; none, or one not allowed, is refused."""

    def parse(raw: str) -> list[str]:
        chosen = [k for k in raw.split(",") if k]
        if not chosen or any(k not in allowed for k in chosen):
            raise ValueError(raw)
        return [k for k in allowed if k in chosen]

    return Param(key, list(default), parse, ",".join, options=tuple(allowed))


def arrive(page: str) -> None:
    """Note that a whole-page run of `page` begins; call it before any :func:`restore` of the run.

    Opening another page (a ``st.page_link``, the menu, the browser's history) keeps the
    session but drops the left page's widget state, so the address such a run carries is a
    link to follow in full, even one this session wrote or followed before: clicking the
    same link a second time in the same tab must set its page up again. Arriving therefore
    forgets what this session wrote into the address; reruns of the same page (and fragment
    runs, which do not call this) keep that memory, which :func:`restore` needs.
    """
    ss = st.session_state
    if ss.get(_PAGE) != page:
        ss[_PAGE] = page
        ss[_LAST] = {}
        ss[_WRITTEN] = {}


def restore(params: Sequence[Param]) -> list[str]:
    """Seed each control from the URL when it carries a value not yet applied, else its default.

    Returns the keys whose URL value could not be read (they keep their default).

    On a run that arrives from another page (:func:`arrive`) every value the URL carries is
    applied. Afterwards a rerun carries the browser's address as it was when the rerun was
    asked for, which can lag behind the widgets: when a slider moves several times quickly,
    the address may still hold a value this session wrote one or two runs ago. Such an echo
    of our own writing is not a new link, so it never overrides a widget (the next
    :func:`mirror` corrects the address); only a value this session never wrote is.
    """
    last: dict[str, str] = st.session_state.setdefault(_LAST, {})
    written: dict[str, list[str]] = st.session_state.setdefault(_WRITTEN, {})
    rejected: list[str] = []
    for prm in params:
        raw = st.query_params.get(prm.key)
        if raw is not None and raw != last.get(prm.key) and raw not in written.get(prm.key, ()):
            last[prm.key] = raw
            try:
                st.session_state[prm.key] = prm.parse(raw)
                continue
            except (ValueError, TypeError):
                rejected.append(prm.key)
        if prm.key not in st.session_state:
            st.session_state[prm.key] = prm.default
    return rejected


def mirror(params: Sequence[Param]) -> None:
    """Write the current value of each control into the URL."""
    last: dict[str, str] = st.session_state.setdefault(_LAST, {})
    written: dict[str, list[str]] = st.session_state.setdefault(_WRITTEN, {})
    for prm in params:
        if prm.key in st.session_state:
            raw = prm.dump(st.session_state[prm.key])
            last[prm.key] = raw
            seen = written.setdefault(prm.key, [])
            if not seen or seen[0] != raw:
                if raw in seen:
                    seen.remove(raw)
                seen.insert(0, raw)
                del seen[_KEEP_WRITTEN:]
            if st.query_params.get(prm.key) != raw:
                st.query_params[prm.key] = raw


def redraw_controls() -> None:
    """Send every URL-mirrored control's value to the browser again (call from a callback).

    A keyed selectbox keeps its identity when its option labels change, and the browser keeps
    showing the label it had: after a language switch it would still display the old
    language. Re-assigning the value through session state makes Streamlit send it afresh.
    """
    for key in st.session_state.get(_LAST, {}):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
