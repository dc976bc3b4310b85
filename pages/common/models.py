"""Models for the live pages, loaded once per process, with visible progress and waiting.

One :class:`~specdec_core.live.model_choices.ModelShelf` per server process (``st.cache_resource``)
holds every model built so far, so all browser sessions share them; the engine's per-model
locks keep two generations off one model at a time. Loading shows a progress bar fed by the
loader's callback; a session that asks for a model another session is still loading says
so and waits. Messages come from the ``[models]`` table of lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.common.i18n import strings
from specdec_core.live.classroom import Classroom
from specdec_core.live.model_choices import DraftSpec, ModelShelf, TargetSpec, load_draft, load_target
from specdec_core.models.memory import process_bytes, return_freed_memory
from specdec_core.viz.escape import md


@st.cache_resource(show_spinner=False)
def shelf() -> ModelShelf:
    """The process-wide shelf of loaded models."""
    return ModelShelf()


@st.cache_resource(show_spinner=False)
def classroom() -> Classroom:
    """The process-wide trace cache and line for the models (specdec_core.live.classroom)."""
    return Classroom()


def _load(key: tuple[Any, ...], build: Callable[[Callable[[float, str], None]], Any], what: str) -> Any:
    models = shelf()
    if models.cached(key):
        return models.get(key, lambda: None)
    s = strings("live")
    note = st.empty()
    bar = st.progress(0.0, text=s("models.loading", what=md(what)))  # a model id is the user's text

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=md(message))

    def waiting() -> None:
        note.info(s("models.loading_elsewhere", what=md(what)))

    try:
        return models.get(key, lambda: build(progress), waiting)
    finally:
        bar.empty()
        note.empty()


def get_target(spec: TargetSpec) -> Any:
    """The target of `spec`, loaded once per process (errors propagate to the page)."""
    return _load(("target", spec), lambda progress: load_target(spec, progress), spec.source or spec.kind)


def get_draft(target_spec: TargetSpec, target: Any, spec: DraftSpec) -> Any:
    """The draft of `spec` for the target of `target_spec`, loaded once per process."""
    key = ("draft", target_spec, spec)
    return _load(key, lambda progress: load_draft(target, spec, progress), spec.source or spec.kind)


def wait_notice(slot: Any) -> Callable[[float], None]:
    """An ``on_wait(seconds)`` callback that tells the user another session is generating."""
    s = strings("live")

    def show(seconds: float) -> None:
        slot.info(s("models.busy", seconds=seconds), icon=":material/hourglass_top:")

    return show


def _unload() -> None:
    count = shelf().release()
    classroom().forget()  # a fresh start: the next run of any request runs its models again
    return_freed_memory()
    st.session_state["_models_unloaded"] = count


def loaded_models_panel() -> None:
    """The models this server process holds, its memory, and a button that unloads them all."""
    s = strings("live")
    models = shelf().loaded()
    unloaded = st.session_state.pop("_models_unloaded", None)
    title = s("models.loaded_title", n=len(models))
    with st.expander(title, expanded=unloaded is not None, key="models_panel", icon=":material/memory:"):
        if unloaded is not None:
            st.success(s("models.unloaded", n=unloaded))
        if models:
            st.markdown("\n".join(f"- {md(getattr(m, 'name', type(m).__name__))}" for m in models))
        else:
            st.caption(s["models.loaded_none"])
        held = process_bytes()
        if held is not None:
            st.caption(s("models.process_memory", mb=held / 2**20))
        st.button(
            s["models.unload"],
            key="models_unload",
            on_click=_unload,
            disabled=not models,
            help=s["models.unload_help"],
            icon=":material/eject:",
        )
