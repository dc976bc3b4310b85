"""Compare drafts × targets × task categories: a measured grid, its winners, and what the same
acceptance buys where verification is memory-bound.

Controls → a :class:`~specdec_core.live.compare.GridSpec` → :class:`GridRun` (models through this
page's shelf, runs shared through the class's cache) → finished runs kept in the session as they
come, so Stop (any press reruns the page) keeps the finished cells. A grid saved as JSON shows
the same without any model.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from pages.common.jobs import Job
from pages.common.models import classroom
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
from pages.compare_parts.run import RESULT_KEY, CompareRun, grid_problem, grid_spec
from specdec_core.live.compare import (
    CATEGORIES,
    DEFAULT_DRAFTS,
    DEFAULT_TARGETS,
    DRAFT_KEYS,
    MAX_PER_CATEGORY,
    TARGET_KEYS,
    GridError,
    cell_rows,
    cells,
    cells_csv,
    gpu_rows,
    grid_from_json,
    grid_json,
    published,
    winners,
)
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.viz.compare import METRICS, heat_cells, heatmap
from specdec_core.viz.escape import md

C_PRESETS = ("0.01", "0.05", "0.1", "0.25")


def _keys(allowed: tuple[str, ...]) -> Any:
    def parse(raw: str) -> list[str]:
        chosen = [k for k in raw.split(",") if k]
        if not chosen or any(k not in allowed for k in chosen):
            raise ValueError(raw)
        return [k for k in allowed if k in chosen]

    return parse


PARAMS = [
    Param("cmp_targets", list(DEFAULT_TARGETS), _keys(TARGET_KEYS), ",".join),
    text_param("cmp_source", "", MAX_SOURCE_CHARS),
    Param("cmp_drafts", list(DEFAULT_DRAFTS), _keys(DRAFT_KEYS), ",".join),
    Param("cmp_cats", list(CATEGORIES[:6]), _keys(CATEGORIES), ",".join),
    int_param("cmp_n", 1, 1, MAX_PER_CATEGORY),
    int_param("cmp_gamma", 4, 1, 16),
    bool_param("cmp_adaptive", True),
    float_param("cmp_temp", 0.0, 0.0, 2.0),
    int_param("cmp_max", 32, 8, 128),
    choice_param("cmp_metric", "tau", METRICS),
    choice_param("cmp_c", "0.05", C_PRESETS),
]


s, text = start("compare")
rejected = restore(PARAMS)
if rejected:
    st.warning(s["category_error"] if "cmp_cats" in rejected else s("url_rejected", keys=", ".join(rejected)))
names = {**s["category_names"], **{k: k for k in DRAFT_KEYS}}
text.show("intro")

st.multiselect(s["targets"], TARGET_KEYS, key="cmp_targets", help=s["targets_help"])
st.text_input(s["source"], key="cmp_source")
st.multiselect(s["drafts"], DRAFT_KEYS, key="cmp_drafts", help=s["drafts_help"])
st.multiselect(s["categories"], CATEGORIES, key="cmp_cats", format_func=lambda k: names[k])
row = st.columns(5)
row[0].number_input(s["per_category"], 1, MAX_PER_CATEGORY, key="cmp_n")
row[1].number_input(s["gamma"], 1, 16, key="cmp_gamma")
row[2].checkbox(s["adaptive"], key="cmp_adaptive")
row[3].number_input(s["temperature"], 0.0, 2.0, step=0.1, key="cmp_temp")
row[4].number_input(s["max_new"], 8, 128, key="cmp_max")
mirror(PARAMS)
ss = st.session_state
spec = grid_spec()
problem = grid_problem(spec)
if problem is None:
    minutes = spec.estimate_s(classroom().seconds_per_token) / 60  # the last runs' pace on this server
    st.caption(s("estimate", runs=spec.runs, tokens=spec.settings.max_new_tokens, minutes=minutes))
else:
    st.error(problem, icon=":material/error:")
Job("cmp").panel(s["run"], "cmp_run", ":material/play_arrow:", CompareRun, PARAMS)

upload = st.file_uploader(s["load"], type=["json"], key="cmp_upload")
if upload is not None:
    try:
        ss[RESULT_KEY] = (*grid_from_json(upload.getvalue()), {})
        st.info(s("loaded", runs=len(ss[RESULT_KEY][1])))
    except GridError as exc:
        st.error(s("load_error", message=md(exc)))

if RESULT_KEY not in ss:
    st.info(s["press_run"])
    quiz(s)
    st.stop()

shown, runs, complete, skipped = ss[RESULT_KEY]
table = cells(shown, runs)
if not complete:
    st.warning(s["stopped"])
for (t, d), why in skipped.items():
    st.caption(s("skipped", draft=md(d), target=md(t), reason=md(why)))
identical = [c for c in table if c.greedy_identical is False]
if not shown.settings.greedy:
    st.caption(s["sampled"])
elif identical:
    st.warning(s("greedy_differ", n=len(identical), cells=md(", ".join(c.key for c in identical))))
else:
    st.success(s["greedy_same"])

metric = st.segmented_control(s["metric"], METRICS, key="cmp_metric", format_func=lambda k: s[f"metrics.{k}"])
metric = metric or "tau"
c = float(st.selectbox(s["c_preset"], C_PRESETS, key="cmp_c", format_func=lambda k: s["c_presets"][k]))
for t in shown.targets:
    title = f"{t}: {s['metrics.' + metric]}"
    fig = heatmap(heat_cells(table, t, metric, c), shown.drafts, shown.categories, names, title, s["fig"])
    st.plotly_chart(fig, key=f"cmp_heat_{t}", config={"displayModeBar": False})
    if metric == "projected":
        st.caption(s["projection_note"])
    st.markdown(f"**{s('winners_title', target=md(t))}**")
    lines = []
    for cat in shown.categories:
        by = {k: winners(table, t, cat, k) for k in ("tau", "decode_speedup")}
        shown_by = {k: (", ".join(md(d) for d in v) + (s["tie"] if len(v) > 1 else "")) or s["none"]
                    for k, v in by.items()}  # fmt: skip
        lines.append("- " + s("winner_line", category=names[cat], by_tau=shown_by["tau"],
                               by_speed=shown_by["decode_speedup"]))  # fmt: skip
    st.markdown("\n".join(lines))

st.subheader(s["table_title"])
st.dataframe(pd.DataFrame(cell_rows(table, c)), hide_index=True)
row = st.columns(2)
row[0].download_button(
    s["download_csv"], cells_csv(table, c), "compare.csv", "text/csv", icon=":material/download:"
)
saved = grid_json(shown, runs, complete)
row[1].download_button(
    s["download_json"], saved, "compare.json", "application/json", icon=":material/download:"
)

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
quiz(s)
