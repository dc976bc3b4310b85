"""A page's settings, each written once: a form class declares one attribute per control (a
:class:`~pages.common.urlstate.Param`, or a nested form class), and an instance built per script
run holds its Params, keyed.

The same description gives the URL keys (:meth:`Form.params`, for ``restore`` once at the top
of the page and ``mirror`` after the widgets), the widgets (:func:`slider`, :func:`number`,
:func:`select`, :func:`multi`, :func:`segmented`, :func:`radio`, :func:`select_slider`,
:func:`toggle`, :func:`checkbox`, :func:`text`: key, bounds, step and options come from the
Param, so a widget cannot offer what its link would refuse) and the values (:meth:`Form.read`,
by default each control's value or its default, so a job built in a Start button's on_click
needs no second ``restore``; or a link's, :func:`link_reader`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from types import SimpleNamespace
from typing import Any, ClassVar

import streamlit as st

from pages.common.urlstate import Param


class Form:
    """A page's settings: subclass it with one attribute per control, a Param or a nested Form
    class. A control's key (also its URL name) is the Param's own, else the form's `prefix`,
    ``_`` and the attribute's name (the attribute's name alone without a prefix); a nested form
    takes its parent's prefix. Building it (``MyForm()``, per script run) reads options and
    defaults given as functions (e.g. the catalog's targets) and sets the `defaults` named
    (e.g. ``beta=0.2``)."""

    prefix: ClassVar[str] = ""

    def __init__(self, prefix: str | None = None, **defaults: Any) -> None:
        prefix = type(self).prefix if prefix is None else prefix
        for name, item in self._declared():
            if isinstance(item, type):
                setattr(self, name, item(prefix, **defaults))
                continue
            key = item.key or (f"{prefix}_{name}" if prefix else name)
            options, default = (x() if callable(x) else x for x in (item.options, item.default))
            built = replace(item, key=key, options=tuple(options), default=default)
            setattr(self, name, built.at(defaults[name]) if name in defaults else built)

    @classmethod
    def _declared(cls) -> Iterator[tuple[str, Any]]:
        """The controls declared, base classes' first, in the order written."""
        for klass in reversed(cls.__mro__):
            for name, item in vars(klass).items():
                if isinstance(item, Param) or (isinstance(item, type) and issubclass(item, Form)):
                    yield name, item

    def _built(self) -> Iterator[tuple[str, Any]]:
        return ((name, getattr(self, name)) for name, _ in self._declared())

    def params(self) -> list[Param]:
        """Every control's Param, nested forms' included, in declaration order."""
        return [p for _, item in self._built() for p in (item.params() if isinstance(item, Form) else [item])]

    def read(self, read: Callable[[Param], Any] | None = None) -> Any:
        """Each control's value by its attribute's name (a nested form's as a namespace of its
        own); `read` gives a control's value, by default the session's (:func:`value`)."""
        get = read or value
        return SimpleNamespace(
            **{n: i.read(get) if isinstance(i, Form) else get(i) for n, i in self._built()}
        )


def value(p: Param) -> Any:
    """The control's value now (its default when the last run drew no such widget)."""
    return st.session_state.get(p.key, p.default)


def slider(where: Any, p: Param, label: str, **kw: Any) -> Any:
    """A slider over the Param's bounds (and on its step, where it has one)."""
    if p.step is not None:
        kw.setdefault("step", p.step)
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
