"""Models for the live pages, loaded once per process, with visible progress and waiting.

One :class:`~specdec_core.live.shelf.ModelShelf` per server process (``st.cache_resource``)
holds the models built so far, so all browser sessions share them, at most as many as the
server allows (least recently used unloaded first); the engine's per-model locks keep two
generations off one model at a time. The server's rules (specdec_core.live.access: classroom
mode, the teacher's models and passcode) decide what may load and who may unload. Loading
shows a progress bar fed by the loader's callback; a session that asks for a model another
session is still loading says so and waits. Messages: ``[models]`` of lessons/<lang>/live.toml.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from pages.common.gc_settle import settle_after_load
from pages.common.i18n import strings
from specdec_core.live import access as rules
from specdec_core.live.classroom import Classroom
from specdec_core.live.model_choices import (
    DraftSpec,
    TargetSpec,
    draft_key,
    load_draft,
    load_target,
    target_key,
)
from specdec_core.live.run_service import RunService
from specdec_core.live.shelf import ModelShelf
from specdec_core.models.memory import process_bytes, return_freed_memory
from specdec_core.viz.escape import md, server_paths_hidden


def access() -> rules.Access:
    """The rules this server was started with (classroom mode, bound; read from the environment)."""
    return rules.from_env()


@st.cache_resource(show_spinner=False)
def _shelf() -> ModelShelf:
    return ModelShelf(after_build=settle_after_load)


def shelf() -> ModelShelf:
    """The process-wide shelf of loaded models, bounded as the server was started."""
    models = _shelf()
    models.limit = access().max_models
    return models


@st.cache_resource(show_spinner=False)
def preloader(_models: ModelShelf, rules_now: rules.Access) -> rules.Preloader:
    """The teacher's models loading onto the shelf, once per process (classroom mode)."""
    return rules.Preloader(rules_now, _models)


def start_preload() -> None:
    """In classroom mode, start loading the teacher's models (once per process; app.py calls
    this on every run, so the first visit to any page starts it)."""
    rules_now = access()
    if rules_now.classroom:
        preloader(shelf(), rules_now)


@st.cache_resource(show_spinner=False)
def run_service() -> RunService:
    """The process-wide run service: its one worker runs the pages' jobs in order."""
    return RunService()


@st.cache_resource(show_spinner=False)
def classroom() -> Classroom:
    """The process-wide trace cache and pace of the last runs (specdec_core.live.classroom)."""
    return Classroom()


def _load(
    key: tuple[Any, ...],
    build: Callable[[Callable[[float, str], None]], Any],
    what: str,
    parent: tuple[Any, ...] | None = None,
    pin: bool = False,
) -> Any:
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
        return models.get(key, lambda: build(progress), waiting, parent=parent, pin=pin)
    finally:
        bar.empty()
        note.empty()


def get_target(spec: TargetSpec) -> Any:
    """The target of `spec`, loaded once per process (errors propagate to the page); in
    classroom mode only one the teacher offers (else ``ChoiceError("not_allowed")``)."""
    rules_now = access()
    rules.check_target(rules_now, spec)
    build = partial(load_target, spec)  # build(progress)
    return _load(target_key(spec), build, spec.source or spec.kind, pin=spec in rules_now.preload)


def get_draft(target_spec: TargetSpec, target: Any, spec: DraftSpec) -> Any:
    """The draft of `spec` for the target of `target_spec`, loaded once per process (it
    leaves the shelf with its target)."""
    rules.check_draft(access(), spec)
    build = partial(load_draft, target, spec)  # build(progress)
    return _load(
        draft_key(target_spec, spec), build, spec.source or spec.kind, parent=target_key(target_spec)
    )


def _unload() -> None:
    ss = st.session_state
    given = ss.get("models_passcode", "")
    ss["models_passcode"] = ""  # the field is emptied after every try
    if not rules.may_unload(access(), given):
        ss["_models_refused"] = True
        return
    count = shelf().release()
    classroom().forget()  # a fresh start: the next run of any request runs its models again
    return_freed_memory()
    ss["_models_unloaded"] = count


def _preload_note(rules_now: rules.Access) -> None:
    """Classroom mode: the teacher's models are loading, or which of them could not load."""
    s = strings("live")
    loading = preloader(shelf(), rules_now)
    if not loading.finished:
        st.caption(s("models.preloading", done=loading.done, n=len(loading.specs)))
    for spec, reason in loading.failed.items():
        st.warning(
            s(
                "models.preload_failed",
                what=md(spec.source or spec.kind),
                reason=md(server_paths_hidden(reason)),
            )
        )


def _unload_button(rules_now: rules.Access, empty: bool) -> None:
    s = strings("live")
    if rules_now.unload == "hidden":
        st.caption(s["models.unload_hidden"])
        return
    if rules_now.unload == "passcode":
        st.text_input(
            s["models.passcode"], type="password", key="models_passcode", help=s["models.passcode_help"]
        )
    st.button(
        s["models.unload"],
        key="models_unload",
        on_click=_unload,
        disabled=empty,
        help=s["models.unload_help"],
        icon=":material/eject:",
    )


def loaded_models_panel() -> None:
    """The models this server process holds, its bound and memory, and a button that unloads
    them all (in classroom mode behind the teacher's passcode, or hidden)."""
    s = strings("live")
    rules_now = access()
    models = shelf()
    start_preload()  # also here: AppTest runs a page without app.py
    loaded = models.loaded()
    unloaded = st.session_state.pop("_models_unloaded", None)
    refused = st.session_state.pop("_models_refused", False)
    title = s("models.loaded_title", n=len(loaded))
    with st.expander(
        title, expanded=unloaded is not None or refused, key="models_panel", icon=":material/memory:"
    ):
        if unloaded is not None:
            st.success(s("models.unloaded", n=unloaded))
        if refused:
            st.error(s["models.refused"])
        if rules_now.classroom:
            st.caption(s["models.classroom"])
            _preload_note(rules_now)
        if loaded:
            pin = s["models.pinned"]
            st.markdown(
                "\n".join(
                    f"- {md(getattr(m, 'name', type(m).__name__))}{pin if models.pinned(m) else ''}"
                    for m in loaded
                )
            )
        else:
            st.caption(s["models.loaded_none"])
        if models.limit is not None:
            st.caption(s("models.bound", limit=models.limit, evicted=models.evicted))
        held = process_bytes()
        if held is not None:
            st.caption(s("models.process_memory", mb=held / 2**20))
        _unload_button(rules_now, not loaded)
