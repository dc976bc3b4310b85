"""About: what the app is built on, how its numbers can be trusted, and the sources' errata."""

import sys

import streamlit as st

from pages.common import profile as shown
from pages.common.page import start
from specdec_core.live.profile_quotes import course_costs

s, text = start("about")
text.show("body", values=shown.course_values(s, course_costs()))
with st.container(border=True):
    text.show("sources")
with st.container(border=True):
    st.subheader(s["kernels_title"])
    # present once the models' code has loaded (with torch); this page loads neither itself
    choice = sys.modules.get("specdec_core.models.hf.kernel_choice")
    rows = choice.summary() if choice is not None else []
    if rows:
        machine = choice.machine_key()
        keys = ("cpu", "torch", "threads", "omp_wait_policy")
        threads = sys.modules.get("specdec_core.models.hf.thread_choice")
        chosen = threads.last() if threads is not None else None
        if chosen is not None:  # the thread count chosen at the first load
            timings = ", ".join(f"{n}: {t:.2f} ms" for n, t in chosen["timings_ms"].items())
            st.caption(s("kernels_threads", threads=chosen["threads"], timings=timings))
        st.caption(s("kernels_caption", **{k: machine[k] for k in keys}))
        columns = {"weight": s["kernels_weight"], "dtype": s["kernels_dtype"], "kernels": s["kernels_rows"]}
        st.dataframe([{columns[k]: v for k, v in row.items()} for row in rows], hide_index=True)
    else:
        st.info(s["kernels_none"])
