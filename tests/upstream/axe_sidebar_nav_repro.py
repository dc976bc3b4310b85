"""Streamlit's sectioned st.navigation fails axe's `list` and `listitem`: `streamlit run` this file
and audit it; each section's <li> sits in a <div> inside the <ul> (tests/browser/test_axe_browser.py)."""

import streamlit as st

pages = {s: [st.Page(lambda: st.title("x"), title=f"{s} page", url_path=s)] for s in ("one", "two")}
st.navigation(pages).run()
