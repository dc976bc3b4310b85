"""A page's settings named once: a form is a frozen dataclass whose fields are the page's
:class:`~pages.common.urlstate.Param` s (or nested forms), built per script run.

The same description gives the URL keys (:meth:`Form.params`, for ``restore`` once at the top
of the page and ``mirror`` after the widgets), the widgets (:func:`slider`, :func:`number`,
:func:`select`, :func:`multi`, :func:`segmented`, :func:`radio`, :func:`select_slider`,
:func:`toggle`, :func:`checkbox`, :func:`text`: key, bounds and options come from the Param,
so a widget cannot offer what its link would refuse) and the run request (:func:`value`, which
reads a control's value or its default, so a job built in a Start button's on_click needs no
second ``restore``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import streamlit as st

from pages.common.urlstate import Param


@dataclass(frozen=True)
class Form:
    """A page's settings: subclass it with one field per control (a Param or a nested Form)."""

    def params(self) -> list[Param]:
        """Every control's Param, nested forms' included, in field order."""
        out: list[Param] = []
        for f in fields(self):
            item = getattr(self, f.name)
            out.extend(item.params() if isinstance(item, Form) else [item])
        return out


def value(p: Param) -> Any:
    """The control's value now (its default when the last run drew no such widget)."""
    return st.session_state.get(p.key, p.default)


def slider(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """A slider over the Param's bounds."""
    return where.slider(label, p.lo, p.hi, key=p.key, **kw)


def number(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """A number box over the Param's bounds."""
    return where.number_input(label, min_value=p.lo, max_value=p.hi, key=p.key, **kw)


def select(where: Any, p: Param, label: str, options: tuple[str, ...] | None = None, **kw: Any) -> Any:
    """A select box over the Param's options (or `options`: those offered now, e.g. what the
    server allows for the chosen target)."""
    return where.selectbox(label, p.options if options is None else options, key=p.key, **kw)


def multi(where: Any, p: Param, label: str, options: tuple[str, ...] | None = None, **kw: Any) -> Any:
    """A multiselect over the Param's options (or `options`: those offered now, e.g. the targets
    a classroom server loaded)."""
    return where.multiselect(label, p.options if options is None else options, key=p.key, **kw)


def toggle(where: Any, p: Param, label: str, **kw: Any) -> Any:
    return where.toggle(label, key=p.key, **kw)


def checkbox(where: Any, p: Param, label: str, **kw: Any) -> Any:
    return where.checkbox(label, key=p.key, **kw)


def segmented(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """A segmented control over the Param's options."""
    return where.segmented_control(label, p.options, key=p.key, **kw)


def radio(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """Radio buttons over the Param's options."""
    return where.radio(label, p.options, key=p.key, **kw)


def select_slider(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """A slider over the Param's options, in their order (numbers too, e.g. a log scale)."""
    return where.select_slider(label, p.options, key=p.key, **kw)


def text(where: Any, p: Param, label: str, area: bool = False, **kw: Any) -> Any:
    """A text box (or `area`) whose length is the Param's bound."""
    if area:
        return where.text_area(label, key=p.key, max_chars=p.hi, **kw)
    return where.text_input(label, key=p.key, max_chars=p.hi, **kw)


def link_reader(query: Mapping[str, str]) -> Callable[[Param], Any]:
    """A control's value as a link with `query` sets it up (its default where the link says
    nothing; ValueError for a value the control refuses)."""
    return lambda p: p.parse(query[p.key]) if p.key in query else p.default
