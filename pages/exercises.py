"""Exercise sheets: seeded problems with fresh numbers, an answer key behind a toggle,
Markdown downloads, and a page that prints without its controls (assets/print.css)."""

import secrets

import streamlit as st

from pages.common import form
from pages.common.page import controls_box, lesson_body, start
from pages.common.urlstate import mirror
from pages.exercises_parts.form import FORM as f
from specdec_core.course.exercise_sheet import render
from specdec_core.course.exercises import make_sheet

s, _ = start("exercises", with_lesson=False, params=f.params())
names = s["topic_names"]


def _new_seed() -> None:
    st.session_state[f.seed.key] = secrets.randbelow(f.seed.hi + 1)


with st.container(key="noprint_ex_intro"):
    st.markdown(s["intro"])
    st.caption(s["notation"])


def sheet_body() -> None:
    """The seed, topics and count, and the sheet and its key they drive."""
    with controls_box(s, key="noprint_ex_controls"):
        c1, c2, c3 = st.columns([2, 1, 2], vertical_alignment="bottom")
        form.number(c1, f.seed, s["seed"], step=1, help=s["seed_help"])
        c2.button(s["new_seed"], on_click=_new_seed, help=s["new_seed_help"], icon=":material/casino:")
        form.slider(c3, f.n, s["per_topic"], help=s["per_topic_help"])
        form.multi(st, f.topics, s["topics"], format_func=names.__getitem__, help=s["topics_help"])
        form.toggle(st, f.key, s["show_key"], help=s["show_key_help"])
    mirror(f.params())

    topics = form.value(f.topics)
    note = st.container()
    if not topics:
        note.info(s["no_topics"])
        return
    sheet = make_sheet(int(form.value(f.seed)), topics, int(form.value(f.n)))
    texts = s["sheet"]
    sheet_md = render(sheet, texts, names, "sheet")
    key_md = render(sheet, texts, names, "key")

    with st.container(key="noprint_ex_downloads"):
        lang, seed = s.lang, sheet.seed
        d1, d2, d3 = st.columns(3)
        for col, label, data, part in (
            (d1, "download_sheet", sheet_md, "sheet"),
            (d2, "download_key", key_md, "key"),
            (d3, "download_both", render(sheet, texts, names, "both"), "sheet-and-key"),
        ):
            col.download_button(
                s[label],
                data,
                file_name=f"specdec-{part}-{seed}-{lang}.md",
                mime="text/markdown",
                on_click="ignore",
                icon=":material/download:",
            )
        st.caption(s["print_tip"])

    with st.container(key="ex_sheet"):
        st.markdown(sheet_md)
    answers = st.container()
    if form.value(f.key):
        with answers.container(key="ex_answer_key"):
            st.divider()
            st.markdown(key_md)


lesson_body(sheet_body)
