"""The controls the block and tree-drafts lessons share: a Markov pair, a seed and a temperature,
and Next / Reset buttons that step the demo's rounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.common import form
from pages.common.i18n import Strings
from pages.common.page import controls_box
from pages.common.urlstate import Param, mirror


def _step(rounds: Param, n: int) -> None:
    st.session_state[rounds.key] = min(rounds.hi, max(0, form.value(rounds) + n))


def pair_stepper(s: Strings, f: Any, prefix: str, shape: Callable[[Any], object], many: int = 0) -> None:
    """Draw `f`'s chain, draft and seed, then `shape(column)` (the round's shape), T, and Next
    (and Many, `many` rounds at once, when given) and Reset stepping `f.round` within its
    bounds; the buttons' keys start with `prefix` (``block_next``, ``trd_reset``)."""
    with controls_box(s):
        c1, c2, c3 = st.columns([1.3, 1.6, 1.1])
        form.select(c1, f.chain, s["chain"], format_func=lambda c: s[f"chains.{c}"], help=s["chain_help"])
        form.radio(
            c2,
            f.draft,
            s["draft"],
            format_func=lambda d: s[f"drafts.{d}"],
            horizontal=True,
            help=s["draft_help"],
        )
        form.number(c3, f.seed, s["seed"], step=1, help=s["seed_help"])
        c4, c5, c6 = st.columns([1.3, 1.6, 1.1])
        shape(c4)
        form.slider(c5, f.t, s["T"], step=0.05, help=s["T_help"])
        with c6:
            step = {"on_click": _step, "width": "stretch"}
            st.button(s["next"], key=f"{prefix}_next", type="primary", args=(f.round, 1), **step)
            b1, b2 = st.columns(2) if many else (st, st)
            if many:
                b1.button(s("many", n=many), key=f"{prefix}_many", args=(f.round, many), **step)
            b2.button(s["reset"], key=f"{prefix}_reset", args=(f.round, -f.round.hi), **step)  # to 0
    mirror(f.params())
