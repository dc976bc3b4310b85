"""Lesson 4, block verification: step a Markov-chain pair through speculative rounds."""

from html import escape

import streamlit as st

from pages.block_parts.form import FORM
from pages.common import form
from pages.common.figure import show_figure
from pages.common.page import lesson_body, start
from pages.common.quiz import quiz
from pages.common.stepper import pair_stepper
from specdec_core.course import block as block_demo
from specdec_core.sampling import SamplingConfig
from specdec_core.viz import block as viz
from specdec_core.viz import rounds as rounds_viz
from specdec_core.viz.escape import md

MANY = 25
MIN_ROUNDS_FOR_HISTOGRAM = 30
TEXT_TAIL = 80
KEPT_DEMOS = 8
f = FORM

s, text = start("block", params=f.params())
fig_text = s["fig"]

text.show("intro")


def _lesson() -> None:
    """The chain, draft, γ, seed and temperature, and the rounds and histogram they drive."""
    pair_stepper(s, f, "block", lambda col: form.slider(col, f.k, s["K"], help=s["K_help"]), many=MANY)

    settings = tuple(form.value(p) for p in (f.chain, f.draft, f.k, f.seed, f.t))
    n_rounds = form.value(f.round)
    # This session's demos by settings, most recent last: moving K (or T, …) back to a value
    # seen before continues that demo instead of replaying its rounds.
    demos: dict = st.session_state.setdefault("_block_demos", {})
    demo = demos.pop(settings, None)
    try:
        if demo is None or len(demo.rounds) > n_rounds:
            chain, draft, k, seed, temperature = settings
            target = block_demo.target_chain(chain)
            demo = block_demo.BlockDemo(
                target,
                block_demo.draft_chain(target, draft),
                [0],
                k,
                seed,
                SamplingConfig(temperature=temperature),
            )
        demos[settings] = demo
        while len(demos) > KEPT_DEMOS:
            del demos[next(iter(demos))]
        while len(demo.rounds) < n_rounds:
            demo.step()
    except ValueError as exc:
        st.error(s("error", message=md(exc)))
        st.stop()

    labels = demo.target.labels
    shown = [md(lab) for lab in labels]  # token names on Markdown lines, literal
    k = demo.k

    def _tok(token: int, kind: str, current: bool = False) -> str:
        now = " now" if current else ""  # this round's tokens: bold and outlined (style.css)
        return f'<span class="sd-tok {kind}{now}">{escape(labels[token])}</span>'

    if not demo.rounds:
        st.info(s("press_next", prompt=shown[demo.prompt[0]]))
    else:
        rnd = demo.rounds[-1]
        summary = block_demo.summarize(demo.rounds, k)
        m = st.columns(5)
        m[0].metric(s["now_round"], rnd.index)
        m[1].metric(s["now_accepted"], f"{rnd.accepted} / {k}")
        m[2].metric(s["now_committed"], len(rnd.committed))
        m[3].metric(s["now_length"], rnd.length_after)
        m[4].metric(s["now_alpha"], f"{summary.alpha:.2f}")

        prefix, kinds = block_demo.earlier_text(demo)
        parts = [_tok(t, kind) for t, kind in zip(prefix, kinds, strict=True)][-TEXT_TAIL:]
        if len(prefix) > TEXT_TAIL:
            parts.insert(0, "…")
        parts += [_tok(t, kind, current=True) for t, kind in zip(rnd.committed, rnd.kinds, strict=True)]
        if rnd.rejected is not None:
            parts.append("&nbsp;&nbsp;" + _tok(rnd.rejected, "rejected"))
            parts += [_tok(t, "rejected void") for t in rnd.void]
        st.html(f'<div class="sd-tokens">{" ".join(parts)}</div>')
        st.caption(s("text_caption", n=TEXT_TAIL))

        if rnd.rejected is None:
            verdict = s("verdict_all", k=k, bonus=shown[rnd.committed[-1]], committed=len(rnd.committed))
        else:
            void = ", ".join(f"“{shown[t]}”" for t in rnd.void)
            verdict = s(
                "verdict_rejected",
                pos=rnd.accepted + 1,
                draft=shown[rnd.rejected],
                corrected=shown[rnd.committed[-1]],
                committed=len(rnd.committed),
                kmax=k + 1,
            )
            if rnd.void:
                verdict += s("verdict_void", tokens=void)
        st.markdown(
            s(
                "round_caption",
                n=rnd.index,
                anchor=shown[rnd.anchor],
                drafts=", ".join(f"“{shown[t]}”" for t in rnd.drafts),
                verdict=verdict,
            )
        )
        show_figure(viz.round_figure(rnd, labels, fig_text), "fig_block_round", theme=None)

    text.show("forward")
    if demo.rounds:
        show_figure(viz.rows_figure(rnd, labels, fig_text), "fig_block_rows", theme=None)
        st.caption(s["rows_caption"])

    text.show("outcomes")
    text.show("cache")
    if demo.rounds:
        show_figure(viz.cache_figure(rnd, labels, prefix, fig_text), "fig_block_cache", theme=None)
        tc, dc = rnd.target_cache, rnd.draft_cache
        st.caption(
            s(
                "cache_caption",
                t_start=tc.start,
                t_peak=tc.peak,
                t_after=tc.after,
                t_drop=tc.dropped,
                d_start=dc.start,
                d_peak=dc.peak,
                d_after=dc.after,
                d_drop=dc.dropped,
                length=rnd.length_after,
                keep=rnd.length_after - 1,
            )
        )

    text.show("loop")
    text.show("proof")
    text.show("per_round")
    if demo.rounds:
        st.subheader(s["rounds_title"])
        show_figure(rounds_viz.rounds_figure(demo.rounds, fig_text), "fig_block_rounds", theme=None)
        st.subheader(s["hist_title"])
        if len(demo.rounds) < MIN_ROUNDS_FOR_HISTOGRAM:
            st.info(s("hist_wait", n=MIN_ROUNDS_FOR_HISTOGRAM, many=MANY))
        else:
            h1, h2 = st.columns([3, 1])
            hist = rounds_viz.tokens_histogram(summary.counts, summary.law, summary.alpha, fig_text)
            show_figure(hist, "fig_block_hist", where=h1, theme=None)
            h2.metric(s["mean_measured"], f"{summary.mean_measured:.2f}")
            h2.metric(s["mean_theory"], f"{summary.mean_theory:.2f}")
        alphas = block_demo.acceptance_by_context(demo.target, demo.draft, demo.sampling)
        st.caption(s("context_alpha", lo=alphas.min(), hi=alphas.max()))


lesson_body(_lesson)

quiz(s)
