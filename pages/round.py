"""One round, inside the model: a round of the session's last live run, stage by stage.

The run is the one the live page keeps (pages/live_parts/run.py ``keep``); this page draws one
of its chain rounds from that round's recorded events alone (round_parts/view.py), and invites
a run when the session has none. Nothing here loads a model.
"""

from __future__ import annotations

import streamlit as st

from pages.common.page import start
from pages.common.quiz import quiz
from pages.live_parts.run import TRACE_KEY
from pages.round_parts.view import show

s, text = start("round")
text.show("intro")

trace = st.session_state.get(TRACE_KEY)
if trace is None:
    st.info(s["no_run"], icon=":material/bolt:")
    st.page_link("pages/live.py", label=s["go_live"], icon=":material/play_arrow:")
else:
    show(trace)

text.show("worked")
text.show("sources")
quiz(s)
