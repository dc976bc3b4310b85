"""The live page's controls: models, prompt, γ and sampling, Generate / Stop, a saved run to replay.

Widgets keyed ``live_*`` (pages/live.py mirrors them in the URL); :func:`settings` reads
them back as the run's :class:`~specdec_core.live.settings.LiveSettings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common.i18n import strings
from pages.common.model_form import (
    chat_on,
    decoding_controls,
    decoding_values,
    depth_input,
    follow_preset,
    set_prompt,
    source_input,
    target_choices,
    target_label,
    target_spec,
)
from pages.common.models import access, loaded_models_panel
from specdec_core.live.access import drafts
from specdec_core.live.limits import MAX_NEW_TOKENS, MAX_PROMPT_CHARS, MAX_UPLOAD_MB
from specdec_core.live.model_choices import HEAD_DRAFTS, MAX_VOCAB, TOY_WORDS, DraftSpec, plain_targets
from specdec_core.live.presets import PRESETS
from specdec_core.live.settings import LiveSettings


def _fit_draft() -> None:
    """Keep a draft that goes with the chosen target."""
    options = drafts(access(), st.session_state["live_target"])
    if st.session_state["live_draft"] not in options:
        st.session_state["live_draft"] = options[0]


def _target_changed() -> None:
    _fit_draft()
    set_prompt("live")


def _import() -> None:
    upload = st.session_state.get("live_upload")
    if upload is not None:
        st.session_state["_live_import"] = upload.getvalue()


def _choice(
    col: DeltaGenerator,
    name: str,
    options: tuple[str, ...],
    on_change: Callable[..., None] | None = None,
    args: tuple[Any, ...] | None = None,
) -> str:
    """A select box for `name` (target, draft, preset): its label, options and help from live.toml;
    `on_change(*args)` runs when it changes."""
    s = strings("live")
    return col.selectbox(
        s[name],
        options,
        format_func=(lambda k: target_label(k, s)) if name == "target" else lambda k: s[f"{name}s.{k}"],
        key=f"live_{name}",
        on_change=on_change,
        args=args,
        help=s[f"{name}_help"],
    )


def controls() -> None:
    """The control panel (a draft that fits the target first, and a prompt that follows its
    preset); Generate and Stop come after it, with the run (``ServiceRun.panel``)."""
    s = strings("live")
    targets = target_choices("live")
    _fit_draft()
    follow_preset("live")
    with st.container(border=True):
        st.markdown(f"**{s['controls']}**")
        c1, c2, c3 = st.columns([1.2, 1.2, 1])
        target_kind = _choice(c1, "target", targets, _target_changed)
        if target_kind == "custom":
            source_input(c1, "live_target_src", s["source"], s["source_help"])
        draft_kind = _choice(c2, "draft", drafts(access(), target_kind))
        if draft_kind == "layerskip":
            depth_input(c2, "live_k", "live")
        if draft_kind == "custom":
            source_input(c2, "live_draft_src", s["draft_source"], s["source_help"])
        if draft_kind in HEAD_DRAFTS:
            c2.number_input(s["vocab"], 0, MAX_VOCAB, step=1024, key="live_vocab", help=s["vocab_help"])
        _choice(c3, "preset", PRESETS, set_prompt, ("live",))
        c3.toggle(s["chat"], key="live_chat", disabled=target_kind in plain_targets(), help=s["chat_help"])
        st.text_area(
            s["prompt"], key="live_prompt", height=130, help=s("prompt_help", limit=MAX_PROMPT_CHARS)
        )
        if target_kind == "toy":
            st.caption(s("toy_words", words=" ".join(TOY_WORDS)))
        g1, g2, g3, g4, g5, g6 = st.columns([1.3, 1.3, 1, 1, 1, 1.3])
        decoding_controls(g1, g2, "live")
        g3.number_input(
            s["top_k"], min_value=0, max_value=1000, step=1, key="live_topk", help=s["top_k_help"]
        )
        g4.slider(s["top_p"], 0.05, 1.0, step=0.05, key="live_topp", help=s["top_p_help"])
        g5.number_input(
            s["seed"], min_value=0, max_value=2**31 - 1, step=1, key="live_seed", help=s["seed_help"]
        )
        g6.slider(
            s["max_new"], 4, MAX_NEW_TOKENS, key="live_max", help=s("max_new_help", limit=MAX_NEW_TOKENS)
        )
        st.toggle(s["compare"], key="live_compare", help=s["compare_help"])
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


def settings() -> LiveSettings:
    """The run the controls describe."""
    ss = st.session_state
    draft = ss["live_draft"]
    return LiveSettings(
        target=target_spec("live"),
        draft=DraftSpec(
            draft,
            int(ss["live_k"]) if draft == "layerskip" else 0,
            ss["live_draft_src"].strip() if draft == "custom" else "",
            int(ss["live_vocab"]) if draft in HEAD_DRAFTS else 0,
        ),
        chat=chat_on("live"),
        **decoding_values("live"),
        top_k=int(ss["live_topk"]),
        top_p=float(ss["live_topp"]),
        seed=int(ss["live_seed"]),
        max_new_tokens=int(ss["live_max"]),
        compare=bool(ss["live_compare"]),
    )
