"""About: what the app is built on, how its numbers can be trusted, and the sources' errata."""

import streamlit as st

from pages.common.page import start
from specdec_core.models.hf.kernel_choice import machine_key, summary

s, text = start("about")
text.show("body")
with st.container(border=True):
    text.show("sources")
with st.container(border=True):
    st.subheader(s["kernels_title"])
    machine = machine_key()
    st.caption(
        s("kernels_caption", **{k: machine[k] for k in ("cpu", "torch", "threads", "omp_wait_policy")})
    )
    rows = summary()
    if rows:
        columns = {"weight": s["kernels_weight"], "dtype": s["kernels_dtype"], "kernels": s["kernels_rows"]}
        st.dataframe([{columns[k]: v for k, v in row.items()} for row in rows], hide_index=True)
    else:
        st.info(s["kernels_none"])
