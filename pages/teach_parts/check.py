"""The concept check's learner view on the teach page: a link with ``?check=before`` (or
``after``) shows only the five questions of the class's check, each answer recorded on a
classroom server under ``check_before`` (or ``check_after``) for the Class answers view, which
sets the two runs side by side per concept."""

from __future__ import annotations

import streamlit as st

from pages.common.i18n import Strings
from pages.common.quiz import ask, check_questions
from pages.common.urlstate import choice_param, mirror
from specdec_core.course.teach import CHECK_CHOICES, CHECK_KEY, CHECK_PAGES

CHECK = choice_param("none", CHECK_CHOICES, key=CHECK_KEY)


def check_view(s: Strings) -> bool:
    """Show the check the page's link asks for and return True; False when it asks for none
    (the teacher's page). Only the address decides: a learner who opens the teach page from
    the menu later sees the routes, not the check."""
    raw = st.query_params.get(CHECK_KEY, CHECK.default)
    when = st.session_state[CHECK_KEY] = raw if raw in CHECK.options else CHECK.default
    mirror([CHECK])
    if when == CHECK.default:
        return False
    st.header(s["check.title"])
    st.markdown(s[f"check.{when}"])
    name = CHECK_PAGES[when]
    ask(s, name, check_questions(s)[name])
    return True
