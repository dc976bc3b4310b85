"""Sampling lab: edit logits, turn temperature / top-k / top-p / min-keep / order, and see
every stage of the pipeline and whether sampling has collapsed to greedy, and why."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from pages.common import form
from pages.common.figure import show_figure
from pages.common.i18n import LANGUAGES
from pages.common.page import lesson_body, start, warn_rejected
from pages.common.quiz import quiz
from pages.common.urlstate import mirror, restore
from pages.sampling_lab_parts.form import MAX_TOKENS, MIN_TOKENS, ORDERS, SOURCE, LabForm
from specdec_core.course.sampling_lab import (
    MAX_LOGIT,
    Rows,
    edited_rows,
    example_rows,
    examples,
    outcome,
    temperature_sweep,
)
from specdec_core.sampling import (
    Reason,
    SamplingConfig,
    apply,
    greedy_equivalence,
    same_as_greedy,
)
from specdec_core.viz.escape import md
from specdec_core.viz.sampling import prob_label, stages_figure, sweep_figure

EXPERIMENTS: dict[str, dict] = examples()["experiments"]
TABLE, BASE, SEEN = "sl_table", "_sl_table_base", "_sl_table_seen"

s, text = start("sampling_lab")
lang = s.lang


def example_logits(language: str = lang) -> Rows:
    """The (token, logit) rows of the chosen example, by default in the session language."""
    v = form.value
    return example_rows(v(SOURCE.preset), language, v(SOURCE.size), v(SOURCE.seed))


rejected = restore(SOURCE.params())  # before the settings: their default logits are the example SOURCE names
f = LabForm(logits=example_logits())
LOGITS = f.settings.logits.key
warn_rejected(s, rejected + restore(f.settings.params()))
if any(st.session_state[LOGITS] == example_logits(other) for other in LANGUAGES):
    st.session_state[LOGITS] = example_logits()  # an unedited example follows the language


def load_example() -> None:
    st.session_state[LOGITS] = example_logits()


def set_up(name: str) -> None:
    """Load an experiment: its example and settings, everything else at its default."""
    setup = EXPERIMENTS[name]
    st.session_state[SOURCE.preset.key] = setup["preset"]
    load_example()
    for prm in f.settings.sampling():
        st.session_state[prm.key] = setup.get(prm.key, prm.default)


def token_ref(index: int, rows: Rows) -> str:
    return s("token_ref", label=html.escape(rows[index][0]), index=index)


def reason_html(reason: Reason, rows: Rows) -> str:
    """The verdict's reason in the session language, token labels escaped."""
    params = dict(reason.params)
    for key in ("token", "greedy"):
        if key in params:
            params[key] = token_ref(int(params[key]), rows)
    if "tied" in params:
        params["tied"] = s["list_sep"].join(token_ref(i, rows) for i in params["tied"])
    return s(f"reasons.{reason.code}", **params)


def read_table(edited: pd.DataFrame) -> Rows | None:
    """The rows of the edited table, or None (with a message) when they cannot be used."""
    cells = edited.astype(object).where(edited.notna(), None)  # every empty cell as None
    rows, problem = edited_rows(list(cells["token"]), list(cells["logit"]), MIN_TOKENS, MAX_TOKENS)
    if problem == "rows":
        st.warning(s("table_rows", n=len(edited), lo=MIN_TOKENS, hi=MAX_TOKENS))
    elif problem == "missing":
        st.warning(s["table_missing"])
    return rows


text.show("intro")


def lab() -> None:
    """The logits, the sampling settings and an experiment, and the stages and sweeps they drive."""
    controls, results = st.columns([5, 7], gap="large")

    with controls:
        with st.container(border=True):
            st.markdown(f"**{s['try_title']}**")
            experiment = st.selectbox(
                s["try_pick"],
                list(EXPERIMENTS),
                format_func=lambda e: s[f"experiments.{e}"],
                key="sl_experiment",
            )
            text.show(f"try-{experiment}")
            st.button(s["try_setup"], on_click=set_up, args=(experiment,), icon=":material/science:")

        st.subheader(s["settings_heading"])
        c = f.settings
        switch = form.toggle(st, c.t0, s["switch"], help=s["switch_help"])
        if switch:
            st.caption(s["switch_note"])
        form.select_slider(
            st,
            c.t,
            s["temperature"],
            format_func=lambda t: f"T = {t:g}",
            help=s["temperature_help"],
            disabled=switch,
        )
        left, right = st.columns(2)
        form.slider(left, c.k, s["top_k"], help=s["top_k_help"], disabled=switch)
        form.slider(right, c.p, s["top_p"], step=0.01, help=s["top_p_help"], disabled=switch)
        form.slider(st, c.min_keep, s["min_keep"], help=s["min_keep_help"], disabled=switch)
        form.select(
            st,
            c.order,
            s["order"],
            help=s["order_help"],
            disabled=switch,
            format_func=lambda code: " → ".join(s[f"transforms.{n}"] for n in ORDERS[code]),
        )

        st.subheader(s["logits_heading"])
        form.segmented(
            st,
            SOURCE.preset,
            s["preset"],
            required=True,
            on_change=load_example,
            format_func=lambda name: s[f"presets.{name}.name"],
        )
        preset = form.value(SOURCE.preset)
        if preset == "random":
            left, right = st.columns(2)
            form.number(left, SOURCE.seed, s["seed"], on_change=load_example)
            form.number(right, SOURCE.size, s["size"], on_change=load_example)
        changed = st.session_state[LOGITS] != example_logits()
        st.caption(s(f"presets.{preset}.context") + (f" · *{s['edited']}*" if changed else ""))

        rows = st.session_state[LOGITS]
        if st.session_state.get(SEEN, rows) != rows:  # replaced from outside the table: start it afresh
            st.session_state.pop(TABLE, None)
            st.session_state[BASE] = rows
        base = st.session_state.setdefault(BASE, rows)
        edited = st.data_editor(
            pd.DataFrame({"token": [r[0] for r in base], "logit": [r[1] for r in base]}),
            key=TABLE,
            num_rows="dynamic",
            column_config={
                "token": st.column_config.TextColumn(s["col_token"], required=True, default=s["new_token"]),
                "logit": st.column_config.NumberColumn(
                    s["col_logit"],
                    required=True,
                    default=0.0,
                    min_value=-MAX_LOGIT,
                    max_value=MAX_LOGIT,
                    step=0.001,
                ),
            },
        )
        note, reload = st.columns([2, 1], vertical_alignment="top")
        note.caption(s("table_help", lo=MIN_TOKENS, hi=MAX_TOKENS))
        reload.button(s["reload"], on_click=load_example, icon=":material/restart_alt:", disabled=not changed)
        rows = read_table(edited) or rows
        st.session_state[LOGITS] = st.session_state[SEEN] = rows

    mirror(f.params())
    labels = [r[0] for r in rows]
    logits = [r[1] for r in rows]
    try:
        config = SamplingConfig(
            temperature=0.0 if switch else form.value(c.t),
            top_k=form.value(c.k),
            top_p=form.value(c.p),
            min_tokens_to_keep=form.value(c.min_keep),
            order=ORDERS[form.value(c.order)],
        )
        trace = apply(logits, config)
        same, reason = greedy_equivalence(logits, config)
    except ValueError as exc:
        with results:
            st.error(s("bad_settings", message=md(exc)))
        st.stop()

    summary = outcome(logits, trace)
    with results:
        verdict = "yes" if same_as_greedy(same, reason) else "no"
        st.html(
            f'<div class="sd-verdict {verdict}"><strong>{s[f"verdict_{verdict}"]}</strong> '
            f"{reason_html(reason, rows)}</div>"
        )
        top, bottom = st.columns(2), st.columns(2)
        top[0].metric(s["metric_support"], summary.support_size, help=s["metric_support_help"])
        top[1].metric(
            s("metric_greedy", index=summary.greedy_token),
            md(labels[summary.greedy_token]),
            help=s["metric_greedy_help"],
        )
        bottom[0].metric(
            s["metric_pmax"], prob_label(summary.p_max, s["chart.almost_one"]), help=s["metric_pmax_help"]
        )
        bottom[1].metric(s["metric_pmin"], f"{summary.p_min_sampleable:.3g}", help=s["metric_pmin_help"])
        st.markdown(f"**{s['stages_heading']}**")
        show_figure(
            stages_figure(trace, config, labels, s["chart"]),
            "fig_lab_stages",
            theme=None,
            config={"displayModeBar": False},
        )
        st.caption(s["stages_caption"])
        st.markdown(f"**{s['sweep_heading']}**")
        sweep = temperature_sweep(logits, config)
        current = None if switch else config.temperature
        show_figure(
            sweep_figure(sweep, labels, current, s["chart"]),
            "fig_lab_sweep",
            theme=None,
            config={"displayModeBar": False},
        )
        st.caption(s["sweep_caption"])


lesson_body(lab)

st.divider()
st.header(s["lesson_heading"])
tabs = s["tabs"]
for tab, section in zip(st.tabs(list(tabs.values())), tabs, strict=True):
    with tab:
        text.show(section)
text.show("summary")
quiz(s)
