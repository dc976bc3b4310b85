"""A grid's results on the Compare page: verdicts, heatmaps, winners, the table of every cell,
its Markdown for a paper, and the downloads (CSV, the grid as JSON, Spec-Bench answer files)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from pages.common import form
from pages.common.compare_form import CompareForm
from pages.common.figure import show_figure
from pages.common.models import shelf
from specdec_core.live.compare import winners
from specdec_core.live.compare_run import loaded_tokenizers
from specdec_core.live.compare_saved import GridResult, grid_json
from specdec_core.live.compare_tables import cell_rows, cells_csv, markdown_table
from specdec_core.live.spec_bench import answer_files, answers_zip
from specdec_core.viz.compare import heat_cells, heatmap
from specdec_core.viz.escape import md


def verdicts(s, result: GridResult) -> None:
    """Stopped, skipped, and whether greedy outputs equal their target's own."""
    table = result.cells
    if not result.complete:
        st.warning(s["stopped"])
    for (t, d), why in result.skipped.items():
        st.caption(s("skipped", draft=md(d), target=md(t), reason=md(why)))
    differ = [c for c in table if c.greedy_identical is False]
    if not result.spec.settings.greedy:
        st.caption(s["sampled"])
    elif differ:
        st.warning(s("greedy_differ", n=len(differ), cells=md(", ".join(c.key for c in differ))))
    else:
        st.success(s["greedy_same"])


def figures(s, result: GridResult, names: dict[str, str], f: CompareForm) -> float | None:
    """The chosen figure as a heatmap per target, with its winners; returns the projection's c
    (None: each draft's own)."""
    table, shown = result.cells, result.spec
    metric = form.segmented(st, f.metric, s["metric"], format_func=lambda k: s[f"metrics.{k}"])
    metric = metric or "tau"
    choice = form.select(st, f.c, s["c_preset"], format_func=lambda k: s["c_presets"][k])
    c = None if choice == "own" else float(choice)
    for t in shown.targets:
        title = f"{t}: {s['metrics.' + metric]}"
        fig = heatmap(heat_cells(table, t, metric, c), shown.drafts, shown.categories, names, title, s["fig"])
        show_figure(fig, key=f"cmp_heat_{t}", config={"displayModeBar": False})
        if metric == "projected":
            st.caption(
                s["projection_note"] + " " + (s["c_own_note"] if c is None else s("c_override_note", c=c))
            )
        elif metric == "spec_bench_speedup":
            st.caption(s["spec_bench_note"])
        st.markdown(f"**{s('winners_title', target=md(t))}**")
        lines = []
        for cat in shown.categories:
            by = {k: winners(table, t, cat, k) for k in ("tau", "decode_speedup")}
            shown_by = {k: (", ".join(md(d) for d in v) + (s["tie"] if len(v) > 1 else "")) or s["none"]
                        for k, v in by.items()}  # fmt: skip
            lines.append("- " + s("winner_line", category=names[cat], by_tau=shown_by["tau"],
                                   by_speed=shown_by["decode_speedup"]))  # fmt: skip
        st.markdown("\n".join(lines))
    return c


def tables(s, result: GridResult, c: float | None, names: dict[str, str]) -> None:
    """Every cell's figures, the Markdown to paste, and the downloads."""
    table = result.cells
    st.subheader(s["table_title"])
    st.dataframe(pd.DataFrame(cell_rows(table, c)), hide_index=True)
    with st.expander(s["markdown_title"]):
        st.caption(s["markdown_help"])
        st.code(markdown_table(table, s["md"], names), language="markdown")
    row = st.columns(3)
    row[0].download_button(
        s["download_csv"], partial(cells_csv, table, c), "compare.csv", "text/csv", icon=":material/download:"
    )
    row[1].download_button(
        s["download_json"],
        partial(grid_json, result),
        "compare.json",
        "application/json",
        icon=":material/download:",
    )
    files = answer_files(result.spec, result.runs)
    if files:
        zipped = partial(answers_zip, files, loaded_tokenizers(result.spec, shelf()))  # built on the click
        row[2].download_button(
            s["download_answers"],
            zipped,
            "spec_bench_answers.zip",
            "application/zip",
            icon=":material/download:",
        )
    else:
        row[2].caption(s["answers_need_questions"])
