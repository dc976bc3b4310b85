"""The draft race's results: the verdict, the table, each draft on its own theory curve, by task.

Drawn from ``RaceResult`` data alone; the texts come from lessons/<lang>/race.toml.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from pages.common.figure import show_figure
from pages.common.i18n import strings
from specdec_core.live.race import BASELINE, RaceResult, best, result_json
from specdec_core.models import catalog
from specdec_core.viz import palette
from specdec_core.viz import race as viz
from specdec_core.viz.escape import md


def _table(result: RaceResult) -> None:
    s = strings("race")
    rows = result.rows
    frame = pd.DataFrame(
        {
            s["col.draft"]: [result.names[r.key] for r in rows],
            s["col.alpha"]: [r.alpha for r in rows],
            s["col.per_round"]: [r.tokens_per_round for r in rows],
            s["col.cost"]: [r.cost_ratio for r in rows],
            s["col.verify"]: [r.verify_cost for r in rows],
            s["col.wall"]: [r.wall_s for r in rows],
            s["col.wall_speedup"]: [r.wall_speedup for r in rows],
            s["col.decode_speedup"]: [r.decode_speedup for r in rows],
            s["col.predicted"]: [r.predicted_speedup for r in rows],
        }
    )
    fmt = {c: "{:.3f}" for c in frame.columns[1:]}
    fmt[s["col.wall"]] = "{:.2f} s"
    for c in (s["col.wall_speedup"], s["col.decode_speedup"], s["col.predicted"]):
        fmt[c] = "{:.2f}×"
    st.dataframe(frame.style.format(fmt, na_rep="—"), hide_index=True, width="stretch", key="race_table")
    base = result.records[BASELINE]
    st.caption(s("table_caption", wall=base.wall_s, tokens=len(base.tokens), repeats=result.settings.repeats))


def by_task(results: dict[str, RaceResult]) -> None:
    """Each draft's decode speedup on each task run so far, once there are two tasks."""
    if len(results) < 2:
        return
    s = strings("race")
    st.subheader(s["by_task_title"])
    names = sorted({n for r in results.values() for k, n in r.names.items() if k != BASELINE})
    data = {s["col.task"]: [s[f"tasks.{task}"] for task in results]}
    for name in names:
        data[name] = [
            next((row.decode_speedup for row in r.rows if r.names[row.key] == name), None)
            for r in results.values()
        ]
    frame = pd.DataFrame(data)
    styled = frame.style.format(dict.fromkeys(names, "{:.2f}×"), na_rep="—").highlight_max(
        axis=1, subset=names, props=f"font-weight:700;background-color:{palette.ACCEPTED_TINT}"
    )
    st.dataframe(styled, hide_index=True, width="stretch", key="race_by_task")
    st.caption(s["by_task_caption"])


def show(result: RaceResult) -> None:
    """The verdict, the table and the figures of one race."""
    s = strings("race")
    st.subheader(s("results_title", task=s[f"tasks.{result.task}"]))
    if result.stopped:
        st.warning(s["stopped"])
    rows = result.rows
    if not rows:
        st.info(s["no_rows"])
        return
    winner = best(rows)
    if winner is not None and winner.decode_speedup >= 1:
        st.success(s("winner", name=md(result.names[winner.key]), speedup=winner.decode_speedup))
    elif winner is not None:
        st.warning(s("no_winner", name=md(result.names[winner.key]), speedup=winner.decode_speedup))
    note = catalog.about(result.target_kind).timing_note
    if note:
        st.caption(strings("live")[note])
    if result.settings.greedy:
        same = all(r.same_text for r in rows)
        st.caption(s["greedy_same"] if same else s["greedy_differ"])
    _table(result)
    points = [
        viz.RacePoint(
            result.names[r.key],
            r.alpha,
            r.decode_speedup,
            r.wall_speedup,
            r.drafted,
            r.cost_ratio,
            r.verify_cost,
        )
        for r in rows
    ]
    show_figure(viz.bars_figure(points, s["fig"]), theme=None, key="race_bars")
    show_figure(viz.theory_figure(points, s["fig"]), theme=None, key="race_theory")
    st.caption(s["theory_caption"])
    st.download_button(
        s["download"],
        data=partial(result_json, result),  # built when downloaded, not on every rerun
        file_name=f"specdec-race-{result.task}.json",
        mime="application/json",
        icon=":material/download:",
        key="race_download",
        on_click="ignore",  # no rerun: it could drop the file being built for this click
    )
