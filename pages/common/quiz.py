"""Check-yourself questions from a page's TOML table ``[[quiz]]``.

Each entry has ``question``, ``options`` (list), ``answer`` (index of the right option) and
``feedback`` (one explanation per option, shown once the learner picks it).
"""

from __future__ import annotations

import streamlit as st

from pages.common.i18n import Strings


def quiz(s: Strings) -> None:
    """Render the page's questions; each answer gets immediate feedback."""
    st.subheader(s["quiz_title"])
    for i, item in enumerate(s["quiz"]):
        choice = st.radio(
            f"**{i + 1}.** {item['question']}",
            options=range(len(item["options"])),
            format_func=lambda j, opts=item["options"]: opts[j],
            index=None,
            key=f"quiz_{s.name}_{i}",
        )
        if choice is None:
            continue
        text = item["feedback"][choice]
        if choice == item["answer"]:
            st.success(f"{s['quiz_right']} {text}")
        else:
            st.error(f"{s['quiz_wrong']} {text}")
