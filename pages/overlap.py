"""Lesson 2 — Overlap and residual: p and q taken apart, the output proved equal to p,
broken variants measured against p, and a Monte Carlo check of any of them."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import streamlit as st

from pages.common import form, urlstate
from pages.common.figure import show_figure
from pages.common.page import lesson_body, start
from pages.common.quiz import quiz
from pages.overlap_parts.form import FORM, LAWS, PAIR, TEMPERATURES
from specdec_core.course import overlap as one_step
from specdec_core.verify import Decomposition
from specdec_core.viz import memo, palette
from specdec_core.viz import overlap as viz

f = FORM
s, text = start("overlap", params=f.params())
MC_KEY = "ov_mc_result"
# the pair's maths, asked for again on every change of a control below it
breakdown = memo.result_cache(one_step.breakdown)
alpha_by_temperature = memo.result_cache(one_step.alpha_by_temperature)
draft_law = memo.result_cache(one_step.draft_law)
variant_laws = memo.result_cache(one_step.variant_laws)


def _chips(tokens: Sequence[str], colour: str = palette.DEFICIT) -> str:
    """Token labels as escaped chips in the colour of their role."""
    style = f"background:{colour}22;color:{colour};font-weight:600"
    return " ".join(f'<span class="sd-tok" style="{style}">{html.escape(t)}</span>' for t in tokens)


def _note(message: str, good: bool) -> None:
    st.html(f'<div class="sd-verdict {"yes" if good else "no"}">{message}</div>')


def _f(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}"


text.show("intro")


def _lesson() -> None:
    """The pair, and the overlap, residual, variants and temperature figures it drives."""
    st.header(s["pair_header"])
    left, right = st.columns([3, 2], gap="large")
    with left:
        PAIR.pickers(*st.columns([3, 1]))
        PAIR.note()
        rows = PAIR.editor()
        PAIR.edited_note()
    urlstate.mirror(f.pair.params())
    with right:
        pair = PAIR.valid_pair(rows)
    parts = None if pair is None else breakdown(pair.p, pair.q)

    def _pair_summary(b: one_step.Breakdown) -> None:
        d = b.decomposition
        with right:
            # one above the other: side by side, a projector's narrow column cut their numbers off
            st.metric(s["metric_r"], _f(d.rejection_mass), help=s["metric_r_help"], border=True)
            st.metric(s["metric_accept"], _f(d.acceptance_rate), help=s["metric_accept_help"], border=True)
            tokens = pair.tokens
            deficit = [tokens[i] for i in d.deficit_set]
            surplus = [tokens[i] for i in d.surplus_set]
            st.html(
                f"<p>{html.escape(s['deficit_set'])} {_chips(deficit) or '∅'}</p>"
                f"<p>{html.escape(s['surplus_set'])} {_chips(surplus, palette.SURPLUS) or '∅'}</p>"
            )

    def _bars(b: one_step.Breakdown) -> None:
        d = b.decomposition
        text.show("bars", heading=s["bars_header"])
        show_figure(
            viz.overlap_bars(pair.tokens, d.overlap, d.deficit, d.surplus, text=s["chart.overlap"]),
            "fig_overlap_bars",
        )
        _edge_notes(b)

    def _edge_notes(b: one_step.Breakdown) -> None:
        d = b.decomposition
        if d.residual is None:
            _note(html.escape(s["edge_equal"]), good=True)
        if b.never_proposed.size:
            chips = _chips([pair.tokens[i] for i in b.never_proposed])
            _note(html.escape(s["edge_q_zero"]).format(tokens=chips), good=False)
        if b.always_rejected.size:
            chips = _chips([pair.tokens[i] for i in b.always_rejected], palette.SURPLUS)
            _note(html.escape(s["edge_p_zero"]).format(tokens=chips), good=False)
        if d.acceptance_rate == 0:
            _note(html.escape(s["edge_disjoint"]), good=False)

    def _residual(b: one_step.Breakdown) -> None:
        d = b.decomposition
        text.show("residual", heading=s["residual_header"])
        _residual_figures(d)

    def _residual_figures(d: Decomposition) -> None:
        if d.residual is None:
            st.info(s["no_residual"])
            return
        c1, c2 = st.columns(2, gap="large")
        with c1:
            st.subheader(s["conservation_title"])
            show_figure(
                viz.conservation_bar(pair.tokens, d.surplus, d.deficit, text=s["chart.conservation"]),
                "fig_overlap_conservation",
            )
        with c2:
            st.subheader(s["residual_title"])
            show_figure(
                viz.residual_bars(pair.tokens, d.residual, text=s["chart.residual"]), "fig_overlap_residual"
            )

    def _proof(b: one_step.Breakdown) -> None:
        d = b.decomposition
        text.show("proof", heading=s["proof_header"])
        c1, c2 = st.columns([3, 1], gap="large")
        with c1:
            show_figure(
                viz.emitted_bars(pair.tokens, b.direct, b.via_residual, d.p, text=s["chart.emitted"]),
                "fig_overlap_emitted",
            )
        with c2:
            error = "0" if b.max_error == 0 else f"{b.max_error:.1e}"
            st.metric(s["metric_error"], error, help=s["metric_error_help"], border=True)
            st.caption(s["metric_error_caption"])
        with st.expander(s["numbers_title"], expanded=len(pair.tokens) <= 5):
            st.dataframe(_numbers(b), hide_index=True)
            if d.residual is None:
                st.caption(s["numbers_no_residual"])

    def _numbers(b: one_step.Breakdown) -> pa.Table:
        d = b.decomposition
        columns = {
            s["table.token"]: pair.tokens,
            s["table.p"]: [_f(v, 4) for v in d.p],
            s["table.q"]: [_f(v, 4) for v in d.q],
            s["table.alpha"]: [_f(a, 4) if ok else "—" for a, ok in zip(b.alpha, b.proposed, strict=True)],
            s["table.direct"]: [_f(v, 4) for v in b.direct],
            s["table.overlap"]: [_f(v, 4) for v in d.overlap],
            s["table.deficit"]: [_f(v, 4) for v in d.deficit],
            s["table.surplus"]: [_f(v, 4) for v in d.surplus],
        }
        if d.residual is not None:
            columns[s["table.residual"]] = [_f(v, 4) for v in d.residual]
            columns[s["table.via"]] = [_f(v, 4) for v in b.via_residual]
        columns[s["table.emitted"]] = [_f(v, 4) for v in b.emitted]
        return pa.table(columns)  # an Arrow table goes to the page as it is, no pandas round trip

    def _alpha_temperature(b: one_step.Breakdown) -> None:
        d = b.decomposition
        text.show("temperature", heading=s["alpha_t_header"])
        sweep = alpha_by_temperature(d.p, d.q, np.asarray(TEMPERATURES))
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        form.select_slider(
            c1, f.broken.t, s["alpha_t_slider"], format_func=lambda t: f"T = {t:g}", help=s["alpha_t_help"]
        )
        t_now = form.value(f.broken.t)
        at_now = float(sweep.alpha[TEMPERATURES.index(t_now)])
        c2.metric(s("alpha_t_metric", t=t_now), _f(at_now, 4), border=True)
        fig = viz.alpha_temperature(
            sweep.temperatures, sweep.alpha, sweep.limit_hot, (t_now, at_now), s["chart.alpha_temperature"]
        )
        show_figure(fig, "fig_overlap_alpha_t")
        low, high = int(np.argmin(sweep.alpha)), int(np.argmax(sweep.alpha))
        st.caption(
            s(
                "alpha_t_caption",
                cold=sweep.limit_cold,
                hot=sweep.limit_hot,
                low=float(sweep.alpha[low]),
                t_low=float(sweep.temperatures[low]),
                high=float(sweep.alpha[high]),
                t_high=float(sweep.temperatures[high]),
            )
        )

    def _broken(b: one_step.Breakdown) -> np.ndarray:
        """The broken-variants section; returns what the draft really samples (for the Monte Carlo)."""
        d = b.decomposition
        text.show("broken", heading=s["broken_header"])
        c1, c2 = st.columns([2, 1])
        form.radio(
            c1, f.broken.variant, s["variant"], format_func=lambda k: s[f"variants.{k}"], horizontal=True
        )
        variant = form.value(f.broken.variant)
        form.select(
            c2,
            f.broken.draft,
            s["draft_law"],
            format_func=lambda k: s[f"draft_laws.{k}"],
            help=s["draft_law_help"],
        )
        q_actual = draft_law(d.q, form.value(f.broken.draft))
        laws = variant_laws(d.p, d.q, q_actual)
        st.caption(s["tv_row"])
        row = st.container(horizontal=True)  # one block, not a column each; wraps when narrow
        for name in LAWS:
            row.metric(s[f"variants.{name}"], _f(laws[name][1]), border=True)
        law, tv = laws[variant]
        fig_col, text_col = st.columns([3, 2], gap="large")
        with fig_col:
            names = {**s["chart.comparison"], "law": s("emitted_by", name=s[f"variants.{variant}"])}
            show_figure(viz.law_comparison(pair.tokens, d.p, law, text=names), "fig_overlap_law")
        with text_col:
            verdict = s["tv_equal"] if tv == 0 else s["tv_differs"]
            st.metric(
                s["tv_big"],
                _f(tv),
                delta=verdict,
                delta_color="inverse" if tv else "off",
                delta_arrow="off",
                help=s["tv_help"],
            )
            if tv == 0:
                st.info(s["tv_zero"])
            text.show(f"why_{variant}")
        if variant == "draft_mismatch":
            st.caption(s["draft_table_caption"])
            st.dataframe(
                pa.table(
                    {
                        s["table.token"]: pair.tokens,
                        s["table.q"]: [_f(v, 4) for v in d.q],
                        s["table.q_actual"]: [_f(v, 4) for v in q_actual],
                    }
                ),
                hide_index=True,
            )
        return q_actual

    if parts is not None:
        _pair_summary(parts)
        _bars(parts)
        _residual(parts)
        _proof(parts)
        _alpha_temperature(parts)
        text.show("edge_cases")
        q_actual = _broken(parts)
        urlstate.mirror(f.broken.params())
        _monte_carlo(tuple(pair.tokens), parts.decomposition, q_actual)


@st.fragment
def _monte_carlo(tokens: tuple[str, ...], d: Decomposition, q_actual: np.ndarray) -> None:
    """The Monte Carlo check, a fragment inside the lesson's: Run and its settings rerun this
    section alone, so a press costs the trials and not the whole lesson's redraw."""
    text.show("montecarlo", heading=s["mc_header"])
    c1, c2, c3, c4 = st.columns([3, 1, 2, 1], vertical_alignment="bottom")
    mc = f.mc
    form.select_slider(c1, mc.n, s["mc_trials"], format_func=lambda n: f"{n:,}")
    form.number(c2, mc.seed, s["mc_seed"], step=1)
    form.select(c3, mc.law, s["mc_law"], format_func=lambda k: s[f"variants.{k}"])
    law, trials, seed = form.value(mc.law), form.value(mc.n), form.value(mc.seed)
    signature = (
        tokens,
        tuple(d.p),
        tuple(d.q),
        law,
        form.value(f.broken.draft) if law == "draft_mismatch" else None,
        trials,
        seed,
    )
    if c4.button(s["mc_run"], type="primary", key="ov_mc_run", width="stretch"):
        result = one_step.monte_carlo(
            d.p, d.q, trials, seed, law, q_actual if law == "draft_mismatch" else None
        )
        st.session_state[MC_KEY] = (signature, result)
    urlstate.mirror(mc.params())
    stored = st.session_state.get(MC_KEY)
    if stored is None:
        st.caption(s["mc_none"])
        return
    if stored[0] != signature:
        del st.session_state[MC_KEY]
        st.info(s["mc_stale"])
        return
    _mc_result(tokens, stored[1], d)


def _mc_result(tokens: tuple[str, ...], mc: one_step.MonteCarlo, d: Decomposition) -> None:
    chi = mc.chi
    p_text = "0" if chi.p_value == 0 else f"{chi.p_value:.3g}"
    stat = "∞" if chi.statistic == float("inf") else f"{chi.statistic:.3g}"
    m = [*st.columns(3), *st.columns(3)[:2]]  # five in a row left each number no room on a projector
    m[0].metric(s["mc_pvalue"], p_text, help=s["mc_pvalue_help"], border=True)
    m[1].metric(s["mc_chi2"], stat, help=s("mc_chi2_help", dof=chi.dof), border=True)
    m[2].metric(s["mc_tv"], _f(mc.tv, 4), help=s["mc_tv_help"], border=True)
    m[3].metric(
        s["mc_accept"],
        _f(mc.acceptance),
        help=s("mc_accept_help", rate=_f(d.acceptance_rate)),
        border=True,
    )
    m[4].metric(s["mc_time"], s("mc_ms", ms=f"{mc.seconds * 1000:.1f}"), border=True)
    name = s[f"variants.{mc.variant}"]
    verdict = s(f"mc_verdict_{mc.verdict}", name=name, n=f"{mc.trials:,}", pvalue=p_text)
    _note(html.escape(verdict), good=mc.verdict == "fits")
    names = {**s["chart.comparison"], "law": s("mc_frequency", name=name)}
    colour = palette.ACCEPTED if mc.variant == "exact" else palette.REJECTED
    fig = viz.law_comparison(tokens, d.p, mc.frequencies, text=names, spread=mc.spread, colour=colour)
    show_figure(fig, "fig_overlap_mc")


lesson_body(_lesson)

text.show("lossless")
quiz(s)
