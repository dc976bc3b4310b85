"""Form parts the model pages share (live, race, law lab), each given the page's form
(:class:`ModelForm`: its target, preset, prompt and chat switch).

The prompt box starts from a preset, and an unedited preset prompt follows the language and
the target (the toy pair has its own words); γ, adaptive γ, the tree's shape and the
temperature are the same controls on the live page and the race (:class:`DecodingForm`, nested
in their forms); the target's spec and the chat switch are read back from the form. The
targets offered, where a custom model comes from and the layer-skip depth's bound follow the
server's rules and the chosen target (specdec_core.live.access, model_choices.target_layers).
Labels come from lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import Strings, current_lang, strings
from pages.common.models import access, shelf
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param
from specdec_core.live.access import source_allowed
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.live.model_choices import TargetSpec, target_key, target_layers
from specdec_core.live.presets import preset_prompt
from specdec_core.live.settings import TREE_SHAPES, parse_shape, shape_nodes
from specdec_core.models import catalog
from specdec_core.models.catalog import chat_for
from specdec_core.models.catalog import target_spec as target_of
from specdec_core.viz.escape import md

#: The layer-skip depth's bound when the target's layer count cannot be read.
MAX_LAYERS = 256


class ModelForm(Protocol):
    """What a model page's form has (a custom target's source too, where it offers one); its
    prompt defaults to None, a box the preset fills."""

    target: Param
    preset: Param
    prompt: Param
    chat: Param


def preset_text(f: ModelForm) -> str:
    """The chosen preset's prompt, in the session language or in the target's own words."""
    own_words = bool(catalog.about(form.value(f.target)).words)
    return preset_prompt(form.value(f.preset), current_lang(), own_words)


def set_prompt(f: ModelForm) -> None:
    """Fill the prompt box with the chosen preset (and remember it as unedited)."""
    st.session_state[f.prompt.key] = st.session_state[f"_{f.prompt.key}_origin"] = preset_text(f)


def follow_preset(f: ModelForm) -> None:
    """Fill a prompt box not written yet, or refill an unedited preset whose language or target
    changed."""
    prompt, origin = form.value(f.prompt), st.session_state.get(f"_{f.prompt.key}_origin")
    if prompt is None or (prompt == origin and origin != preset_text(f)):
        set_prompt(f)


class DecodingForm(Form):
    """γ, adaptive γ, the tree's shape and the temperature: the same controls on every page
    that decodes (keys ``<prefix>_gamma``, ``_adaptive``, ``_shape``, ``_t``)."""

    gamma = int_param(4, 1, 16)
    adaptive = bool_param(False)
    shape = choice_param("chain", TREE_SHAPES)
    t = float_param(0.0, 0.0, 2.0)


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


def decoding_values(f: DecodingForm, read: Callable[[Param], Any] | None = None) -> dict[str, Any]:
    """The values of :func:`decoding_controls` (`read`: a control's value), as ``DecodeSettings``
    fields."""
    v = f.read(read)
    return {
        "gamma": int(v.gamma),
        "adaptive": bool(v.adaptive),
        "tree": parse_shape(v.shape),
        "temperature": float(v.t),
    }


def target_spec(f: ModelForm) -> TargetSpec:
    """The target `f` chooses."""
    source = getattr(f, "target_src", None)
    return target_of(form.value(f.target), "" if source is None else form.value(source))


def chat_on(f: ModelForm) -> bool:
    """Whether the page of `f` wraps its prompt in the chat template."""
    return chat_for(form.value(f.target), form.value(f.chat))


def target_choices(f: ModelForm) -> tuple[str, ...]:
    """The target kinds this server offers; a chosen kind it does not offer falls back to the first."""
    options = access().targets
    if form.value(f.target) not in options:
        st.session_state[f.target.key] = options[0]
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


def layer_bound(f: ModelForm) -> int | None:
    """How many layers the chosen target has (the model's own count once loaded, else its
    config; nothing is loaded for this), None when unknown."""
    spec = target_spec(f)
    if spec.source and not source_allowed(access(), spec.source):
        return None  # a path the server does not offer is never looked at
    return target_layers(spec, shelf().peek(target_key(spec)))


def depth_input(col: DeltaGenerator, f: Any) -> None:
    """The layer-skip depth k (`f.k`), bounded by the target's layer count in the widget itself."""
    s = strings("live")
    layers = layer_bound(f)
    top = layers or MAX_LAYERS
    asked = int(form.value(f.k))
    if asked > top:
        st.session_state[f.k.key] = top
        if layers is not None:
            st.warning(s("k_lowered", asked=asked, n=layers, model=md(_target_label(f))))
    help_text = s["k_help"]
    if layers is not None:
        help_text += " " + s("k_bound", n=layers, model=md(_target_label(f)))
    col.number_input(s["k"], min_value=1, max_value=top, step=1, key=f.k.key, help=help_text)


def _target_label(f: ModelForm) -> str:
    spec = target_spec(f)
    return spec.source or target_label(spec.kind)


def target_label(kind: str, live: Strings | None = None) -> str:
    """A target kind's name in `live` (live.toml's strings, bound to a language; by default the
    page's); a family registered without strings shows its own English label."""
    try:
        return (live or strings("live"))[f"targets.{kind}"]
    except KeyError:
        return catalog.about(kind).label


def draft_label(kind: str, s: Strings, table: str = "drafts") -> str:
    """A draft kind's name in `s` (its `table`: live.toml's ``drafts``, race.toml's ``short``);
    a kind registered without strings shows its own English label."""
    try:
        return s[f"{table}.{kind}"]
    except KeyError:
        return catalog.draft(kind).label
