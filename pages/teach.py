"""Teach it in 90 minutes: timed routes through the course — a 90-minute class in three
sections, then a 45-minute lecture — each step with what to show, a link that sets its page up
through the page's URL state, the handout to give out, and what to ask the room; each section's
learning objectives and the misconception each step addresses. A link with ``?check=before`` or
``after`` shows learners only the class's concept check (pages/teach_parts/check.py)."""

import streamlit as st

from pages.common import profile as shown
from pages.common.i18n import strings
from pages.common.nav import PAGES
from pages.common.page import return_to_route, route_step_query, start
from pages.cost_parts.form import CostForm
from pages.teach_parts.check import check_view
from pages.teach_parts.warm import warm_panel
from specdec_core.course.handouts import HANDOUTS
from specdec_core.course.teach import CLASS, LECTURE, Route, Step, schedule, talking_points
from specdec_core.live.profile_quotes import course_costs

s, text = start("teach")
if check_view(s):  # a learner's concept check: nothing of the teacher's page
    st.stop()
nav = {p.key: p for p in PAGES}
# the cost step's β: this machine's profile, else the memory-bound reference, as on the cost
# page its link opens, on its slider's steps (read at each run: a model loaded since may have
# measured it)
costs = course_costs()
points = talking_points(CostForm(beta=costs.beta().value).beta.default)
points["cost"]["source"] = shown.source(s, costs)
handout_names = strings("handouts")["names"]


def _title(page: str) -> str:
    return s[f"nav.{page}.title"] if page in nav else page


def _handout_link(key: str) -> None:
    if "handouts" in nav:
        st.page_link(
            nav["handouts"].file,
            label=s("handout", name=handout_names[key]),
            icon=nav["handouts"].icon,
            query_params={"handout": key, "lang": s.lang},
        )


def _links(step: Step, back: dict[str, str]) -> None:
    """The step's page link (with `back`: its page then links back to this step) and handout."""
    page = nav.get(step.page)
    if page is None:
        st.info(s("no_link", page=step.page))
    else:
        st.page_link(
            page.file,
            label=s("open", page=_title(step.page)),
            icon=page.icon,
            query_params={**step.query, "lang": s.lang, **back},
        )
    if step.handout is not None:
        _handout_link(step.handout)


def _table(route: Route) -> None:
    slots = schedule(route)
    st.caption(s("total", steps=len(slots), planned=route.planned, slack=route.slack, minutes=route.minutes))
    rows = [
        f"| {slot.start}–{slot.end} | {s[f'steps.{slot.step.key}.title']} | {_title(slot.step.page)} |"
        for slot in slots
    ]
    header = f"| {s['table_minutes']} | {s['table_step']} | {s['table_page']} |\n|---|---|---|\n"
    st.markdown(header + "\n".join(rows))


def show_route(route: Route, lecture: bool = False) -> None:
    """The route's table, then each section and its steps; a lecture step says what to keep."""
    st.header(s[f"routes.{route.key}.title"])
    st.markdown(s[f"routes.{route.key}.intro"])
    _table(route)
    slots = enumerate(schedule(route), 1)  # a step's number is its row in the table
    for section in route.sections:
        st.subheader(s[f"sections.{section.key}.title"], divider="gray")
        st.caption(s[f"sections.{section.key}.goal"])
        objectives = "\n".join(f"- {o}" for o in s[f"sections.{section.key}.objectives"])
        st.markdown(f"**{s['objectives']}**\n\n{objectives}")
        for step in section.steps:
            number, slot = next(slots)
            values = points.get(step.key, {})
            with st.container(border=True, key=f"teach_{route.key}_{step.key}"):
                st.markdown(f"#### {s[f'steps.{step.key}.title']}")
                st.caption(s("clock", start=slot.start, end=slot.end, minutes=step.minutes))
                if not lecture:
                    st.markdown(
                        s("part", label=s["misconception"], text=s[f"steps.{step.key}.misconception"])
                    )
                _links(step, route_step_query(route.key, step.key, number))
                parts = ("plan", "ask") if lecture else ("show", "ask", "listen")
                for part in parts:
                    key = f"lecture.{step.key}" if part == "plan" else f"steps.{step.key}.{part}"
                    st.markdown(s("part", label=s[part], text=s(key, **values)))
    if lecture:
        st.caption(s["lecture_listen"])


text.show("intro")
if "notation" in nav:
    st.page_link(nav["notation"].file, label=s["nav.notation.title"], icon=nav["notation"].icon)

show_route(CLASS)
show_route(LECTURE, lecture=True)

st.header(s["handouts_header"])
st.markdown(s["handouts_intro"])
for key in HANDOUTS:
    _handout_link(key)

text.show("before")
warm_panel(s)
text.show("projector")
text.show("classroom")
text.show("after")
return_to_route()
