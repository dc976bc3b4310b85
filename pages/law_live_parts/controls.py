"""The lab's controls: models, prompt, sampling, γ, N, the broken rule and the seed.

:class:`LawForm` names every setting once (key ``law_*``, also its URL name; default; bounds
or options); the widgets take their bounds from it, :func:`settings` reads it back as a
:class:`~specdec_core.live.law.LawSettings`, and :func:`problem` says, in the
page's language, why those settings cannot run (None when they can). Model, draft and preset
names come from live.toml, the lab's own strings from law_live.toml.
"""

from __future__ import annotations

import streamlit as st

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import strings
from pages.common.model_form import (
    chat_on,
    depth_input,
    draft_label,
    follow_preset,
    set_prompt,
    target_label,
    target_spec,
)
from pages.common.models import access, loaded_models_panel
from pages.common.urlstate import bool_param, choice_param, float_param, int_param, text_param
from specdec_core.engine.rules import BROKEN_RULES
from specdec_core.live.law import (
    DEFAULT_GAMMA,
    DEFAULT_SAMPLES,
    GAMMA_RANGE,
    MAX_SAMPLES,
    LawError,
    LawSettings,
    check_settings,
    law_drafts,
    law_targets,
)
from specdec_core.live.limits import MAX_PROMPT_CHARS
from specdec_core.live.model_choices import draft_kinds
from specdec_core.live.presets import PRESETS
from specdec_core.models import catalog
from specdec_core.viz.escape import md


class LawForm(Form):
    """Every setting of the lab, named once (the targets and drafts are the catalog's when the
    form is built)."""

    prefix = "law"
    target = choice_param(catalog.default_target("law"), law_targets)
    draft = choice_param(catalog.default_drafts("law")[0], draft_kinds)
    k = int_param(8, 1, 256)
    preset = choice_param("copy", PRESETS)
    chat = bool_param(True)
    prompt = text_param(None, MAX_PROMPT_CHARS)
    t = float_param(1.0, 0.0, 2.0)
    topk = int_param(0, 0, 1000)
    topp = float_param(1.0, 0.05, 1.0)
    gamma = int_param(DEFAULT_GAMMA, *GAMMA_RANGE)
    n = int_param(DEFAULT_SAMPLES, 1, MAX_SAMPLES)
    broken = choice_param("accept_all", BROKEN_RULES)
    seed = int_param(0, 0, 2**31 - 1)


def fit_models(f: LawForm) -> None:
    """A target the lab offers and a draft that fits it; a link or state that asked for another
    gets a message naming what was chosen instead."""
    ss, s, live = st.session_state, strings("law_live"), strings("live")
    offered = tuple(k for k in access().targets if k in law_targets())
    if not offered:  # a classroom whose teacher offers only custom models
        st.error(s["problems.target"], icon=":material/error:")
        st.stop()
    if ss[f.target.key] not in offered:
        st.warning(s("target_unfit", target=md(ss[f.target.key])))
        ss[f.target.key] = offered[0]
        set_prompt(f)
    options = law_drafts(ss[f.target.key])
    if ss[f.draft.key] not in options:
        st.warning(
            s(
                "draft_unfit",
                draft=draft_label(ss[f.draft.key], live),
                target=target_label(ss[f.target.key], live),
                chosen=draft_label(options[0], live),
            )
        )
        ss[f.draft.key] = options[0]


def _target_changed(f: LawForm) -> None:
    options = law_drafts(form.value(f.target))
    if form.value(f.draft) not in options:
        st.session_state[f.draft.key] = options[0]
    set_prompt(f)


def controls(f: LawForm) -> None:
    """The control panel; Draw and Stop come after it (``ServiceRun.panel``)."""
    s, live = strings("law_live"), strings("live")
    fit_models(f)
    follow_preset(f)
    with st.container(border=True, key="noprint_law_controls"):
        st.markdown(f"**{s['controls']}**")
        c1, c2, c3 = st.columns([1.2, 1.2, 1])
        offered = tuple(k for k in access().targets if k in law_targets())
        target = form.select(
            c1,
            f.target,
            live["target"],
            offered,
            format_func=lambda k: target_label(k, live),
            on_change=_target_changed,
            args=(f,),
            help=s["target_help"],
        )
        draft = form.select(
            c2,
            f.draft,
            live["draft"],
            law_drafts(target),
            format_func=lambda k: draft_label(k, live),
            help=s["draft_help"],
        )
        if catalog.draft(draft).depth:
            depth_input(c2, f)
        form.select(
            c3,
            f.preset,
            live["preset"],
            format_func=lambda k: live[f"presets.{k}"],
            on_change=set_prompt,
            args=(f,),
            help=live["preset_help"],
        )
        form.toggle(c3, f.chat, live["chat"], disabled=not catalog.about(target).chat, help=live["chat_help"])
        st.text_area(
            live["prompt"], key=f.prompt.key, height=110, help=live("prompt_help", limit=MAX_PROMPT_CHARS)
        )
        if catalog.about(target).words:
            st.caption(live("own_words", words=" ".join(catalog.about(target).words)))
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


def settings(f: LawForm) -> LawSettings:
    """The lab run the controls describe (not checked: :func:`problem`)."""
    v = f.read()
    return LawSettings(
        target=target_spec(f),
        draft=catalog.draft_spec(v.draft, int(v.k)),
        chat=chat_on(f),
        temperature=float(v.t),
        top_k=int(v.topk),
        top_p=float(v.topp),
        gamma=int(v.gamma),
        samples=int(v.n),
        broken=v.broken,
        seed=int(v.seed),
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
                "draft": draft_label(spec.draft.kind, live),
                "target": target_label(spec.target.kind, live),
            }
        return strings("law_live")(f"problems.{exc.code}", **params)
    return None
