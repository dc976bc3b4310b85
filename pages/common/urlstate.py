"""Set a page's controls from its link, and give the learner a link to the setup they made.

Call :func:`restore` before the widgets (it seeds their session state from the URL, or
from the defaults) and :func:`mirror` after them (it notes the current values as the page's
link). Widgets are created with ``key=param.key`` and no ``value=`` of their own.
:func:`arrive` (called by ``pages.common.page.start`` at the top of every page run) tells a
learner's arrival on a page from a rerun of the page they are on.

The address is written only when the learner asks for a link (:func:`share`): Streamlit's
browser side pushes a history entry for every change of ``st.query_params``, so a page that
rewrote its address on arrival and on each move of a control would fill the history, and the
browser's Back would step through the page's settings instead of returning to the page before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from specdec_core.course.sampling_lab import snap_temperature

_LAST = "_url_last"  # per key, the address's value last applied to the control
_LINK = "_url_link"  # per key, the Param of a control the page's link carries (mirror)
_SHARED = "_url_shared"  # the query share() just wrote, shown on the next run
_PAGE = "_url_page"  # the page the session's last whole-page run showed


@dataclass(frozen=True)
class Param:
    """One control: its codec, default, and the bounds (`lo`, `hi`, a slider's `step`) or
    `options` its widget offers (pages/common/form.py draws it): names for a choice, or the
    steps of a select slider (numbers there); `options` may be a function giving them, called
    when the form is built. Its `key` is the session-state / widget key (also its URL name):
    given here, or by the :class:`~pages.common.form.Form` that declares it."""

    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str
    lo: Any = None
    hi: Any = None
    options: Any = ()
    step: Any = None
    key: str = ""

    def at(self, default: Any) -> Param:
        """This control with the default `default`, kept within its bounds and on its step."""
        if self.step is not None:
            default = round(round(min(max(default, self.lo), self.hi) / self.step) * self.step, 9)
        return replace(self, default=default)


def _bounded(cast: Callable[[str], Any], lo: float, hi: float) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        value = cast(raw)
        if not lo <= value <= hi:
            raise ValueError(f"{value} outside [{lo}, {hi}]")
        return value

    return parse


def _among(choices: Any, cast: Callable[[str], Any] = str) -> Callable[[str], Any]:
    """A parser for one of `choices` (or of what the function `choices` gives now)."""

    def parse(raw: str) -> Any:
        value = cast(raw)
        if value not in (choices() if callable(choices) else choices):
            raise ValueError(raw)
        return value

    return parse


def float_param(default: float, lo: float, hi: float, step: float | None = None, key: str = "") -> Param:
    """A number in [`lo`, `hi`]; with a `step`, its slider's step (a default given later snaps to it)."""
    return Param(default, _bounded(float, lo, hi), lambda v: f"{float(v):.6g}", lo, hi, step=step, key=key)


def int_param(default: int, lo: int, hi: int, key: str = "") -> Param:
    return Param(default, _bounded(int, lo, hi), str, lo, hi, key=key)


def bool_param(default: bool, key: str = "") -> Param:
    def parse(raw: str) -> bool:
        if raw not in ("0", "1"):
            raise ValueError(raw)
        return raw == "1"

    return Param(default, parse, lambda v: "1" if v else "0", key=key)


def choice_param(default: str, choices: Sequence[str] | Callable[[], Sequence[str]], key: str = "") -> Param:
    """One of `choices` (or of what the function `choices` gives when the form is built)."""
    return Param(default, _among(choices), options=choices, key=key)


def steps_param(default: int, steps: Sequence[int], key: str = "") -> Param:
    """A select slider over the numbers `steps` (a link's value must be one of them)."""
    return Param(default, _among(steps, int), options=tuple(steps), key=key)


def text_param(default: str, max_len: int, key: str = "") -> Param:
    """A free-text control; a URL value longer than `max_len` characters is refused."""

    def parse(raw: str) -> str:
        if len(raw) > max_len:
            raise ValueError("too long")
        return raw

    return Param(default, parse, hi=max_len, key=key)


def temperature_param(default: float, steps: Sequence[float], key: str = "") -> Param:
    """A temperature slider over `steps`; a link's value is snapped to the nearest step (one
    between two steps is not refused)."""
    return Param(
        default,
        lambda raw: snap_temperature(float(raw), steps),
        lambda v: f"{v:g}",
        options=tuple(steps),
        key=key,
    )


def keys_param(
    default: Sequence[str] | Callable[[], Sequence[str]] | None,
    allowed: Sequence[str] | Callable[[], Sequence[str]],
    key: str = "",
) -> Param:
    """Several of `allowed` (a multiselect; or of what the function `allowed` gives when the
    form is built), comma-separated in the URL and kept in `allowed`'s order; none, or one not
    allowed, is refused. A `default` of None is a choice not made yet (the page makes it); a
    function gives a list."""

    def parse(raw: str) -> list[str]:
        names = allowed() if callable(allowed) else allowed
        chosen = [k for k in raw.split(",") if k]
        if not chosen or any(k not in names for k in chosen):
            raise ValueError(raw)
        return [k for k in names if k in chosen]

    start = default if default is None or callable(default) else list(default)
    return Param(start, parse, ",".join, options=allowed, key=key)


def arrive(page: str) -> bool:
    """Note that a whole-page run of `page` begins; call it before any :func:`restore` of the run.
    Returns whether the run arrives from another page.

    Opening another page (a ``st.page_link``, the menu, the browser's history) keeps the
    session but drops the left page's widget state, so the address such a run carries is a
    link to follow in full, even one this session followed before: clicking the same link a
    second time in the same tab must set its page up again. Arriving therefore forgets which
    values were applied and the left page's link; reruns of the same page (and fragment runs,
    which do not call this) keep them.
    """
    ss = st.session_state
    if ss.get(_PAGE) != page:
        ss[_PAGE] = page
        ss[_LAST] = {}
        ss[_LINK] = {}
        ss.pop(_SHARED, None)
        return True
    return False


def restore(params: Sequence[Param]) -> list[str]:
    """Seed each control from the URL when it carries a value not yet applied, else its default.

    Returns the keys whose URL value could not be read (they keep their default).

    On a run that arrives from another page (:func:`arrive`) every value the URL carries is
    applied. The address does not follow the widgets, so on later reruns it still holds the
    values applied on arrival (or written by :func:`share`): those are never applied again,
    and only a value not applied yet (a link typed in by hand) overrides a widget.
    """
    last: dict[str, str] = st.session_state.setdefault(_LAST, {})
    rejected: list[str] = []
    for prm in params:
        raw = st.query_params.get(prm.key)
        if raw is not None and raw != last.get(prm.key):
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
    """Note each control as part of the page's link (:func:`share` reads its value then)."""
    link: dict[str, Param] = st.session_state.setdefault(_LINK, {})
    for prm in params:
        link[prm.key] = prm


def link_query(lang: str, drop: Sequence[str] = ()) -> dict[str, str]:
    """The query of a link to the page as it is set up now: the address it was opened with
    (less the keys in `drop`), its language, and the value of every control noted by
    :func:`mirror` since the learner arrived, read now (a control's last run may have been
    cut short by the request for the link). A value the page has not drawn (e.g. behind a
    passcode) stays as the address gave it."""
    ss = st.session_state
    opened = {k: v for k, v in st.query_params.to_dict().items() if k not in drop}
    values = {key: prm.dump(ss[key]) for key, prm in ss.get(_LINK, {}).items() if key in ss}
    return {**opened, "lang": lang, **values}


def share(lang: str, drop: Sequence[str] = ()) -> None:
    """Write the page's link (:func:`link_query`) into the address, once (call from a callback):
    one history entry, and the address bar then holds a link that sets the page up as it is."""
    query = link_query(lang, drop)
    st.session_state.setdefault(_LAST, {}).update(query)  # our own values: never re-applied
    st.query_params.from_dict(query)
    st.session_state[_SHARED] = query


def shared() -> dict[str, str] | None:
    """The query :func:`share` wrote on this page, once: the run after the request reads it."""
    return st.session_state.pop(_SHARED, None)


def redraw_controls() -> None:
    """Send every URL-mirrored control's value to the browser again (call from a callback).

    A keyed selectbox keeps its identity when its option labels change, and the browser keeps
    showing the label it had: after a language switch it would still display the old
    language. Re-assigning the value through session state makes Streamlit send it afresh.
    """
    for key in st.session_state.get(_LINK, {}):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
