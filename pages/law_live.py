"""Exact on a real model: hundreds of short speculative runs on one prompt, their first two
tokens counted against the target's own law, beside a broken rule's.

Controls (law_live_parts/controls.py) → Draw hands a ``LawJob`` (law_live_parts/run.py) to the
run service: the samples come from ``specdec_core.live.law``, the tables and tests from
``specdec_core.live.law_view``, the figures from ``specdec_core.viz.law_live``.
"""

from __future__ import annotations

import streamlit as st

from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.service_run import ServiceRun
from pages.common.urlstate import mirror
from pages.law_live_parts.controls import LawForm, controls, problem, settings
from pages.law_live_parts.run import keep, law_job, show_progress
from pages.law_live_parts.view import show, shown_result

f = LawForm()
s, text = start("law_live", params=f.params())

text.show("intro")
controls(f)
mirror(f.params())
trouble = problem(settings(f))
if trouble is not None:
    st.error(trouble, icon=":material/error:")
ServiceRun("law", lambda: law_job(f), show_progress, keep).panel(s["run"], "law_run", ":material/play_arrow:")

kept = shown_result()
if kept is not None:
    kept_settings, snap = kept
    if not snap.finished:
        exact, broken = (snap.counts.get(rule, 0) for rule in snap.rules)
        rule = s[f"rules.{snap.rules[1]}"]
        st.warning(s("stopped", n=snap.planned, exact=exact, broken=broken, rule=rule))
    show(kept_settings, snap)
else:
    st.info(s["press_run"])
text.show("why")
text.show("reading")
text.show("sources")
quiz(s)
