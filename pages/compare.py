"""Compare drafts × targets × task categories: a measured grid, its winners, and what the same
acceptance buys where verification is memory-bound.

Controls (and, optionally, Spec-Bench's questions) → a :class:`~specdec_core.live.compare.GridSpec`
→ a grid job in the process's run service (models through the shared shelf, runs shared through
the class's cache), watched by a fragment until it ends; Stop keeps the finished cells. Before
anything runs, the page shows the measured example grid shipped with the app; a grid saved as
JSON shows the same way, without any model.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.urlstate import (
    Param,
    bool_param,
    choice_param,
    float_param,
    int_param,
    mirror,
    restore,
    text_param,
)
from pages.compare_parts.questions import questions_panel
from pages.compare_parts.run import RESULT_KEY, estimate, grid_problem, grid_spec
from pages.compare_parts.show import C_CHOICES, figures, tables, verdicts
from pages.compare_parts.watch import run_panel
from specdec_core.live.compare import (
    CATEGORIES,
    DEFAULT_DRAFTS,
    DEFAULT_TARGETS,
    DRAFT_KEYS,
    MAX_PER_CATEGORY,
    GridError,
    gpu_rows,
    published,
    target_keys,
)
from specdec_core.live.compare_saved import example, grid_from_json
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.viz.compare import METRICS
from specdec_core.viz.escape import md


def _keys(allowed: tuple[str, ...]) -> Any:
    def parse(raw: str) -> list[str]:
        chosen = [k for k in raw.split(",") if k]
        if not chosen or any(k not in allowed for k in chosen):
            raise ValueError(raw)
        return [k for k in allowed if k in chosen]

    return parse


PARAMS = [
    Param("cmp_targets", list(DEFAULT_TARGETS), _keys(target_keys()), ",".join),
    text_param("cmp_source", "", MAX_SOURCE_CHARS),
    Param("cmp_drafts", list(DEFAULT_DRAFTS), _keys(DRAFT_KEYS), ",".join),
    Param("cmp_cats", list(CATEGORIES[:6]), _keys(CATEGORIES), ",".join),
    int_param("cmp_n", 1, 1, MAX_PER_CATEGORY),
    int_param("cmp_qseed", 0, 0, 1_000_000),
    int_param("cmp_gamma", 4, 1, 16),
    bool_param("cmp_adaptive", True),
    float_param("cmp_temp", 0.0, 0.0, 2.0),
    int_param("cmp_max", 32, 8, 128),
    choice_param("cmp_metric", "tau", METRICS),
    choice_param("cmp_c", "own", C_CHOICES),
]


s, text = start("compare")
rejected = restore(PARAMS)
if rejected:
    st.warning(s["category_error"] if "cmp_cats" in rejected else s("url_rejected", keys=", ".join(rejected)))
names = {**s["category_names"], **{k: k for k in DRAFT_KEYS}}
text.show("intro")

st.multiselect(s["targets"], target_keys(), key="cmp_targets", help=s["targets_help"])
st.text_input(s["source"], key="cmp_source")
st.multiselect(s["drafts"], DRAFT_KEYS, key="cmp_drafts", help=s["drafts_help"])
st.multiselect(s["categories"], CATEGORIES, key="cmp_cats", format_func=lambda k: names[k])
row = st.columns(5)
row[0].number_input(s["per_category"], 1, MAX_PER_CATEGORY, key="cmp_n")
row[1].number_input(s["gamma"], 1, 16, key="cmp_gamma")
row[2].checkbox(s["adaptive"], key="cmp_adaptive")
row[3].number_input(s["temperature"], 0.0, 2.0, step=0.1, key="cmp_temp")
row[4].number_input(s["max_new"], 8, 128, key="cmp_max")
questions_panel(s, names)
mirror(PARAMS)
ss = st.session_state
spec = grid_spec()
problem = grid_problem(spec)
if problem is None:
    st.caption(estimate(spec))
else:
    st.error(problem, icon=":material/error:")
run_panel(s, PARAMS)

upload = st.file_uploader(s["load"], type=["json"], key="cmp_upload")
if upload is not None:
    try:
        ss[RESULT_KEY] = grid_from_json(upload.getvalue())
        st.info(s("loaded", runs=len(ss[RESULT_KEY].runs)))
    except GridError as exc:
        st.error(s("load_error", message=md(exc)))

result = ss.get(RESULT_KEY)
if result is None:
    result = example()
    if result is None:  # the shipped example is missing: nothing to show until a grid runs
        st.info(s["press_run"])
        quiz(s)
        st.stop()
    st.info(s("example", runs=len(result.runs), **{k: md(v) for k, v in result.label.items()}))
elif result.label:
    st.caption(s("measured_on", **{k: md(v) for k, v in result.label.items()}))

verdicts(s, result)
c = figures(s, result, names)
text.show("reading")
tables(s, result, c, names)

text.show("projection")
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
