"""The Compare page's grid run: Run hands a grid job to the process's run service
(:class:`~pages.common.service_run.ServiceRun`), its progress is read while it goes, and Stop
keeps the finished runs. The page stays usable meanwhile (scroll, switch figure or language,
visit a lesson and come back): the run lives in the service, this session keeps its ticket."""

from __future__ import annotations

import streamlit as st

from pages.common.class_answers import shared_classroom
from pages.common.compare_form import CompareForm, grid_problem, grid_spec
from pages.common.i18n import strings
from pages.common.models import access, shelf
from pages.common.service_run import Refused, ServiceRun, show_status
from pages.compare_parts.run import RESULT_KEY, SAMPLE_KEY
from specdec_core.live.compare_run import GridJob, GridProgress
from specdec_core.live.run_service import Snapshot
from specdec_core.viz.escape import md


def _job(f: CompareForm) -> GridJob:
    spec = grid_spec(f, picked=st.session_state.get(SAMPLE_KEY))
    problem = grid_problem(spec)
    if problem is not None:
        raise Refused(problem)
    return GridJob(spec, shelf(), access(), shared_classroom())


def _show(snap: Snapshot) -> None:
    """A running grid's place in line, model load, or last generation."""
    s, progress = strings("compare"), snap.progress
    show_status(snap)
    step = progress.step if isinstance(progress, GridProgress) else None
    if step is None:
        st.progress(0.0, text=s["starting"])
        return
    label = s("progress", done=step.done, total=step.total, target=step.target, draft=step.draft,
              category=s["category_names"][step.category])  # fmt: skip
    st.progress(step.done / step.total, text=md(label + (s["replayed"] if step.replayed else "")))


def _keep(result) -> None:
    if result.runs:
        st.session_state[RESULT_KEY] = result


def run_panel(s, f: CompareForm) -> None:
    """Run and Stop, and while this session's grid goes, its progress (the grid is read from `f`)."""
    ServiceRun("cmp", lambda: _job(f), _show, _keep).panel(s["run"], "cmp_run", ":material/play_arrow:")
