"""Teach it in 90 minutes: a timed route through the course, each step with what to show, a
link that sets its page up through the page's URL state, and what to ask the room."""

import streamlit as st

from pages.common.nav import PAGES
from pages.common.page import start
from specdec_core.course.teach import schedule, talking_points

s, text = start("teach")
nav = {p.key: p for p in PAGES}
slots = schedule()
points = talking_points()


def _title(page: str) -> str:
    return s[f"nav.{page}.title"] if page in nav else page


text.show("intro")
if "notation" in nav:
    st.page_link(nav["notation"].file, label=s["nav.notation.title"], icon=nav["notation"].icon)

st.header(s["route_header"])
st.caption(s("total", steps=len(slots), minutes=slots[-1].end))
rows = [
    f"| {slot.start}–{slot.end} | {s[f'steps.{slot.step.key}.title']} | {_title(slot.step.page)} |"
    for slot in slots
]
header = f"| {s['table_minutes']} | {s['table_step']} | {s['table_page']} |\n|---|---|---|\n"
st.markdown(header + "\n".join(rows))

for slot in slots:
    step, values = slot.step, points.get(slot.step.key, {})
    with st.container(border=True, key=f"teach_{step.key}"):
        st.subheader(s[f"steps.{step.key}.title"])
        st.caption(s("clock", start=slot.start, end=slot.end, minutes=step.minutes))
        page = nav.get(step.page)
        if page is None:
            st.info(s("no_link", page=step.page))
        else:
            st.page_link(
                page.file,
                label=s("open", page=_title(step.page)),
                icon=page.icon,
                query_params={**step.query, "lang": s.lang},
            )
        for part in ("show", "ask", "listen"):
            st.markdown(s("part", label=s[part], text=s(f"steps.{step.key}.{part}", **values)))

text.show("before")
text.show("projector")
text.show("classroom")
text.show("after")
