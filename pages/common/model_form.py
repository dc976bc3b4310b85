"""Form parts the two live-model pages share, by their session key prefix (``live``, ``race``).

The prompt box starts from a preset, and an unedited preset prompt follows the language and
the target (the toy pair has its own words); γ, adaptive γ and the temperature are the same
widgets on both pages, described once (:class:`DecodingForm`: their URL parameters, widgets
and values as settings fields); the
target's spec and the chat switch are read back from the form. The targets offered, where a
custom model comes from and the layer-skip depth's bound follow the server's rules and the
chosen target (specdec_core.live.access, model_choices.target_layers). Labels come from
lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import Strings, current_lang, strings
from pages.common.models import access, shelf
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param
from specdec_core.live.access import source_allowed
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.live.model_choices import TargetSpec, plain_targets, target_key, target_layers
from specdec_core.live.presets import preset_prompt
from specdec_core.live.settings import TREE_SHAPES, parse_shape, shape_nodes
from specdec_core.models import families
from specdec_core.viz.escape import md

#: The layer-skip depth's bound when the target's layer count cannot be read.
MAX_LAYERS = 256


def preset_text(prefix: str) -> str:
    """The chosen preset's prompt, in the session language or in the toy pair's words."""
    ss = st.session_state
    return preset_prompt(ss[f"{prefix}_preset"], current_lang(), ss[f"{prefix}_target"] == "toy")


def set_prompt(prefix: str) -> None:
    """Fill the prompt box with the chosen preset (and remember it as unedited)."""
    st.session_state[f"{prefix}_prompt"] = preset_text(prefix)
    st.session_state[f"_{prefix}_prompt_origin"] = st.session_state[f"{prefix}_prompt"]


def follow_preset(prefix: str) -> None:
    """Fill an empty prompt box, or refill an unedited preset whose language or target changed."""
    ss = st.session_state
    origin = ss.get(f"_{prefix}_prompt_origin")
    if f"{prefix}_prompt" not in ss or (ss[f"{prefix}_prompt"] == origin and origin != preset_text(prefix)):
        set_prompt(prefix)


@dataclass(frozen=True)
class DecodingForm(Form):
    """γ, adaptive γ, the tree's shape and the temperature: the same controls on every page
    that decodes (keys ``<prefix>_gamma``, ``_adaptive``, ``_shape``, ``_t``)."""

    gamma: Param
    adaptive: Param
    shape: Param
    t: Param


def decoding_form(prefix: str) -> DecodingForm:
    return DecodingForm(
        int_param(f"{prefix}_gamma", 4, 1, 16),
        bool_param(f"{prefix}_adaptive", False),
        choice_param(f"{prefix}_shape", "chain", TREE_SHAPES),
        float_param(f"{prefix}_t", 0.0, 0.0, 2.0),
    )


def decoding_controls(gamma_col: DeltaGenerator, temperature_col: DeltaGenerator, f: DecodingForm) -> None:
    """γ and adaptive γ in `gamma_col`, the temperature in `temperature_col`."""
    s = strings("live")
    form.slider(gamma_col, f.gamma, s["gamma"], help=s["gamma_help"])
    form.toggle(gamma_col, f.adaptive, s["adaptive"], help=s["adaptive_help"])
    form.select(
        gamma_col,
        f.shape,
        s["tree"],
        format_func=lambda k: s["tree_chain"] if k == "chain" else s("tree_shape", shape=k, n=shape_nodes(k)),
        help=s["tree_help"],
    )
    form.slider(temperature_col, f.t, s["temperature"], step=0.05, help=s["temperature_help"])


def decoding_values(f: DecodingForm, read: Callable[[Param], Any] = form.value) -> dict[str, Any]:
    """The values of :func:`decoding_controls` (`read`: a control's value), as ``DecodeSettings``
    fields."""
    return {
        "gamma": int(read(f.gamma)),
        "adaptive": bool(read(f.adaptive)),
        "tree": parse_shape(read(f.shape)),
        "temperature": float(read(f.t)),
    }


def target_of(kind: str, source: str) -> TargetSpec:
    """The target of `kind` (its `source` counts only for a custom target)."""
    return TargetSpec(kind, source.strip() if kind == "custom" else "")


def chat_for(kind: str, chat: bool) -> bool:
    """Whether to wrap the prompt in the chat template (never for a target without one)."""
    return bool(chat) and kind not in plain_targets()


def target_spec(prefix: str) -> TargetSpec:
    """The chosen target of the page whose keys start with `prefix`."""
    ss = st.session_state
    return target_of(ss[f"{prefix}_target"], ss.get(f"{prefix}_target_src", ""))


def chat_on(prefix: str) -> bool:
    """Whether the page whose keys start with `prefix` wraps its prompt in the chat template."""
    ss = st.session_state
    return chat_for(ss[f"{prefix}_target"], ss[f"{prefix}_chat"])


def target_choices(prefix: str) -> tuple[str, ...]:
    """The target kinds this server offers; a chosen kind it does not offer falls back to the first."""
    options = access().targets
    if st.session_state.get(f"{prefix}_target") not in options:
        st.session_state[f"{prefix}_target"] = options[0]
    return options


def source_input(col: DeltaGenerator, key: str, label: str, help_text: str) -> None:
    """Where a custom model comes from: a free text box, or in classroom mode a choice among
    the teacher's models (a value from anywhere else, a link for one, is replaced)."""
    s = strings("live")
    sources = access().sources
    if access().free_sources:
        col.text_input(
            label, key=key, placeholder=s["source_placeholder"], help=help_text, max_chars=MAX_SOURCE_CHARS
        )
        return
    if st.session_state.get(key) not in sources:
        st.session_state[key] = sources[0] if sources else ""
    col.selectbox(s["classroom_source"], sources, key=key, help=s["classroom_source_help"])


def layer_bound(prefix: str) -> int | None:
    """How many layers the chosen target has (the model's own count once loaded, else its
    config; nothing is loaded for this), None when unknown."""
    spec = target_spec(prefix)
    if spec.kind == "custom" and not source_allowed(access(), spec.source):
        return None  # a path the server does not offer is never looked at
    return target_layers(spec, shelf().peek(target_key(spec)))


def depth_input(col: DeltaGenerator, key: str, prefix: str) -> None:
    """The layer-skip depth k, bounded by the target's layer count in the widget itself."""
    s = strings("live")
    layers = layer_bound(prefix)
    top = layers or MAX_LAYERS
    asked = int(st.session_state.get(key, 1))
    if asked > top:
        st.session_state[key] = top
        if layers is not None:
            st.warning(s("k_lowered", asked=asked, n=layers, model=md(_target_label(prefix))))
    help_text = s["k_help"]
    if layers is not None:
        help_text += " " + s("k_bound", n=layers, model=md(_target_label(prefix)))
    col.number_input(s["k"], min_value=1, max_value=top, step=1, key=key, help=help_text)


def _target_label(prefix: str) -> str:
    spec = target_spec(prefix)
    return spec.source if spec.kind == "custom" else target_label(spec.kind)


def target_label(kind: str, live: Strings | None = None) -> str:
    """A target kind's name in `live` (live.toml's strings, bound to a language; by default the
    page's); a family registered without strings shows its own English label."""
    try:
        return (live or strings("live"))[f"targets.{kind}"]
    except KeyError:
        return families.family(kind).label
