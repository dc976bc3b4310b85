"""Warm the class: every live-page run the teaching routes link to, run once before class, so
the room's presses are replays from the first minute (and, on a classroom server with a
database, on every app process behind it: specdec_core.live.replays).

Each step's link is read the way the live page reads it (its form and its preset's prompt in
the teacher's language), so a warmed run has the very key a learner's press will have. On a
classroom server the button asks for the teacher's passcode (hidden without one), as unloading
the models does. The runs go to the process's run service, watched by a fragment.
"""

from __future__ import annotations

import streamlit as st

from pages.common.class_answers import shared_classroom
from pages.common.form import link_reader
from pages.common.i18n import Strings
from pages.common.live_form import live_form, settings
from pages.common.models import access, run_service, shelf
from pages.common.service_run import WAIT_LIMIT, error_text
from specdec_core.course.teach import CLASS, LECTURE
from specdec_core.live import access as rules
from specdec_core.live.live_job import LiveJob
from specdec_core.live.presets import preset_prompt
from specdec_core.live.run_service import DONE, FAILED

TICKETS_KEY = "_teach_warm"  # the warm-up's tickets while it goes
DONE_KEY = "_teach_warmed"  # (runs, replayed already, failures' messages) when it ended
POLL_S = 0.5


def warm_jobs(lang: str) -> list[LiveJob]:
    """One job per distinct live-page run the routes link to, as a learner in `lang` sees it."""
    f, jobs, seen = live_form(), [], set()
    room = shared_classroom()
    for route in (CLASS, LECTURE):
        for section in route.sections:
            for step in section.steps:
                if step.page != "live":
                    continue
                read = link_reader(step.query)
                spec = settings(f, read)
                prompt = preset_prompt(read(f.preset), lang, spec.target.kind == "toy")
                job = LiveJob(spec, prompt, shelf(), access(), room, WAIT_LIMIT)
                if job.key not in seen:
                    seen.add(job.key)
                    jobs.append(job)
    return jobs


def _warm(lang: str) -> None:
    ss = st.session_state
    given = ss.get("teach_passcode", "")
    ss["teach_passcode"] = ""  # the field is emptied after every try
    ss.pop(DONE_KEY, None)
    if not rules.may_unload(access(), given):
        ss["_teach_warm_refused"] = True
        return
    ss[TICKETS_KEY] = [(run_service().submit(job), job.ready() is not None) for job in warm_jobs(lang)]


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
    ss[DONE_KEY] = (len(tickets), sum(replayed for _, replayed in tickets), failures)
    del ss[TICKETS_KEY]
    st.rerun()


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
        st.button(s["warm.button"], key="teach_warm", on_click=_warm, args=(s.lang,), disabled=going,
                  icon=":material/play_arrow:")  # fmt: skip
        if ss.pop("_teach_warm_refused", False):
            st.error(s["warm.refused"])
        if going:
            st.fragment(lambda: _watch(s), run_every=POLL_S)()
        finished = ss.get(DONE_KEY)
        if finished is not None:
            n, replayed, failures = finished
            st.success(s("warm.done", n=n, replayed=replayed))
            for message in failures:
                st.error(message, icon=":material/error:")
