"""Warm the class: every run the teaching routes' links set up (the live page's generation, the
Compare page's grid), run once before class, so the room's presses are replays from the first
minute (and, on a classroom server with a database, on every app process behind it:
specdec_core.live.replays). The race is left out: each learner times their own.

Each step's link is read the way its page reads it (the page's form; the live page's preset
prompt in each language the course is taught in, en and zh), so a warmed run has the very key a
learner's press will have, whichever language the learner reads. On a
classroom server the button asks for the teacher's passcode (hidden without one), as unloading
the models does. The runs go to the process's run service, watched by a fragment.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from pages.common.class_answers import shared_classroom
from pages.common.compare_form import CompareForm, grid_problem, grid_spec
from pages.common.form import link_reader
from pages.common.i18n import LANGUAGES, Strings
from pages.common.live_form import LiveForm, settings
from pages.common.models import access, run_service, shelf
from pages.common.service_run import error_text
from specdec_core.course.teach import CLASS, LECTURE, Step
from specdec_core.live import access as rules
from specdec_core.live.compare_run import GridJob
from specdec_core.live.live_job import LiveJob
from specdec_core.live.presets import preset_prompt
from specdec_core.live.run_service import DONE, FAILED
from specdec_core.models import catalog

TICKETS_KEY = "_teach_warm"  # the warm-up's tickets while it goes
DONE_KEY = "_teach_warmed"  # (runs, replayed already, failures' messages) when it ended
POLL_S = 0.5


def _steps() -> list[Step]:
    """The routes' steps, each once (the lecture repeats some of the class's)."""
    seen: dict[str, Step] = {}
    for route in (CLASS, LECTURE):
        for section in route.sections:
            for step in section.steps:
                seen.setdefault(step.key, step)
    return list(seen.values())


def warm_jobs(langs: Sequence[str] = tuple(LANGUAGES)) -> tuple[list[LiveJob | GridJob], list[str]]:
    """One job per distinct run the routes link to, as a learner in each of `langs` sets it up
    (a live run's prompt is in the learner's language; a grid's is not); and why a linked grid
    cannot run on this server (in the page's language), once for each one refused."""
    room, jobs, refused, keys = shared_classroom(), [], [], set()
    for lang, step in ((lang, step) for lang in langs for step in _steps()):
        read = link_reader(step.query)
        if step.page == "live":
            f = LiveForm()
            spec = settings(f, read)
            words = bool(catalog.about(spec.target.kind).words)  # the link's prompt, else its preset's
            prompt = read(f.prompt) or preset_prompt(read(f.preset), lang, words)
            job: LiveJob | GridJob = LiveJob(spec, prompt, shelf(), access(), room)
        elif step.page == "compare":
            grid = grid_spec(CompareForm(), read)
            problem = grid_problem(grid)
            if problem is not None:
                if problem not in refused:
                    refused.append(problem)
                continue
            job = GridJob(grid, shelf(), access(), room)
        else:
            continue
        if job.key not in keys:  # the lecture links to the class's runs again
            keys.add(job.key)
            jobs.append(job)
    return jobs, refused


def _warm() -> None:
    ss = st.session_state
    given = ss.get("teach_passcode", "")
    ss["teach_passcode"] = ""  # the field is emptied after every try
    ss.pop(DONE_KEY, None)
    if not rules.may_unload(access(), given):
        ss["_teach_warm_refused"] = True
        return
    jobs, refused = warm_jobs()
    if not jobs:  # every linked run refused here: nothing to wait for
        ss[DONE_KEY] = (0, 0, refused)
        return
    ss["_teach_warm_refused_grids"] = refused
    ss[TICKETS_KEY] = [(run_service().submit(job), _stored(job)) for job in jobs]


def _stored(job: LiveJob | GridJob) -> bool:
    """Whether the job's run is stored already (a live run; a grid looks each run up as it goes)."""
    return isinstance(job, LiveJob) and job.ready() is not None


def _watch(s: Strings) -> None:
    ss = st.session_state
    tickets = ss.get(TICKETS_KEY)
    if not tickets:
        return
    ended, failures = 0, []
    for ticket, _ in tickets:
        try:
            snap = run_service().snapshot(ticket)
        except KeyError:  # forgotten by the service (a restarted server): nothing to wait for
            ended += 1
            continue
        ended += snap.ended_already
        if snap.state == FAILED and snap.error is not None:
            failures.append(error_text(snap.error))
        elif snap.ended_already and snap.state != DONE:
            failures.append(s["warm.cancelled"])
    if ended < len(tickets):
        st.progress(ended / len(tickets), text=s("warm.progress", done=ended, n=len(tickets)))
        return
    failures += ss.pop("_teach_warm_refused_grids", [])
    ss[DONE_KEY] = (len(tickets), sum(replayed for _, replayed in tickets), failures)
    del ss[TICKETS_KEY]
    st.rerun()


def done_text(s: Strings, n: int, replayed: int) -> str:
    """How the warm-up went, in words that agree with the numbers: `n` demos ready, `replayed`
    of them stored before (not run again)."""
    ready = s["warm.done_one"] if n == 1 else s("warm.done", n=n)
    if replayed == 0:
        return ready
    if replayed == n:
        return f"{ready} {s['warm.stored_all']}"
    return f"{ready} {s['warm.stored_one'] if replayed == 1 else s('warm.stored', replayed=replayed)}"


def warm_panel(s: Strings) -> None:
    """The teacher's "warm the class" button (behind the passcode on a classroom server) and
    how the warm-up went."""
    ss, how = st.session_state, access().unload
    with st.expander(s["warm.title"], icon=":material/local_fire_department:"):
        st.markdown(s["warm.intro"])
        if how == "hidden":
            st.caption(s["warm.hidden"])
            return
        if how == "passcode":
            st.text_input(s["warm.passcode"], type="password", key="teach_passcode")
        going = TICKETS_KEY in ss
        st.button(s["warm.button"], key="teach_warm", on_click=_warm, disabled=going,
                  icon=":material/play_arrow:")  # fmt: skip
        if ss.pop("_teach_warm_refused", False):
            st.error(s["warm.refused"])
        if going:
            st.fragment(lambda: _watch(s), run_every=POLL_S)()
        finished = ss.get(DONE_KEY)
        if finished is not None:
            n, replayed, failures = finished
            st.success(done_text(s, n, replayed))
            for message in failures:
                st.error(message, icon=":material/error:")
