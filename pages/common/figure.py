"""Every figure a page shows, with its text alternative and its data one click away.

:func:`show_figure` is the pages' one way to draw a plotly figure (``tests/test_figure_alt.py``
fails on a page that calls ``st.plotly_chart`` itself): the chart, a visually hidden paragraph
that tells assistive technology what it shows (``viz.alt_text.describe``, class ``sr-only`` in
assets/style.css), and an expander with the figure's numbers as a table (``viz.alt_text.table``),
built only while the expander is open so a page's rerun pays for the sentence alone. The
expander's key starts ``noprint_``: a printed page leaves it out (assets/print.css).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common.i18n import strings
from specdec_core.viz import alt_text
from specdec_core.viz.escape import html_text


def show_figure(fig: go.Figure, key: str, where: DeltaGenerator | None = None, **chart: Any) -> Any:
    """Draw `fig` in `where` (the page's current place by default) with ``st.plotly_chart``'s
    options `chart`, keyed `key`, then its description and its data view; returns what
    ``plotly_chart`` returns (a selection where `chart` asks for one)."""
    place = where if where is not None else st
    words = strings("common")["figure"]
    shown = place.plotly_chart(fig, key=key, **chart)
    place.html(f'<p class="sr-only">{html_text(_described(fig, words))}</p>')
    box = place.expander(words["data"], key=f"noprint_{key}_data", on_change="rerun", icon=":material/table:")
    if box.open:
        box.dataframe(alt_text.table(fig, words), hide_index=True)
    return shown


def _described(fig: go.Figure, words: Mapping[str, str]) -> str:
    """``alt_text.describe(fig, words)``, kept on the figure (per language): a cached builder
    (``viz.memo``) hands out the same figure for equal inputs, so a page that opens again or
    reruns with a control back where it was describes its figures once."""
    said = fig.__dict__.setdefault("_sd_described", {})
    key = tuple(words.items())
    if key not in said:
        said[key] = alt_text.describe(fig, words)
    return said[key]
