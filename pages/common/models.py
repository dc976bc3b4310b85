"""The process's models and run service, and the panel that shows them.

One :class:`~specdec_core.live.shelf.ModelShelf` per server process (``st.cache_resource``)
holds the models built so far, so all browser sessions share them, at most as many as the
server allows (least recently used unloaded first). Every model load and use is a job of the
process's one :class:`~specdec_core.live.run_service.RunService` (its one worker runs them in
turn), and pages see them only through the jobs' snapshots. The server's rules
(specdec_core.live.access: classroom mode, the teacher's models and passcode) decide what may
load and who may unload. Messages: ``[models]`` of lessons/<lang>/live.toml.
"""

from __future__ import annotations

import streamlit as st

from pages.common.gc_settle import settle_after_load
from pages.common.i18n import strings
from specdec_core.live import access as rules
from specdec_core.live.classroom import Classroom
from specdec_core.live.job_models import Preloaded, PreloadJob
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
def run_service() -> RunService:
    """The process-wide run service: its one worker runs the pages' jobs in order."""
    return RunService()


@st.cache_resource(show_spinner=False)
def classroom() -> Classroom:
    """The process-wide trace cache and pace of the last runs (specdec_core.live.classroom)."""
    return Classroom()


@st.cache_resource(show_spinner=False)
def preload_ticket(rules_now: rules.Access) -> str:
    """The run service's ticket of the teacher's preload (submitted once per process)."""
    return run_service().submit(PreloadJob(rules_now, shelf()))


def start_preload() -> None:
    """In classroom mode, hand the loading of the teacher's models to the run service (once per
    process; app.py calls this on every run, so the first visit to any page starts it)."""
    rules_now = access()
    if rules_now.classroom:
        preload_ticket(rules_now)


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
    try:
        snap = run_service().snapshot(preload_ticket(rules_now))
    except KeyError:  # ended long ago and forgotten by the service: nothing left to tell
        return
    preload = snap.result if snap.ended_already else snap.progress
    if not isinstance(preload, Preloaded):  # waiting in line
        preload = Preloaded(0, len(rules_now.preload))
    if preload.done < preload.n:
        st.caption(s("models.preloading", done=preload.done, n=preload.n))
    for what, reason in preload.failed:
        st.warning(s("models.preload_failed", what=md(what), reason=md(server_paths_hidden(reason))))


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
