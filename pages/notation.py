"""Notation: every symbol of the course with its one meaning, from the list in notation.toml."""

import streamlit as st

from pages.common.page import start
from pages.common.quiz import quiz
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
text.show("worked")
text.show("quotes")
text.show("sources")
quiz(s)
