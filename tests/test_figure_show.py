"""pages/common/figure.py under AppTest: the chart, its description where assistive technology
reads it (escaped), and its data one click away, built only once the expander is open."""

from __future__ import annotations

import html
import json

from streamlit.testing.v1 import AppTest

from specdec_core.viz.alt_text import describe, table
from tests.figure_strings import string


def _page(lang: str) -> None:
    import numpy as np
    import streamlit as st

    from pages.common.figure import show_figure
    from specdec_core.verify import decompose
    from specdec_core.viz.overlap import overlap_bars
    from tests.figure_strings import figure_text

    st.session_state["lang"] = lang
    d = decompose(np.array([0.2, 0.4, 0.4]), np.array([0.1, 0.1, 0.8]))
    fig = overlap_bars(
        ["A", "<b>B</b>", "C"], d.overlap, d.deficit, d.surplus, figure_text("overlap.overlap", lang)
    )
    st.session_state["fig"] = fig
    show_figure(fig, "fig_test", theme=None)


def _run(lang: str, open_data: bool) -> AppTest:
    at = AppTest.from_function(_page, args=(lang,))
    if open_data:
        at.session_state["noprint_fig_test_data"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_chart_is_described_and_its_data_is_one_click_away():
    for lang in ("en", "zh"):
        at = _run(lang, open_data=False)
        words = string(lang, "common", "figure")
        fig = at.session_state["fig"]
        assert len(at.get("plotly_chart")) == 1
        assert (
            json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["customdata"][1]
            == "&lt;b&gt;B&lt;/b&gt;"
        )
        paragraph = at.get("html")[-1].proto.body
        assert paragraph == f'<p class="sr-only">{html.escape(describe(fig, words))}</p>'
        assert (
            "&lt;b&gt;B&lt;/b&gt;" in paragraph and "<b>B" not in paragraph
        )  # a token is text, never markup
        assert [e.label for e in at.expander] == [words["data"]]
        assert not at.dataframe  # closed: the table is not built

        at = _run(lang, open_data=True)
        shown = at.dataframe[0].value
        rows = table(fig, words)
        assert shown.to_dict("records") == rows and shown[words["col_label"]].iloc[1] == "<b>B</b>"
