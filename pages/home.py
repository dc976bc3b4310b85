"""Home: what the course is and a map of its lessons."""

import streamlit as st

from pages.common.nav import PAGES, SECTIONS
from pages.common.page import start

# A card's width in pixels: cards wrap onto as many rows as the window needs (two a row at
# 1024 pixels with the sidebar open, three at 1280), so a title never has to be cut.
CARD_WIDTH = 250

s, text = start("home")
text.show("intro")
text.show("story")

st.header(s["map_title"])
pages = [p for p in PAGES if p.key != "home"]
with st.container(key="sd_course_map"):  # its cards' titles wrap rather than cut (style.css)
    for section in SECTIONS:
        group = [p for p in pages if p.section == section]
        if not group:
            continue
        st.subheader(s[f"sections.{section}"])
        with st.container(horizontal=True):
            for page in group:
                # "stretch": every card as tall as the tallest in its row
                with st.container(border=True, width=CARD_WIDTH, height="stretch"):
                    st.page_link(page.file, label=s[f"nav.{page.key}.title"], icon=page.icon)
                    st.caption(s[f"nav.{page.key}.blurb"])
text.show("classroom")
