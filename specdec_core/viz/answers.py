"""The class's answers for the teacher's projector: each option's count, and the concept check before
and after.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from specdec_core.live.answers import Tally, option_letter
from specdec_core.viz.escape import html_text
from specdec_core.viz.palette import ACCEPTED, NEUTRAL, TARGET_ONLY, base_layout
from specdec_core.viz.spec import axis, bar, figure
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "answer_histogram": ("learners_axis", "share_correct", "no_answers", "right_option"),
    "check_comparison": ("check_title", "check_axis", "check_before", "check_after", "check_hover"),
}
#: Columns of an option's label per line (a wide character, as in Chinese, takes two).
LABEL_COLUMNS = 56
#: Pixels per line of a label, and per bar beyond its label.
LINE_PX = 18
BAR_PX = 26

# A piece a line may break after: a word with its trailing spaces, or one wide character.
_PIECE = re.compile(r"[\u1100-\uffff]|[^\s\u1100-\uffff]+\s*|\s+")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap(text: str, columns: int = LABEL_COLUMNS) -> list[str]:
    """`text` in lines of at most `columns` columns, broken between words (Latin) or between
    characters (Chinese); a word longer than a line is cut. Nothing of the text is dropped."""
    lines: list[str] = []
    line = ""
    for piece in _PIECE.findall(text):
        while _columns(piece.rstrip()) > columns:  # a word longer than a whole line
            if line.strip():
                lines.append(line.rstrip())
                line = ""
            cut = max(1, next(i for i in range(len(piece), 0, -1) if _columns(piece[:i]) <= columns))
            lines.append(piece[:cut])
            piece = piece[cut:]
        if line.strip() and _columns((line + piece).rstrip()) > columns:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def answer_histogram(tally: Tally, options: Sequence[str], text: Mapping[str, str]) -> go.Figure:
    """One bar per option (in the lesson file's order, under its letter, its whole text wrapped
    and escaped): how many learners chose it."""
    t = pick(text, KEYS, "answer_histogram")
    if len(options) != len(tally.counts):
        raise ValueError("one option text per counted option")
    share = tally.share_correct
    title = (
        t["no_answers"]
        if share is None
        else t["share_correct"].format(share=share, right=tally.counts[tally.answer], n=tally.answered)
    )
    lines = [
        wrap(f"{option_letter(j)}. {o}" + (f" {t['right_option']}" if j == tally.answer else ""))
        for j, o in enumerate(options)
    ]
    labels = ["<br>".join(html_text(line) for line in label) for label in lines]
    data = [
        bar(
            x=list(tally.counts),
            y=labels,
            orientation="h",
            marker={"color": [ACCEPTED if j == tally.answer else NEUTRAL for j in range(len(options))]},
            text=[str(c) for c in tally.counts],
            textposition="auto",
            hovertemplate="%{x}<extra></extra>",
        )
    ]
    layout = base_layout(
        title={"text": title},
        height=90 + sum(BAR_PX + LINE_PX * len(label) for label in lines),
        showlegend=False,
        margin={"l": 20, "r": 20, "t": 50, "b": 40},
    )
    layout["xaxis"] = axis(t["learners_axis"], rangemode="tozero")
    if max(tally.counts, default=0) <= 10:
        layout["xaxis"]["dtick"] = 1  # whole learners while the counts are small
    layout["yaxis"] = {"autorange": "reversed", "automargin": True}
    return figure(data, layout)


def check_comparison(
    before: Sequence[Tally], after: Sequence[Tally], concepts: Sequence[str], text: Mapping[str, str]
) -> go.Figure:
    """Per concept (its name escaped and wrapped), the share of the class correct on its
    question before the class and after it, two bars side by side; a question nobody answered
    yet has no bar (never a 0/0) and its count 0 in the hover."""
    t = pick(text, KEYS, "check_comparison")
    if not len(before) == len(after) == len(concepts):
        raise ValueError("one tally before and one after per concept")
    labels = ["<br>".join(html_text(line) for line in wrap(c, 24)) for c in concepts]
    data = []
    for name, tallies, colour in (
        (t["check_before"], before, TARGET_ONLY),
        (t["check_after"], after, ACCEPTED),
    ):
        shares = [tally.share_correct for tally in tallies]
        data.append(
            bar(
                name=html_text(name),
                x=labels,
                y=[None if share is None else 100 * share for share in shares],
                marker={"color": colour},
                text=["" if share is None else f"{share:.0%}" for share in shares],
                textposition="outside",
                customdata=[tally.answered for tally in tallies],
                hovertemplate=t["check_hover"] + "<extra></extra>",
            )
        )
    layout = base_layout(
        title={"text": t["check_title"]},
        barmode="group",
        height=380,
        margin={"l": 50, "r": 20, "t": 60, "b": 80},
        legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
    )
    layout["yaxis"] = axis(t["check_axis"], range=[0, 112], ticksuffix="%")
    return figure(data, layout)
