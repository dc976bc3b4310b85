"""A page's Start / Stop for a job run by the process's run service, watched while it goes.

Start's on_click builds the page's job (a refusal becomes the page's message) and hands it to
:func:`~pages.common.models.run_service`; the session keeps only the ticket. While the ticket's
run goes, a fragment reads its snapshot every :data:`POLL_S` seconds and draws its progress
with the page's `show`; when it ends, the page's `keep` receives the result and the whole page
reruns to show it. Stop's on_click cancels the ticket: the run ends within a round and its
result so far is kept. Nothing reaches into Streamlit's private state, and no Streamlit call or
exception enters the core: the worker only publishes, the page only reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.common.i18n import strings
from pages.common.models import run_service
from specdec_core.live.model_choices import ChoiceError
from specdec_core.live.run_service import FAILED, WAITING, Job, Loading, Snapshot
from specdec_core.live.runs import PromptError
from specdec_core.viz.escape import md, server_paths_hidden

#: Seconds between a watched run's redraws: each one reruns the fragment and sends the run's
#: progress again, work that shares the cores with the run itself (once per learner watching).
POLL_S = 1.0
#: How long Stop waits for the run's round to end, so the result holds all it committed.
STOP_WAIT_S = 30.0


class Refused(ValueError):
    """A run its page refuses before it starts (settings out of bounds); the message is already
    in the page's language and is shown as it is."""


def error_text(exc: BaseException) -> str:
    """Why a run could not start or ended early, in the page's language: a refused setting, a
    bad prompt, a model that cannot load, or the run's own error."""
    s = strings("live")
    if isinstance(exc, Refused):
        return str(exc)
    if isinstance(exc, PromptError):
        params = {k: md(v) if isinstance(v, str) else v for k, v in exc.params.items()}
        return s(f"prompt_errors.{exc.code}", **params)
    if isinstance(exc, ValueError | OSError):  # a missing model, a mismatched pair, a bad layer count
        return model_error_text(exc)
    return s("run_error", message=md(server_paths_hidden(exc)))


#: Model errors by class name (the loading errors live with torch, imported only when a real
#: model loads, so they are matched by name) → their message in lessons/<lang>/live.toml.
_MODEL_ERRORS = {
    "TokenizerMismatchError": "mismatch",
    "ModelNotAvailableError": "not_available",
    "ModelLoadError": "cannot_load",
}


def model_error_text(exc: Exception) -> str:
    """Why the models could not be prepared, in the page's language; the core's own (English)
    detail follows, escaped, since it names the model or folder at fault."""
    s = strings("live")
    code = getattr(exc, "code", None) if isinstance(exc, ChoiceError) else None
    for cls in type(exc).__mro__:
        code = code or _MODEL_ERRORS.get(cls.__name__)
    return s(f"model_errors.{code or 'other'}", detail=md(server_paths_hidden(exc)))


def show_status(snap: Snapshot) -> None:
    """What every job shows above its own progress: its place in line while it waits, or the
    model it is loading (a :class:`~specdec_core.live.run_service.Loading` progress)."""
    if snap.state == WAITING:
        st.info(strings("common")("queue_job", ahead=snap.ahead), icon=":material/hourglass_top:")
    elif isinstance(snap.progress, Loading):  # a model id is the user's text
        st.info(strings("live")("models.loading", what=md(snap.progress.what)), icon=":material/downloading:")


class ServiceRun:
    """The Start / Stop of one page (session keys ``_<prefix>_ticket`` and ``_<prefix>_error``):
    `make_job()` builds the job from the controls, `show(snapshot)` draws a running one's
    progress, `keep(result)` puts a result (partial after a Stop) where the page shows it.
    `make_job` reads the controls through :func:`pages.common.form.value` (a control the last
    page run did not draw gives its default), so the page's one ``restore`` per run suffices."""

    def __init__(
        self,
        prefix: str,
        make_job: Callable[[], Job],
        show: Callable[[Snapshot], None],
        keep: Callable[[Any], None],
    ) -> None:
        self.ticket_key = f"_{prefix}_ticket"
        self.error_key = f"_{prefix}_error"
        self.stop_key = f"{prefix}_stop"
        self.make_job, self.show, self.keep = make_job, show, keep

    @property
    def going(self) -> bool:
        return self.ticket_key in st.session_state

    def set_error(self, message: str | None) -> None:
        """Show `message` as this page's error from now on (None clears it)."""
        if message is None:
            st.session_state.pop(self.error_key, None)
        else:
            st.session_state[self.error_key] = message

    def _start(self) -> None:
        ss = st.session_state
        ss.pop(self.error_key, None)
        try:
            job = self.make_job()
        except (ValueError, OSError) as exc:  # refused settings, a bad depth list, a bad prompt
            ss[self.error_key] = error_text(exc)
            return
        ss[self.ticket_key] = run_service().submit(job)

    def _stop(self) -> None:
        ticket = st.session_state.pop(self.ticket_key, None)
        if ticket is None:
            return
        try:
            view = run_service().cancel(ticket, wait=STOP_WAIT_S)
        except KeyError:  # ended and forgotten already
            return
        if view.result is not None:
            self.keep(view.result)

    def _end(self, snap: Snapshot) -> None:
        st.session_state.pop(self.ticket_key, None)
        if snap.result is not None:
            self.keep(snap.result)
        if snap.state == FAILED and snap.error is not None:
            st.session_state[self.error_key] = error_text(snap.error)

    def _watch(self) -> None:
        ticket = st.session_state.get(self.ticket_key)
        if ticket is None:  # stopped meanwhile: the page's next run draws no watcher
            return
        try:
            snap = run_service().snapshot(ticket)
        except KeyError:  # the service does not know it (a restarted server): nothing to collect
            st.session_state.pop(self.ticket_key, None)
            st.rerun()
        if snap.ended_already:
            self._end(snap)
            st.rerun()  # the whole page, to show the result
        self.show(snap)

    def panel(self, label: str, key: str, icon: str) -> None:
        """Start (`label`, `key`, `icon`) and Stop, the running job's progress, and the last message."""
        ss = st.session_state
        row = st.container(horizontal=True)
        going = self.going
        row.button(label, type="primary", key=key, on_click=self._start, icon=icon, disabled=going)
        row.button(strings("live")["stop"], key=self.stop_key, on_click=self._stop, disabled=not going,
                   icon=":material/stop:")  # fmt: skip
        if going:
            st.fragment(self._watch, run_every=POLL_S)()
        if ss.get(self.error_key):
            st.error(ss[self.error_key], icon=":material/error:")
