"""Handouts: three one-page sheets to print from the browser — the acceptance rule and the
residual with the overlap bars, expected tokens and the speedup with their tables, and the
whole-sequence proof (the block lesson's own text). The numbers come from
specdec_core.course.handouts; assets/print.css and assets/handouts.css make each sheet print
on one page without the app's chrome or this page's controls."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from pages.common import form
from pages.common import profile as shown
from pages.common.figure import show_figure
from pages.common.form import Form
from pages.common.i18n import strings
from pages.common.lesson import lesson
from pages.common.page import ASSETS, start
from pages.common.urlstate import choice_param, mirror
from specdec_core.course.handouts import HANDOUTS, rule_sheet, speedup_sheet
from specdec_core.live.profile_quotes import course_costs
from specdec_core.viz import overlap as overlap_viz
from specdec_core.viz.escape import md


class HandoutForm(Form):
    """The page's one setting: which sheet it shows."""

    handout = choice_param(HANDOUTS[0], HANDOUTS)


FORM = HandoutForm()

#: The rule sheet's figures, in pixels: side by side they fit the width a printed page has
#: (about 720 px on A4 or Letter), and they print at the size they were drawn.
FIGURE_HEIGHT = 300
BARS_WIDTH, RESIDUAL_WIDTH = 430, 250
STATIC = {"displayModeBar": False}

s, text = start("handouts", params=FORM.params())
st.html(f"<style>{(ASSETS / 'handouts.css').read_text(encoding='utf-8')}</style>")

with st.container(key="noprint_handout_controls"):
    st.markdown(s["intro"])
    form.radio(st, FORM.handout, s["choose"], format_func=lambda k: s[f"names.{k}"], horizontal=True)
mirror(FORM.params())


def _f(value: float) -> str:
    return f"{value:.2f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (cells are numbers, labels from the TOML or escaped token text)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def rule() -> None:
    sheet = rule_sheet()
    figures = strings("overlap")  # the overlap lesson's own figure strings
    st.markdown(f"## {s['rule.title']}")
    text.show("rule")
    st.caption(s("rule.example", alpha=sheet.alpha, rejection=sheet.rejection))
    # fixed widths, side by side: a figure prints at the size it was drawn, and these fit the page
    with st.container(horizontal=True, wrap=False, key="handout_figures"):
        with st.container(width=BARS_WIDTH):
            fig = overlap_viz.overlap_bars(
                sheet.tokens,
                sheet.overlap,
                sheet.deficit,
                sheet.surplus,
                figures["chart.overlap"],
                FIGURE_HEIGHT,
            )
            show_figure(fig, "fig_handout_bars", width=BARS_WIDTH, theme=None, config=STATIC)
            st.caption(s["rule.bars"])
        if sheet.residual is not None:
            with st.container(width=RESIDUAL_WIDTH):
                fig = overlap_viz.residual_bars(
                    sheet.tokens, sheet.residual, figures["chart.residual"], FIGURE_HEIGHT
                )
                show_figure(fig, "fig_handout_residual", width=RESIDUAL_WIDTH, theme=None, config=STATIC)
                st.caption(s["rule.residual"])
    residual = sheet.residual if sheet.residual is not None else [None] * len(sheet.tokens)
    header = [
        s["rule.token"],
        "p",
        "q",
        "min(p, q)",
        "(p − q)₊",
        "(q − p)₊",
        s["rule.accept"],
        "r",
        s["rule.emitted"],
    ]
    rows = [
        [
            md(token),
            _f(p),
            _f(q),
            _f(o),
            _f(d),
            _f(u),
            _f(a) if q > 0 else s["rule.never"],
            s["rule.never"] if r is None else _f(r),
            _f(e),
        ]
        for token, p, q, o, d, u, a, r, e in zip(
            sheet.tokens,
            sheet.p,
            sheet.q,
            sheet.overlap,
            sheet.deficit,
            sheet.surplus,
            sheet.accept,
            residual,
            sheet.emitted,
            strict=True,
        )
    ]
    st.markdown(_table(header, rows))
    text.show("rule_why")
    st.caption(s["rule.footer"])


def speedup() -> None:
    # the linear table's β: this machine's profile, else the memory-bound reference (read at
    # each run: a model loaded since may have measured it), named in the table's title
    costs = course_costs()
    sheet = speedup_sheet(costs.beta().value)
    st.markdown(f"## {s['speedup.title']}")
    text.show("speedup")
    header = [s["speedup.alpha"], *(f"γ = {g}" for g in sheet.gammas)]
    st.markdown(f"**{s['speedup.tokens']}**\n\n" + _table(header, _grid(sheet.alphas, sheet.tokens)))
    for name, values, best, best_value in (
        ("ideal", sheet.ideal, sheet.best_ideal, sheet.best_ideal_speedup),
        ("linear", sheet.linear, sheet.best_linear, sheet.best_linear_speedup),
    ):
        rows = [
            [*row, f"{b} ({v:.2f})"]
            for row, b, v in zip(_grid(sheet.alphas, values), best, best_value, strict=True)
        ]
        title = s(f"speedup.{name}", c=sheet.c, beta=sheet.beta, source=shown.source(s, costs))
        st.markdown(f"**{title}**\n\n" + _table([*header, s["speedup.best"]], rows))
    st.markdown(s("speedup.example", **sheet.example))
    st.caption(s["speedup.footer"])


def _grid(alphas: Sequence[float], values) -> list[list[str]]:
    return [[f"{a:g}", *(_f(v) for v in row)] for a, row in zip(alphas, values, strict=True)]


def proof() -> None:
    st.markdown(f"## {s['proof.title']}")
    text.show("proof_lines")
    body = lesson("block").sections["proof"]  # the lesson's own proof, kept in one place
    if body.startswith("#"):  # its heading is this sheet's title
        body = body.split("\n", 1)[1]
    st.markdown(body)
    st.caption(s["proof.footer"])


with st.container(key="handout_sheet"):
    {"rule": rule, "speedup": speedup, "proof": proof}[form.value(FORM.handout)]()
