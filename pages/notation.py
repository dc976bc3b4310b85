"""Notation: every symbol of the course with its one meaning, from the list in notation.toml."""

import streamlit as st

from pages.common import profile as shown
from pages.common.page import start
from pages.common.quiz import quiz
from specdec_core.live.profile_quotes import course_costs
from specdec_core.viz.escape import md

s, text = start("notation")
text.show("intro")
text.show("table")
rows = [
    f"| {s['table_symbol']} | {s['table_name']} | {s['table_meaning']} | {s['table_lessons']} |",
    "|---|---|---|---|",
]
for item in s["symbol"]:
    lessons = ", ".join(md(s[f"nav.{key}.title"]) for key in item["lessons"])
    rows.append(f"| ${item['tex']}$ | **{md(item['name'])}** | {md(item['meaning'])} | {lessons} |")
st.markdown("\n".join(rows))
# its verification priced by this machine's profile, else the memory-bound reference (read at
# each run: a model loaded since may have measured it)
text.show("worked", values=shown.course_values(s, course_costs()))
text.show("quotes")
text.show("sources")
quiz(s)
