"""Exercise sheets: seeded problems with fresh numbers, an answer key behind a toggle,
Markdown downloads, and a page that prints without its controls (assets/print.css)."""

import secrets

import streamlit as st

from pages.common.page import controls_box, lesson_body, start
from pages.common.urlstate import Param, bool_param, int_param, mirror
from specdec_core.course.exercise_sheet import render
from specdec_core.course.exercises import MAX_PER_TOPIC, MAX_SEED, TOPICS, make_sheet


def _topics(raw: str) -> list[str]:
    chosen = [t for t in raw.split(",") if t]
    if any(t not in TOPICS for t in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(raw)
    return [t for t in TOPICS if t in chosen]


PARAMS = [
    int_param("ex_seed", 1, 0, MAX_SEED),
    Param("ex_topics", list(TOPICS), _topics, ",".join),
    int_param("ex_n", 1, 1, MAX_PER_TOPIC),
    bool_param("ex_key", False),
]

s, _ = start("exercises", with_lesson=False, params=PARAMS)
names = s["topic_names"]


def _new_seed() -> None:
    st.session_state["ex_seed"] = secrets.randbelow(MAX_SEED + 1)


with st.container(key="noprint_ex_intro"):
    st.markdown(s["intro"])
    st.caption(s["notation"])


def sheet_body() -> None:
    """The seed, topics and count, and the sheet and its key they drive."""
    with controls_box(s, key="noprint_ex_controls"):
        c1, c2, c3 = st.columns([2, 1, 2], vertical_alignment="bottom")
        c1.number_input(
            s["seed"], min_value=0, max_value=MAX_SEED, step=1, key="ex_seed", help=s["seed_help"]
        )
        c2.button(s["new_seed"], on_click=_new_seed, help=s["new_seed_help"], icon=":material/casino:")
        c3.slider(s["per_topic"], 1, MAX_PER_TOPIC, key="ex_n", help=s["per_topic_help"])
        st.multiselect(
            s["topics"], TOPICS, format_func=names.__getitem__, key="ex_topics", help=s["topics_help"]
        )
        st.toggle(s["show_key"], key="ex_key", help=s["show_key_help"])
    mirror(PARAMS)

    topics = st.session_state["ex_topics"]
    note = st.container()
    if not topics:
        note.info(s["no_topics"])
        return
    sheet = make_sheet(int(st.session_state["ex_seed"]), topics, int(st.session_state["ex_n"]))
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
    if st.session_state["ex_key"]:
        with answers.container(key="ex_answer_key"):
            st.divider()
            st.markdown(key_md)


lesson_body(sheet_body)
