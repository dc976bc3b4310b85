"""Compare drafts × targets × task categories: a measured grid, its winners, and what the same
acceptance buys where verification is memory-bound.

Controls (and, optionally, Spec-Bench's questions) → a :class:`~specdec_core.live.compare.GridSpec`
→ a grid job in the process's run service (models through the shared shelf, runs shared through
the class's cache), watched by a fragment until it ends; Stop keeps the finished cells. Before
anything runs, the page shows the measured example grid shipped with the app; a grid saved as
JSON shows the same way, without any model.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.common import form
from pages.common import profile as shown
from pages.common.compare_form import CompareForm, grid_problem, grid_spec, offered_targets
from pages.common.model_form import source_input
from pages.common.models import access
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.urlstate import mirror
from pages.compare_parts.questions import questions_panel
from pages.compare_parts.run import RESULT_KEY, SAMPLE_KEY, estimate
from pages.compare_parts.show import figures, tables, verdicts
from pages.compare_parts.watch import run_panel
from specdec_core.live.compare import GridError, draft_keys, gpu_rows, projected_speedup, published
from specdec_core.live.compare_saved import example, grid_from_json
from specdec_core.live.profile_quotes import course_costs
from specdec_core.models import catalog
from specdec_core.viz import memo
from specdec_core.viz.escape import md

#: The measured grid shipped with the app, parsed once per process (read-only, like a figure).
shipped_example = memo.result_cache(example)
f = CompareForm()
s, text = start("compare", params=f.params())
names = {**s["category_names"], **{k: k for k in draft_keys()}}
text.show("intro")

offered = offered_targets(f)
form.multi(st, f.targets, s["targets"], offered, help=s["targets_help"])
if access().free_sources:
    form.text(st, f.source, s["source"])
elif any(catalog.about(k).needs_source for k in offered):  # classroom mode: a teacher's model, no path
    source_input(st, f.source.key, s["source"], "")
form.multi(st, f.drafts, s["drafts"], help=s["drafts_help"])
form.multi(st, f.cats, s["categories"], format_func=lambda k: names[k])
row = st.columns(5)
form.number(row[0], f.n, s["per_category"])
form.number(row[1], f.gamma, s["gamma"])
form.checkbox(row[2], f.adaptive, s["adaptive"])
form.number(row[3], f.temp, s["temperature"], step=0.1)
form.number(row[4], f.max, s["max_new"])
questions_panel(s, names, f)
mirror(f.params())
ss = st.session_state
spec = grid_spec(f, picked=st.session_state.get(SAMPLE_KEY))
problem = grid_problem(spec)
if problem is None:
    st.caption(estimate(spec))
else:
    st.error(problem, icon=":material/error:")
run_panel(s, f)

upload = st.file_uploader(s["load"], type=["json"], key="cmp_upload")
if upload is not None:
    try:
        ss[RESULT_KEY] = grid_from_json(upload.getvalue())
        st.info(s("loaded", runs=len(ss[RESULT_KEY].runs)))
    except GridError as exc:
        st.error(s("load_error", message=md(exc)))

result = ss.get(RESULT_KEY)
if result is None:
    result = shipped_example()
    if result is None:  # the shipped example is missing: nothing to show until a grid runs
        st.info(s["press_run"])
        quiz(s)
        st.stop()
    st.info(s("example", runs=len(result.runs), **{k: md(v) for k, v in result.label.items()}))
elif result.label:
    st.caption(s("measured_on", **{k: md(v) for k, v in result.label.items()}))

verdicts(s, result)
c = figures(s, result, names, f)
text.show("reading")
tables(s, result, c, names)

#: The worked example's bf16 cell (90 tokens, 30 target passes, 120 draft forwards) at the c of
#: this machine's profile (else the memory-bound reference), as the text quotes it.
values = shown.course_values(s, course_costs())
values["bf16_projected"] = f"{projected_speedup(90, 30, 120, float(values['c_bf16_value'])):.2f}"
text.show("projection", values=values)
st.subheader(s["published_title"])
pub = [{s["published.source"]: r["source"], s["published.hardware"]: r["hardware"],
        s["published.method"]: r["method"],
        s["published.figure"]: r.get("speedup_text") or f"{r['speedup']:.2f}× (τ {r['tau']:.2f})"}
       for r in published()]  # fmt: skip
mine = gpu_rows()
pub += [{s["published.source"]: "bench/gpu_results.json", s["published.hardware"]: r["device"],
         s["published.method"]: r["draft"], s["published.figure"]: f"{r['speedup']:.2f}× (τ {r['tau']:.2f})"}
        for r in mine]  # fmt: skip
st.dataframe(pd.DataFrame(pub), hide_index=True)
if not mine:
    st.caption(s["gpu_none"])
text.show("published")
text.show("sources")
quiz(s)
