"""About: what the app is built on, how its numbers can be trusted, and the sources' errata."""

import streamlit as st

from pages.common.page import start

s, text = start("about")
text.show("body")
with st.container(border=True):
    text.show("sources")
