"""The lab's run: Draw hands a :class:`~specdec_core.live.law_job.LawJob` built from the
controls to the run service; while it draws, the counts so far are shown as they come; a Stop
keeps them."""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages.common import form
from pages.common.i18n import strings
from pages.common.models import access, shelf
from pages.common.service_run import Refused, show_status
from pages.law_live_parts.controls import LawForm, problem, settings
from pages.law_live_parts.view import RESULT_KEY, show
from specdec_core.live.law_job import LawJob, LawProgress, LawRequest
from specdec_core.live.run_service import Snapshot
from specdec_core.viz.escape import md


def law_job(f: LawForm) -> LawJob:
    """The job Draw hands to the run service; settings out of bounds are refused."""
    spec = settings(f)
    trouble = problem(spec)
    if trouble is not None:
        raise Refused(trouble)
    return LawJob(LawRequest(spec, form.value(f.prompt)), shelf(), access())


def show_progress(snap: Snapshot) -> None:
    """A drawing lab's bar (samples, each rule's count, time left) and its tables so far."""
    s, p = strings("law_live"), snap.progress
    show_status(snap)
    if not isinstance(p, LawProgress) or p.total == 0 or snap.result is None:
        st.progress(0.0, text=s["progress_start"])
        return
    spec, table = snap.result
    counts = dict(p.counts)
    done = s("progress", n=spec.samples, exact=counts["exact"], broken=counts[spec.broken],
             rule=s[f"rules.{spec.broken}"])  # fmt: skip
    left = s["eta_wait"] if p.eta_s is None else s("eta", eta=p.eta_s)
    text = f"{done} · {left}"
    st.progress(p.done / p.total, text=md(text))
    show(spec, table, key=f"law_live_{p.done}")


def keep(value: Any) -> None:
    st.session_state[RESULT_KEY] = value
