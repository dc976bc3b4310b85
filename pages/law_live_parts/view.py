"""What the lab shows, from a :class:`~specdec_core.live.law_view.LawSnapshot` alone: the same
view while counts arrive and after the run (keys carry a suffix, so each repaint is its own)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from pages.common.figure import show_figure
from pages.common.i18n import Strings, strings
from pages.common.model_form import draft_label, target_label
from specdec_core.live.law import MAX_SAMPLES, LawSettings
from specdec_core.live.law_view import MIN_CONDITIONAL, JointTest, LawSnapshot, ShareTable
from specdec_core.stats import MC_BAND, MC_DRAWS
from specdec_core.viz.escape import md
from specdec_core.viz.labels import short_label
from specdec_core.viz.law_live import share_bars, tv_bars

RESULT_KEY = "_law_result"  # (settings, snapshot) of the last run


def _fig_text(s: Strings, broken: str) -> dict[str, str]:
    return {**s["fig"], "broken": s("fig.broken", rule=s[f"rules.{broken}"])}


def _chart(table: ShareTable, rules: tuple[str, str], s: Strings, key: str) -> None:
    exact, broken = rules
    fig = share_bars(
        table.texts,
        table.exact,
        table.shares.get(exact),
        table.shares.get(broken),
        _fig_text(s, broken),
    )
    show_figure(fig, key=key, config={"displayModeBar": False})


def _token(text: str) -> str:
    return f"“{md(short_label(text, 16))}”"


def _tests(snap: LawSnapshot, s: Strings, key: str) -> None:
    rows, shown = [], []
    for rule in snap.rules:
        test: JointTest | None = snap.tests.get(rule)
        if test is None:
            continue
        shown.append((rule, test))
        rows.append(
            {
                s["col.rule"]: s[f"rules.{rule}"],
                s["col.n"]: test.n,
                s["col.cells"]: test.cells,
                s["col.chi2"]: f"{test.statistic:.1f}" if math.isfinite(test.statistic) else "∞",
                s["col.dof"]: test.dof,
                s["col.p"]: f"{test.p_value:.3g}",
                s["col.tv"]: f"{test.tv:.3f}",
                s["col.noise"]: f"{test.tv_noise:.3f}",
                s["col.verdict"]: s[f"verdicts.{test.verdict}"],
            }
        )
    if not rows:
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"{key}_table")
    fig = tv_bars(
        [s[f"rules.{rule}"] for rule, _ in shown],
        [t.tv for _, t in shown],
        [t.tv_noise for _, t in shown],
        s["fig"],
    )
    show_figure(fig, key=f"{key}_tv", config={"displayModeBar": False})


def _takeaway(snap: LawSnapshot, s: Strings) -> None:
    kind = snap.takeaway
    exact, broken = (snap.tests.get(rule) for rule in snap.rules)
    params = {
        "p_exact": exact.p_value if exact else 0.0,
        "p_broken": broken.p_value if broken else 0.0,
        "rule": s[f"rules.{snap.rules[1]}"],
        "limit": MAX_SAMPLES,
    }
    message = s(f"takeaway.{kind}", **params)
    show_as = {
        "shown": st.success,
        "exact_only": st.info,
        "borderline": st.info,
        "unlucky": st.warning,
        "early": st.caption,
    }
    show_as[kind](message)


def show(settings: LawSettings, snap: LawSnapshot, key: str = "law") -> None:
    """The snapshot's tables, charts and tests, and what they say."""
    s, live = strings("law_live"), strings("live")
    st.caption(
        s(
            "settings_line",
            target=target_label(settings.target.kind, live),
            draft=draft_label(settings.draft.kind, live),
            t=settings.temperature,
            k=settings.top_k,
            p=settings.top_p,
            gamma=settings.gamma,
            seed=settings.seed,
        )
    )
    _takeaway(snap, s)
    st.markdown(f"**{s['first_title']}**")
    _chart(snap.first, snap.rules, s, f"{key}_first")
    cols = st.columns(max(len(snap.second), 1))
    for col, table in zip(cols, snap.second, strict=False):
        with col:
            token = _token(table.given_text)
            n = table.counts.get(snap.rules[0], 0)
            if table.shares.get(snap.rules[0]) is None:
                wait = "second_few" if snap.finished else "second_wait"
                st.caption(s(wait, token=token, n=n, need=MIN_CONDITIONAL))
                continue
            st.markdown(f"**{s('second_title', token=token)}**")
            _chart(table, snap.rules, s, f"{key}_second_{table.given}")
    st.markdown(f"**{s['tests_title']}**")
    _tests(snap, s, key)
    low, high = MC_BAND
    st.caption(s("tests_note", draws=MC_DRAWS, low=low, high=high))
    notes = [s("law_note", forwards=snap.law_forwards)]
    if snap.rate is not None:
        notes.append(s("speed", rate=snap.rate))
    st.caption(" ".join(notes))


def shown_result() -> tuple[LawSettings, LawSnapshot] | None:
    """The last run's settings and snapshot, when there is one."""
    return st.session_state.get(RESULT_KEY)
