"""Home: what the course is and a map of its lessons."""

import streamlit as st

from pages.common.nav import PAGES, SECTIONS
from pages.common.page import start

s, text = start("home")
text.show("intro")
text.show("story")

st.header(s["map_title"])
pages = [p for p in PAGES if p.key != "home"]
for section in SECTIONS:
    group = [p for p in pages if p.section == section]
    if not group:
        continue
    st.subheader(s[f"sections.{section}"])
    for col, page in zip(st.columns(len(group)), group, strict=True):
        with col, st.container(border=True):
            st.page_link(page.file, label=s[f"nav.{page.key}.title"], icon=page.icon)
            st.caption(s[f"nav.{page.key}.blurb"])
text.show("classroom")
