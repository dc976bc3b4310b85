"""The Compare page's grid run, watched: Run hands a grid job to the process's run service, a
fragment reads its snapshot on a timer while it goes, and Stop cancels it from its on_click. The
page stays usable meanwhile (scroll, switch figure or language, visit a lesson and come back):
the run lives in the service, and this session keeps only its ticket."""

from __future__ import annotations

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import WAIT_LIMIT, model_error_text
from pages.common.models import access, classroom, run_service, shelf
from pages.compare_parts.run import RESULT_KEY, grid_problem, grid_spec
from specdec_core.live.compare_run import GridJob
from specdec_core.live.run_service import FAILED, WAITING, Snapshot
from specdec_core.models import ModelBusyError
from specdec_core.viz.escape import md, server_paths_hidden

TICKET_KEY = "_cmp_ticket"  # the session's run in the service, while it goes
ERROR_KEY = "_cmp_error"
POLL_S = 0.5


def _start() -> None:
    ss = st.session_state
    spec = grid_spec()
    problem = grid_problem(spec)
    if problem is not None:
        ss[ERROR_KEY] = problem
        return
    ss.pop(ERROR_KEY, None)
    ss[TICKET_KEY] = run_service().submit(GridJob(spec, shelf(), access(), classroom(), WAIT_LIMIT))


def _stop() -> None:
    ticket = st.session_state.pop(TICKET_KEY, None)
    if ticket is None:
        return
    try:
        view = run_service().cancel(ticket)
    except KeyError:  # already ended and forgotten: nothing to keep
        return
    if view.result is not None and view.result.runs:
        st.session_state[RESULT_KEY] = view.result  # the finished runs stay


def _error_text(error: BaseException | None) -> str:
    s = strings("live")
    if isinstance(error, ModelBusyError):
        return s("busy_timeout", seconds=int(WAIT_LIMIT))
    if isinstance(error, ValueError | OSError):  # a missing model, a refused one, a bad layer count
        return model_error_text(error)
    return s("run_error", message=md(server_paths_hidden(error)))


def _show(s, snap: Snapshot) -> None:
    """A running grid's line, model load, wait for busy models, or last finished generation."""
    progress = snap.progress
    if snap.state == WAITING:
        st.info(s("queue_grid", ahead=snap.ahead), icon=":material/hourglass_top:")
    elif progress is not None and progress.loading is not None:
        fraction, message = progress.loading
        st.progress(min(max(fraction, 0.0), 1.0), text=md(message))
    elif progress is not None and progress.busy_s is not None:
        st.info(strings("live")("models.busy", seconds=progress.busy_s), icon=":material/hourglass_top:")
    step = None if progress is None else progress.step
    if step is None:
        st.progress(0.0, text=s["starting"])
        return
    label = s("progress", done=step.done, total=step.total, target=step.target, draft=step.draft,
              category=s["category_names"][step.category])  # fmt: skip
    st.progress(step.done / step.total, text=md(label + (s["replayed"] if step.replayed else "")))


@st.fragment(run_every=POLL_S)
def _watch() -> None:
    ss = st.session_state
    ticket = ss.get(TICKET_KEY)
    if ticket is None:  # stopped meanwhile: the page's next run draws no watcher
        return
    try:
        snap = run_service().snapshot(ticket)
    except KeyError:  # the server forgot it (restarted service): the run is gone
        ss.pop(TICKET_KEY, None)
        st.rerun()
    if not snap.ended_already:
        _show(strings("compare"), snap)
        return
    ss.pop(TICKET_KEY, None)
    if snap.result is not None and snap.result.runs:
        ss[RESULT_KEY] = snap.result
    if snap.state == FAILED:
        ss[ERROR_KEY] = _error_text(snap.error)
    st.rerun()  # the whole page, to show the finished grid


def run_panel(s) -> None:
    """Run and Stop, and while this session's grid goes, its progress read from the service."""
    ss = st.session_state
    going = TICKET_KEY in ss
    row = st.container(horizontal=True)
    row.button(
        s["run"], type="primary", key="cmp_run", on_click=_start, icon=":material/play_arrow:", disabled=going
    )
    row.button(
        strings("live")["stop"], key="cmp_stop", on_click=_stop, disabled=not going, icon=":material/stop:"
    )
    if going:
        _watch()
    if ss.get(ERROR_KEY):
        st.error(ss[ERROR_KEY], icon=":material/error:")
