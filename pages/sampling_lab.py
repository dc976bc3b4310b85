"""Sampling lab: edit logits, turn temperature / top-k / top-p / min-keep / order, and see
every stage of the pipeline and whether sampling has collapsed to greedy, and why."""

from __future__ import annotations

import html
import itertools

import pandas as pd
import streamlit as st

from pages.common.i18n import LANGUAGES
from pages.common.page import lesson_body, start, warn_rejected
from pages.common.quiz import quiz
from pages.common.urlstate import Param, bool_param, choice_param, int_param, mirror, restore
from specdec_core.course.sampling_lab import (
    MAX_LOGIT,
    Rows,
    edited_rows,
    example_rows,
    examples,
    outcome,
    rows_from_url,
    rows_to_url,
    snap_temperature,
    temperature_scale,
    temperature_sweep,
)
from specdec_core.live.limits import MAX_LOGIT_ROWS, MIN_LOGIT_ROWS
from specdec_core.sampling import (
    TRANSFORMS,
    Reason,
    SamplingConfig,
    apply,
    greedy_equivalence,
    same_as_greedy,
)
from specdec_core.viz.escape import md
from specdec_core.viz.sampling import prob_label, stages_figure, sweep_figure

PRESETS = (*examples()["presets"], "random")
EXPERIMENTS: dict[str, dict] = examples()["experiments"]
TEMPERATURES = temperature_scale(-4, 1)
MIN_TOKENS, MAX_TOKENS = MIN_LOGIT_ROWS, MAX_LOGIT_ROWS
#: Every order of the transforms, by URL code: t = temperature, k = top-k, p = top-p.
CODES = {"temperature": "t", "top_k": "k", "top_p": "p"}
ORDERS = {"".join(CODES[n] for n in order): order for order in itertools.permutations(TRANSFORMS)}
TABLE, BASE, SEEN = "sl_table", "_sl_table_base", "_sl_table_seen"

s, text = start("sampling_lab")
lang = s.lang


def example_logits(language: str = lang) -> Rows:
    """The (token, logit) rows of the chosen example, by default in the session language."""
    ss = st.session_state
    return example_rows(ss.get("preset", "peaked"), language, ss.get("size", 6), ss.get("seed", 0))


def parse_table(raw: str) -> Rows:
    return rows_from_url(raw, MIN_TOKENS, MAX_TOKENS)


def parse_temperature(raw: str) -> float:
    return snap_temperature(float(raw), TEMPERATURES)


def parse_top_p(raw: str) -> float:
    value = float(raw)
    if not 0.01 <= value <= 1.0:
        raise ValueError(raw)
    return value


SOURCE = [
    choice_param("preset", "peaked", PRESETS),
    int_param("seed", 0, 0, 9999),
    int_param("size", 6, MIN_TOKENS, MAX_TOKENS),
]
rejected = restore(SOURCE)  # before SETTINGS: their default logits are the example SOURCE names
SETTINGS = [
    Param("logits", example_logits(), parse_table, rows_to_url),
    bool_param("T0", False),
    Param("T", 1.0, parse_temperature, lambda v: f"{v:g}"),
    int_param("k", 0, 0, MAX_TOKENS),
    Param("p", 1.0, parse_top_p, lambda v: f"{v:g}"),
    int_param("min_keep", 1, 1, MAX_TOKENS),
    choice_param("order", "tkp", tuple(ORDERS)),
]
warn_rejected(s, rejected + restore(SETTINGS))
if any(st.session_state["logits"] == example_logits(other) for other in LANGUAGES):
    st.session_state["logits"] = example_logits()  # an unedited example follows the language


def load_example() -> None:
    st.session_state["logits"] = example_logits()


def set_up(name: str) -> None:
    """Load an experiment: its example and settings, everything else at its default."""
    setup = EXPERIMENTS[name]
    st.session_state["preset"] = setup["preset"]
    load_example()
    for prm in SETTINGS[1:]:
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
        switch = st.toggle(s["switch"], key="T0", help=s["switch_help"])
        if switch:
            st.caption(s["switch_note"])
        st.select_slider(
            s["temperature"],
            options=TEMPERATURES,
            format_func=lambda t: f"T = {t:g}",
            key="T",
            help=s["temperature_help"],
            disabled=switch,
        )
        left, right = st.columns(2)
        left.slider(s["top_k"], 0, MAX_TOKENS, key="k", help=s["top_k_help"], disabled=switch)
        right.slider(s["top_p"], 0.01, 1.0, step=0.01, key="p", help=s["top_p_help"], disabled=switch)
        st.slider(s["min_keep"], 1, MAX_TOKENS, key="min_keep", help=s["min_keep_help"], disabled=switch)
        st.selectbox(
            s["order"],
            list(ORDERS),
            key="order",
            help=s["order_help"],
            disabled=switch,
            format_func=lambda code: " → ".join(s[f"transforms.{n}"] for n in ORDERS[code]),
        )

        st.subheader(s["logits_heading"])
        st.segmented_control(
            s["preset"],
            PRESETS,
            key="preset",
            required=True,
            on_change=load_example,
            format_func=lambda name: s[f"presets.{name}.name"],
        )
        if st.session_state["preset"] == "random":
            left, right = st.columns(2)
            left.number_input(s["seed"], 0, 9999, key="seed", on_change=load_example)
            right.number_input(s["size"], MIN_TOKENS, MAX_TOKENS, key="size", on_change=load_example)
        changed = st.session_state["logits"] != example_logits()
        st.caption(
            s(f"presets.{st.session_state['preset']}.context") + (f" · *{s['edited']}*" if changed else "")
        )

        rows = st.session_state["logits"]
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
        st.session_state["logits"] = st.session_state[SEEN] = rows

    mirror(SOURCE + SETTINGS)
    labels = [r[0] for r in rows]
    logits = [r[1] for r in rows]
    try:
        config = SamplingConfig(
            temperature=0.0 if switch else st.session_state["T"],
            top_k=st.session_state["k"],
            top_p=st.session_state["p"],
            min_tokens_to_keep=st.session_state["min_keep"],
            order=ORDERS[st.session_state["order"]],
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
        st.plotly_chart(
            stages_figure(trace, config, labels, s["chart"]), theme=None, config={"displayModeBar": False}
        )
        st.caption(s["stages_caption"])
        st.markdown(f"**{s['sweep_heading']}**")
        sweep = temperature_sweep(logits, config)
        current = None if switch else config.temperature
        st.plotly_chart(
            sweep_figure(sweep, labels, current, s["chart"]), theme=None, config={"displayModeBar": False}
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
