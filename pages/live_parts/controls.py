"""The live page's controls: models, prompt, γ and sampling, Generate / Stop, a saved run to replay.

The widgets take their keys and bounds from the page's :class:`~pages.common.live_form.LiveForm`,
which names every setting once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common import form
from pages.common.i18n import strings
from pages.common.live_form import LiveForm
from pages.common.model_form import (
    decoding_controls,
    depth_input,
    draft_label,
    follow_preset,
    set_prompt,
    source_input,
    target_choices,
    target_label,
)
from pages.common.models import access, loaded_models_panel
from pages.common.urlstate import Param
from specdec_core.live.access import drafts
from specdec_core.live.limits import MAX_NEW_TOKENS, MAX_PROMPT_CHARS, MAX_UPLOAD_MB
from specdec_core.live.presets import PRESETS
from specdec_core.models import catalog


def _fit_draft(f: LiveForm) -> None:
    """Keep a draft that goes with the chosen target."""
    options = drafts(access(), form.value(f.target))
    if form.value(f.draft) not in options:
        st.session_state[f.draft.key] = options[0]


def _target_changed(f: LiveForm) -> None:
    _fit_draft(f)
    set_prompt(f)


def _import() -> None:
    upload = st.session_state.get("live_upload")
    if upload is not None:
        st.session_state["_live_import"] = upload.getvalue()


def _choice(
    col: DeltaGenerator,
    name: str,
    p: Param,
    options: tuple[str, ...],
    on_change: Callable[..., None] | None = None,
    args: tuple[Any, ...] | None = None,
) -> str:
    """A select box for `name` (target, draft, preset): its label, options and help from live.toml;
    `on_change(*args)` runs when it changes."""
    s = strings("live")
    labels = {"target": lambda k: target_label(k, s), "draft": lambda k: draft_label(k, s)}
    return form.select(
        col,
        p,
        s[name],
        options,
        format_func=labels.get(name, lambda k: s[f"{name}s.{k}"]),
        on_change=on_change,
        args=args,
        help=s[f"{name}_help"],
    )


def controls(f: LiveForm) -> None:
    """The control panel (a draft that fits the target first, and a prompt that follows its
    preset); Generate and Stop come after it, with the run (``ServiceRun.panel``)."""
    s = strings("live")
    offered = target_choices(f)
    _fit_draft(f)
    follow_preset(f)
    with st.container(border=True):
        st.markdown(f"**{s['controls']}**")
        c1, c2, c3 = st.columns([1.2, 1.2, 1])
        target_kind = _choice(c1, "target", f.target, offered, _target_changed, (f,))
        target = catalog.about(target_kind)
        if target.needs_source:
            source_input(c1, f.target_src.key, s["source"], s["source_help"])
        draft_kind = _choice(c2, "draft", f.draft, drafts(access(), target_kind))
        draft = catalog.draft(draft_kind)
        if draft.depth:
            depth_input(c2, f)
        if draft.source:
            source_input(c2, f.draft_src.key, s["draft_source"], s["source_help"])
        if draft.head:
            form.number(c2, f.vocab, s["vocab"], step=1024, help=s["vocab_help"])
        _choice(c3, "preset", f.preset, PRESETS, set_prompt, (f,))
        form.toggle(c3, f.chat, s["chat"], disabled=not target.chat, help=s["chat_help"])
        st.text_area(s["prompt"], key=f.prompt.key, height=130, help=s("prompt_help", limit=MAX_PROMPT_CHARS))
        if target.words:
            st.caption(s("own_words", words=" ".join(target.words)))
        g1, g2, g3, g4, g5, g6 = st.columns([1.3, 1.3, 1, 1, 1, 1.3])
        decoding_controls(g1, g2, f.decoding)
        form.number(g3, f.topk, s["top_k"], step=1, help=s["top_k_help"])
        form.slider(g4, f.topp, s["top_p"], step=0.05, help=s["top_p_help"])
        form.number(g5, f.seed, s["seed"], step=1, help=s["seed_help"])
        form.slider(g6, f.max, s["max_new"], help=s("max_new_help", limit=MAX_NEW_TOKENS))
        form.toggle(st, f.compare, s["compare"], help=s["compare_help"])
        with st.expander(s["replay_title"]):
            st.file_uploader(
                s["upload"],
                type=["json"],
                key="live_upload",
                on_change=_import,
                max_upload_size=MAX_UPLOAD_MB,
                help=s("upload_help", mb=MAX_UPLOAD_MB),
            )
        loaded_models_panel()
