"""Every chart's text alternative and data view (specdec_core.viz.alt_text) come from the figure's
own numbers, in both languages; and no page draws a chart without them (pages/common/figure.py)."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from specdec_core.course import tree_drafts as td
from specdec_core.course.probability_tree import tree_view
from specdec_core.verify import decompose
from specdec_core.viz import overlap as overlap_viz
from specdec_core.viz import speedup_maps
from specdec_core.viz import tree_drafts as drafts_viz
from specdec_core.viz.alt_text import describe, number, table
from specdec_core.viz.probability_tree_sankey import sankey_figure
from tests.figure_strings import LANGS, figure_text, string

ROOT = Path(__file__).resolve().parents[1]
WORDS = {lang: string(lang, "common", "figure") for lang in LANGS}
P, Q = np.array([0.2, 0.4, 0.4]), np.array([0.1, 0.1, 0.8])


def _overlap(labels=("A", "B", "C")):
    d = decompose(P, Q)
    return overlap_viz.overlap_bars(
        list(labels), d.overlap, d.deficit, d.surplus, figure_text("overlap.overlap")
    )


def test_numbers_keep_three_significant_digits():
    assert [number(v) for v in (0.8, 0.30000000000000004, 2.8049, 12345.678, 1024, 0.000123456, -0.0704)] == [
        "0.800", "0.300", "2.80", "12,346", "1,024", "0.000123", "-0.0704",
    ]  # fmt: skip
    assert number(float("inf")) == "∞"


def test_overlap_bars_are_told_by_their_totals_and_tabled_bar_by_bar():
    fig, words = _overlap(), WORDS["en"]
    said = describe(fig, words)
    d = decompose(P, Q)
    overlap_name = figure_text("overlap.overlap")["overlap"]
    # "min(p, q): total 0.600 (the overlap α), highest 0.400 at C"; the deficit's largest bar is B's
    assert (
        words["bars"].format(name=overlap_name, total=number(d.acceptance_rate), top="0.400", at="C") in said
    )
    assert f"{number(d.deficit.max())} at B" in said
    rows = table(fig, words)
    shown = [t for t in fig.data if t.name]
    assert len(rows) == sum(len(t.y) for t in shown)  # one row per bar: the two min(p, q) stacks too
    ys = [number(v) for t in shown for v in t.y]
    assert [row["probability"] for row in rows] == ys
    assert [row[words["col_label"]] for row in rows[:3]] == ["A", "B", "C"]


def test_token_text_comes_back_as_the_token_never_as_markup():
    fig = _overlap(["<s>", "**b**", "$x$"])
    labels = {row[WORDS["en"]["col_label"]] for row in table(fig, WORDS["en"])}
    assert labels == {"<s>", "**b**", "$x$"}  # the builder's escaping undone: the page escapes for its medium
    assert "at $x$" in describe(fig, WORDS["en"]) and "at **b**" in describe(fig, WORDS["en"])


def test_a_heatmap_is_tabled_cell_by_cell_and_told_by_its_extremes():
    fig = speedup_maps.speedup_heatmap(0.1, 1.0, 8, 0.7, 2, figure_text("cost"))
    heat = next(t for t in fig.data if t.type == "heatmap")
    z = np.asarray(heat.z, dtype=float)
    rows = [r for r in table(fig, WORDS["en"]) if r.get(WORDS["en"]["col_value"])]
    assert len(rows) == np.isfinite(z).sum()
    assert sorted(r[WORDS["en"]["col_value"]] for r in rows) == sorted(number(v) for v in z[np.isfinite(z)])
    said = describe(fig, WORDS["en"])
    assert f"{z.shape[0]} × {z.shape[1]}" in said
    assert number(np.nanmin(z)) in said and number(np.nanmax(z)) in said


def test_a_sankey_and_a_sunburst_are_tabled_by_flows_and_parts():
    view = tree_view(P, Q, ["A", "B", "C"])
    fig = sankey_figure(view, figure_text("tree"))
    link = fig.data[0].link
    rows = table(fig, WORDS["en"])
    assert [r[WORDS["en"]["col_value"]] for r in rows] == [number(v) for v in link.value if v]
    assert f": {number(max(link.value))}." in describe(fig, WORDS["en"])

    one = td.one_position(2, False)
    fig = drafts_viz.candidate_tree_figure(one.tree, figure_text("tree_drafts"))
    values = [v for v in fig.data[0].values if v > 0]
    rows = table(fig, WORDS["en"])
    assert [r[WORDS["en"]["col_value"]] for r in rows] == [number(v) for v in values]
    assert describe(fig, WORDS["en"]).startswith(f"{len(values)} ")


def test_a_serialised_figure_reads_the_same_as_the_figure():
    """A figure that went through plotly's JSON (typed arrays as base64) is read alike."""
    fig = _overlap()
    again = go.Figure(fig.to_dict())
    assert "bdata" in again.data[0].y  # plotly encodes numpy arrays as {"dtype", "bdata"}
    assert table(again, WORDS["en"]) == table(fig, WORDS["en"])
    assert describe(again, WORDS["en"]) == describe(fig, WORDS["en"])
    assert table(fig.to_dict(), WORDS["en"]) == table(fig, WORDS["en"])  # the JSON itself reads alike


@pytest.mark.parametrize("lang", LANGS)
def test_no_nan_reaches_a_table_and_every_phrase_formats(lang):
    gap = go.Figure(
        [go.Scatter(name="α", x=[0.0, 1.0, None, 2.0], y=[0.5, math.nan, None, 0.25]),
         go.Heatmap(z=[[1.0, math.nan], [0.5, 2.0]], x=["a", "b"], y=["c", "d"])]
    )  # fmt: skip
    rows = table(gap, WORDS[lang])
    cells = [v for row in rows for v in row.values()]
    assert not any("nan" in v.lower() for v in cells) and len(rows) == 2 + 3
    said = describe(gap, WORDS[lang])
    assert "nan" not in said.lower() and "{" not in said
    assert describe(go.Figure(), WORDS[lang]) == WORDS[lang]["empty"]
    assert set(WORDS[lang]) == set(WORDS["en"])


def test_no_page_draws_a_chart_but_through_show_figure():
    """pages/common/figure.py's show_figure gives each chart its description and data view."""
    wrapper = ROOT / "pages" / "common" / "figure.py"
    direct = []
    for path in sorted((ROOT / "pages").rglob("*.py")):
        if path == wrapper:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "plotly_chart":
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not direct, f"draw these through pages.common.figure.show_figure: {direct}"
    assert re.search(r"\.plotly_chart\(", wrapper.read_text(encoding="utf-8"))
