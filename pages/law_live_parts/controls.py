"""The lab's controls: models, prompt, sampling, γ, N, the broken rule and the seed.

Widgets keyed ``law_*`` (pages/law_live.py mirrors them in the URL); :func:`settings` reads
them back as a :class:`~specdec_core.live.law.LawSettings`, and :func:`problem` says, in the
page's language, why those settings cannot run (None when they can). Model, draft and preset
names come from live.toml, the lab's own strings from law_live.toml.
"""

from __future__ import annotations

import streamlit as st

from pages.common.i18n import strings
from pages.common.model_form import chat_on, depth_input, follow_preset, set_prompt, target_spec
from pages.common.models import access, loaded_models_panel
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param
from specdec_core.engine.rules import BROKEN_RULES
from specdec_core.live.law import (
    DEFAULT_GAMMA,
    DEFAULT_SAMPLES,
    GAMMA_RANGE,
    LAW_TARGETS,
    MAX_SAMPLES,
    LawError,
    LawSettings,
    check_settings,
    law_drafts,
)
from specdec_core.live.limits import MAX_PROMPT_CHARS
from specdec_core.live.model_choices import DRAFTS, TOY_WORDS, DraftSpec, plain_targets
from specdec_core.live.presets import PRESETS
from specdec_core.viz.escape import md

PARAMS: list[Param] = [
    choice_param("law_target", "bundled", LAW_TARGETS),
    choice_param("law_draft", "head", DRAFTS),
    int_param("law_k", 8, 1, 256),
    choice_param("law_preset", "copy", PRESETS),
    bool_param("law_chat", True),
    float_param("law_t", 1.0, 0.0, 2.0),
    int_param("law_topk", 0, 0, 1000),
    float_param("law_topp", 1.0, 0.05, 1.0),
    int_param("law_gamma", DEFAULT_GAMMA, *GAMMA_RANGE),
    int_param("law_n", DEFAULT_SAMPLES, 1, MAX_SAMPLES),
    choice_param("law_broken", "accept_all", BROKEN_RULES),
    int_param("law_seed", 0, 0, 2**31 - 1),
]


def fit_models() -> None:
    """A target the lab offers and a draft that fits it; a link or state that asked for another
    gets a message naming what was chosen instead."""
    ss, s, live = st.session_state, strings("law_live"), strings("live")
    offered = tuple(k for k in access().targets if k in LAW_TARGETS)
    if not offered:  # a classroom whose teacher offers only custom models
        st.error(s["problems.target"], icon=":material/error:")
        st.stop()
    if ss["law_target"] not in offered:
        st.warning(s("target_unfit", target=md(ss["law_target"])))
        ss["law_target"] = offered[0]
        set_prompt("law")
    options = law_drafts(ss["law_target"])
    if ss["law_draft"] not in options:
        st.warning(
            s(
                "draft_unfit",
                draft=live[f"drafts.{ss['law_draft']}"],
                target=live[f"targets.{ss['law_target']}"],
                chosen=live[f"drafts.{options[0]}"],
            )
        )
        ss["law_draft"] = options[0]


def _target_changed() -> None:
    options = law_drafts(st.session_state["law_target"])
    if st.session_state["law_draft"] not in options:
        st.session_state["law_draft"] = options[0]
    set_prompt("law")


def controls() -> None:
    """The control panel; Draw and Stop come after it (``ServiceRun.panel``)."""
    s, live = strings("law_live"), strings("live")
    fit_models()
    follow_preset("law")
    with st.container(border=True, key="noprint_law_controls"):
        st.markdown(f"**{s['controls']}**")
        c1, c2, c3 = st.columns([1.2, 1.2, 1])
        offered = tuple(k for k in access().targets if k in LAW_TARGETS)
        target = c1.selectbox(
            live["target"],
            offered,
            format_func=lambda k: live[f"targets.{k}"],
            key="law_target",
            on_change=_target_changed,
            help=s["target_help"],
        )
        draft = c2.selectbox(
            live["draft"],
            law_drafts(target),
            format_func=lambda k: live[f"drafts.{k}"],
            key="law_draft",
            help=s["draft_help"],
        )
        if draft == "layerskip":
            depth_input(c2, "law_k", "law")
        c3.selectbox(
            live["preset"],
            PRESETS,
            format_func=lambda k: live[f"presets.{k}"],
            key="law_preset",
            on_change=set_prompt,
            args=("law",),
            help=live["preset_help"],
        )
        c3.toggle(live["chat"], key="law_chat", disabled=target in plain_targets(), help=live["chat_help"])
        st.text_area(
            live["prompt"], key="law_prompt", height=110, help=live("prompt_help", limit=MAX_PROMPT_CHARS)
        )
        if target == "toy":
            st.caption(live("toy_words", words=" ".join(TOY_WORDS)))
        g = st.columns([1.2, 1, 1, 1, 1.2, 1.4, 1])
        g[0].slider(live["temperature"], 0.0, 2.0, step=0.05, key="law_t", help=s["temperature_help"])
        g[1].number_input(live["top_k"], 0, 1000, step=1, key="law_topk", help=s["top_k_help"])
        g[2].slider(live["top_p"], 0.05, 1.0, step=0.05, key="law_topp", help=live["top_p_help"])
        g[3].slider(s["gamma"], *GAMMA_RANGE, key="law_gamma", help=s["gamma_help"])
        cap = access().max_law_samples
        n_help = s("samples_help", limit=MAX_SAMPLES) + (f" {s('samples_cap', limit=cap)}" if cap else "")
        g[4].number_input(s["samples"], 1, MAX_SAMPLES, step=50, key="law_n", help=n_help)
        g[5].selectbox(
            s["broken"],
            BROKEN_RULES,
            format_func=lambda k: s[f"rules.{k}"],
            key="law_broken",
            help=s["broken_help"],
        )
        g[6].number_input(s["seed"], 0, 2**31 - 1, step=1, key="law_seed", help=s["seed_help"])
        loaded_models_panel()


def settings() -> LawSettings:
    """The lab run the controls describe (not checked: :func:`problem`)."""
    ss = st.session_state
    draft = ss["law_draft"]
    return LawSettings(
        target=target_spec("law"),
        draft=DraftSpec(draft, int(ss["law_k"]) if draft == "layerskip" else 0),
        chat=chat_on("law"),
        temperature=float(ss["law_t"]),
        top_k=int(ss["law_topk"]),
        top_p=float(ss["law_topp"]),
        gamma=int(ss["law_gamma"]),
        samples=int(ss["law_n"]),
        broken=ss["law_broken"],
        seed=int(ss["law_seed"]),
    )


def problem(spec: LawSettings) -> str | None:
    """Why `spec` cannot run here, in the page's language; None when it can."""
    try:
        check_settings(spec, access().max_law_samples)
    except LawError as exc:
        params = exc.params
        if exc.code == "draft":  # model kinds, shown by their names
            live = strings("live")
            params = {
                "draft": live[f"drafts.{spec.draft.kind}"],
                "target": live[f"targets.{spec.target.kind}"],
            }
        return strings("law_live")(f"problems.{exc.code}", **params)
    return None
