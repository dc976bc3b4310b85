"""The lab's controls: models, prompt, sampling, γ, N, the broken rule and the seed.

:class:`LawForm` names every setting once (key ``law_*``, also its URL name; default; bounds
or options); the widgets take their bounds from it, :func:`settings` reads it back as a
:class:`~specdec_core.live.law.LawSettings`, and :func:`problem` says, in the
page's language, why those settings cannot run (None when they can). Model, draft and preset
names come from live.toml, the lab's own strings from law_live.toml.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from pages.common import form
from pages.common.form import Form
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


@dataclass(frozen=True)
class LawForm(Form):
    """Every setting of the lab, named once."""

    target: Param
    draft: Param
    k: Param
    preset: Param
    chat: Param
    t: Param
    topk: Param
    topp: Param
    gamma: Param
    n: Param
    broken: Param
    seed: Param


FORM = LawForm(
    target=choice_param("law_target", "bundled", LAW_TARGETS),
    draft=choice_param("law_draft", "head", DRAFTS),
    k=int_param("law_k", 8, 1, 256),
    preset=choice_param("law_preset", "copy", PRESETS),
    chat=bool_param("law_chat", True),
    t=float_param("law_t", 1.0, 0.0, 2.0),
    topk=int_param("law_topk", 0, 0, 1000),
    topp=float_param("law_topp", 1.0, 0.05, 1.0),
    gamma=int_param("law_gamma", DEFAULT_GAMMA, *GAMMA_RANGE),
    n=int_param("law_n", DEFAULT_SAMPLES, 1, MAX_SAMPLES),
    broken=choice_param("law_broken", "accept_all", BROKEN_RULES),
    seed=int_param("law_seed", 0, 0, 2**31 - 1),
)


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
    s, live, f = strings("law_live"), strings("live"), FORM
    fit_models()
    follow_preset("law")
    with st.container(border=True, key="noprint_law_controls"):
        st.markdown(f"**{s['controls']}**")
        c1, c2, c3 = st.columns([1.2, 1.2, 1])
        offered = tuple(k for k in access().targets if k in LAW_TARGETS)
        target = form.select(
            c1,
            f.target,
            live["target"],
            offered,
            format_func=lambda k: live[f"targets.{k}"],
            on_change=_target_changed,
            help=s["target_help"],
        )
        draft = form.select(
            c2,
            f.draft,
            live["draft"],
            law_drafts(target),
            format_func=lambda k: live[f"drafts.{k}"],
            help=s["draft_help"],
        )
        if draft == "layerskip":
            depth_input(c2, f.k.key, "law")
        form.select(
            c3,
            f.preset,
            live["preset"],
            format_func=lambda k: live[f"presets.{k}"],
            on_change=set_prompt,
            args=("law",),
            help=live["preset_help"],
        )
        form.toggle(c3, f.chat, live["chat"], disabled=target in plain_targets(), help=live["chat_help"])
        st.text_area(
            live["prompt"], key="law_prompt", height=110, help=live("prompt_help", limit=MAX_PROMPT_CHARS)
        )
        if target == "toy":
            st.caption(live("toy_words", words=" ".join(TOY_WORDS)))
        g = st.columns(4)
        form.slider(g[0], f.t, live["temperature"], step=0.05, help=s["temperature_help"])
        form.number(g[1], f.topk, live["top_k"], step=1, help=s["top_k_help"])
        form.slider(g[2], f.topp, live["top_p"], step=0.05, help=live["top_p_help"])
        form.slider(g[3], f.gamma, s["gamma"], help=s["gamma_help"])
        # a row of its own, so the broken rule's longest name fits its box
        h = st.columns([1, 2, 1])
        cap = access().max_law_samples
        n_help = s("samples_help", limit=MAX_SAMPLES) + (f" {s('samples_cap', limit=cap)}" if cap else "")
        form.number(h[0], f.n, s["samples"], step=50, help=n_help)
        form.select(h[1], f.broken, s["broken"], format_func=lambda k: s[f"rules.{k}"], help=s["broken_help"])
        form.number(h[2], f.seed, s["seed"], step=1, help=s["seed_help"])
        loaded_models_panel()


def settings() -> LawSettings:
    """The lab run the controls describe (not checked: :func:`problem`)."""
    f, v = FORM, form.value
    draft = v(f.draft)
    return LawSettings(
        target=target_spec("law"),
        draft=DraftSpec(draft, int(v(f.k)) if draft == "layerskip" else 0),
        chat=chat_on("law"),
        temperature=float(v(f.t)),
        top_k=int(v(f.topk)),
        top_p=float(v(f.topp)),
        gamma=int(v(f.gamma)),
        samples=int(v(f.n)),
        broken=v(f.broken),
        seed=int(v(f.seed)),
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
