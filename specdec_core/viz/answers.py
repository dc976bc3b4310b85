"""The class's answers to one quiz question, for the teacher's projector view.

:func:`answer_histogram` draws how many learners chose each option (the right one in the
"accepted" colour) with the share correct in its title. Strings come from the caller
(``[fig]`` of lessons/<lang>/answers.toml; the keys are in :data:`KEYS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from specdec_core.live.answers import Tally
from specdec_core.viz.escape import html_text
from specdec_core.viz.palette import ACCEPTED, GRID, NEUTRAL, base_layout
from specdec_core.viz.spec import bar, figure
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "answer_histogram": ("learners_axis", "share_correct", "no_answers", "right_option"),
}
#: Characters of an option's text shown beside its bar (the whole text is in the hover).
LABEL_CHARS = 48


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def answer_histogram(tally: Tally, options: Sequence[str], text: Mapping[str, str]) -> go.Figure:
    """One bar per option (in the lesson file's order, its text escaped): how many learners chose it."""
    t = pick(text, KEYS, "answer_histogram")
    if len(options) != len(tally.counts):
        raise ValueError("one option text per counted option")
    share = tally.share_correct
    title = (
        t["no_answers"]
        if share is None
        else t["share_correct"].format(share=share, right=tally.counts[tally.answer], n=tally.answered)
    )
    labels = [
        f"{chr(ord('A') + j)}. {html_text(_short(o))}"
        + (f" {t['right_option']}" if j == tally.answer else "")
        for j, o in enumerate(options)
    ]
    data = [
        bar(
            x=list(tally.counts),
            y=labels,
            orientation="h",
            marker={"color": [ACCEPTED if j == tally.answer else NEUTRAL for j in range(len(options))]},
            text=[str(c) for c in tally.counts],
            textposition="auto",
            customdata=[html_text(o) for o in options],
            hovertemplate="%{customdata}: %{x}<extra></extra>",
        )
    ]
    layout = base_layout(
        title={"text": title},
        height=80 + 44 * len(options),
        showlegend=False,
        margin={"l": 20, "r": 20, "t": 50, "b": 40},
    )
    layout["xaxis"] = {
        "title": {"text": t["learners_axis"]},
        "rangemode": "tozero",
        "gridcolor": GRID,
    }
    if max(tally.counts, default=0) <= 10:
        layout["xaxis"]["dtick"] = 1  # whole learners while the counts are small
    layout["yaxis"] = {"autorange": "reversed", "automargin": True}
    return figure(data, layout)
