"""Figures of the block-verification lesson, built from :mod:`specdec_core.course.block` data (the
statistics of many rounds are in :mod:`specdec_core.viz.rounds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import numpy as np
import plotly.graph_objects as go

from specdec_core.course.block import BlockRound
from specdec_core.viz import palette
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import (
    ACCEPTED,
    BONUS,
    CORRECTED,
    DRAFT,
    GRID,
    REJECTED,
    TARGET,
    VOID,
    base_layout,
)
from specdec_core.viz.spec import (
    axis_names,
    figure,
    layout_axis,
    merge,
    scatter,
    state_marks,
    subplot_axes,
    subplot_title,
)
from specdec_core.viz.strings import pick

#: Border colour of a committed token of each kind in :func:`cache_figure`.
KIND_CELL: dict[str, str] = {"accepted": ACCEPTED, "corrected": CORRECTED, "bonus": BONUS}

#: Fill and border colour of each slot outcome in :func:`round_figure`.
OUTCOME_COLOURS: dict[str, str] = {
    "accepted": ACCEPTED,
    "rejected": REJECTED,
    "corrected": CORRECTED,
    "bonus": BONUS,
    "void": VOID,
}

_OUTCOMES = ("accepted", "rejected", "corrected", "bonus", "void")

#: Figure strings each builder reads (``[fig]`` of lessons/<lang>/block.toml).
KEYS: dict[str, tuple[str, ...]] = {
    "round_figure": (
        *_OUTCOMES,
        "draft_slot",
        "bonus_slot",
        "no_bonus",
        "p_at",
        "q_at",
        "accept_prob",
        "probability",
        "round_title",
        "hover_slot",
        "not_examined",
    ),
    "rows_figure": (*_OUTCOMES, "q_rows", "p_rows", "after", "after_axis"),
    "cache_figure": (
        "target",
        "draft",
        "kept",
        "dropped",
        "cached_before",
        "start",
        "newest",
        "text_row",
        "earlier",
        "position_axis",
        "accepted",
        "corrected",
        "bonus",
    ),
}


def _slot_names(k: int, t: Mapping[str, str]) -> list[str]:
    return [t["draft_slot"].format(i=i + 1) for i in range(k)] + [t["bonus_slot"]]


def _rect(
    x0: float,
    x1: float,
    y0: float,
    y1: float,
    border: str | None,
    fill: str | None = None,
    dash: str = "solid",
    axes: str = "",
    width: int = 2,
    **extra: object,
) -> dict[str, object]:
    """A rectangle shape as a plain dict (one ``update_layout`` is much faster than many add_shape)."""
    line = {"color": border, "width": width if border else 0, "dash": dash}
    shape = {
        "type": "rect",
        "x0": x0,
        "x1": x1,
        "y0": y0,
        "y1": y1,
        "fillcolor": fill,
        "line": {k: v for k, v in line.items() if v is not None},
        "xref": f"x{axes}",
        "yref": f"y{axes}",
        **extra,
    }
    return {k: v for k, v in shape.items() if v is not None}  # unset, as plotly leaves a None


def _label(x: float, y: float, text: str, colour: str, size: int, axes: str = "") -> dict[str, object]:
    return {
        "x": x,
        "y": y,
        "text": text,
        "showarrow": False,
        "font": {"color": colour, "size": size},
        "xref": f"x{axes}",
        "yref": f"y{axes}",
    }


def _legend_entry(name: str, colour: str, **axes: str) -> dict[str, object]:
    """An empty trace that only puts a coloured square and `name` in the legend."""
    entry = {"x": [None], "y": [None], "mode": "markers", "name": name}
    return scatter(**entry, marker={"symbol": "square", "size": 14, "color": colour}, **axes)


@figure_cache
def round_figure(rnd: BlockRound, labels: Sequence[str], text: Mapping[str, str]) -> go.Figure:
    """The slots of one round: outcome boxes on top, p and q at each draft below.

    A rejected slot shows the struck draft over the corrected token that replaced it; a
    void slot (a draft after the rejection, or the bonus slot without a bonus) is grey.
    """
    t = pick(text, KEYS, "round_figure")
    k = rnd.k
    outcomes = rnd.slot_outcomes
    names = _slot_names(k, t)
    xs = np.arange(1, k + 2)
    axes = subplot_axes(2, 1, shared_xaxes=True, row_heights=(0.42, 0.58), vertical_spacing=0.06)

    hover, shapes, notes = [], [], []
    marks: dict[str, list[tuple[float, float]]] = {}  # each state's symbol, in its slots' corners
    for i, outcome in enumerate(outcomes):
        x0, x1 = xs[i] - 0.42, xs[i] + 0.42
        colour = OUTCOME_COLOURS[outcome]
        if i < k:
            token = escape(labels[rnd.drafts[i]])
            a = f"{rnd.acceptance_probs[i]:.3f}" if i < len(rnd.acceptance_probs) else t["not_examined"]
            hover.append(
                f"<b>{names[i]} = {token}</b> ({t[outcome]})<br>"
                + t["hover_slot"].format(p=rnd.p_at_drafts[i], q=rnd.q_at_drafts[i], a=a)
            )
        else:
            token = escape(labels[rnd.committed[-1]]) if outcome == "bonus" else t["no_bonus"]
            hover.append(f"<b>{names[i]}</b>: {token}")
        if outcome == "rejected":
            corrected = escape(labels[rnd.committed[-1]])
            shapes += [
                _rect(x0, x1, 0.52, 0.96, REJECTED, palette.REJECTED_TINT),
                _rect(x0, x1, 0.04, 0.48, CORRECTED, palette.CORRECTED_TINT),
            ]
            notes += [
                _label(xs[i], 0.74, f"<s>{token}</s>", palette.REJECTED_TEXT, 17),
                _label(xs[i], 0.26, f"<b>{corrected}</b>", palette.CORRECTED_TEXT, 17),
            ]
            marks.setdefault("rejected", []).append((x0 + 0.1, 0.87))
            marks.setdefault("corrected", []).append((x0 + 0.1, 0.39))
            continue
        font = palette.STATE_TEXT[outcome]
        marks.setdefault(outcome, []).append((x0 + 0.1, 0.87))
        shapes += [
            _rect(x0, x1, 0.04, 0.96, None, colour, opacity=0.18),
            _rect(x0, x1, 0.04, 0.96, colour, dash="dot" if outcome == "void" else "solid"),
        ]
        notes += [_label(xs[i], 0.62, f"<b>{token}</b>", font, 17), _label(xs[i], 0.28, t[outcome], font, 12)]
    data = [
        scatter(
            x=xs,
            y=[0.5] * (k + 1),
            mode="markers",
            marker={"opacity": 0, "size": 40},
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
            xaxis="x",
            yaxis="y",
        ),
        *state_marks(marks, t, "x", "y"),
    ]

    dim = [0.35 if o == "void" else 1.0 for o in outcomes[:k]]
    for values, name, colour in ((rnd.p_at_drafts, t["p_at"], TARGET), (rnd.q_at_drafts, t["q_at"], DRAFT)):
        data.append(
            {
                "type": "bar",
                "x": xs[:k],
                "y": values,
                "name": name,
                "marker": {"color": colour, "opacity": dim},
                "text": [f"{v:.2f}" for v in values],
                "textposition": "outside",
                "xaxis": "x2",
                "yaxis": "y2",
            }
        )
    if outcomes[k] == "bonus":
        p_bonus = float(rnd.p_rows[k][rnd.committed[-1]])
        data.append(
            {
                "type": "bar",
                "x": [xs[k]],
                "y": [p_bonus],
                "marker": palette.state_bar("bonus"),
                "showlegend": False,
                "text": [f"{p_bonus:.2f}"],
                "textposition": "outside",
                "hoverinfo": "y",
                "xaxis": "x2",
                "yaxis": "y2",
            }
        )
    examined = len(rnd.acceptance_probs)
    data.append(
        scatter(
            x=xs[:examined],
            y=rnd.acceptance_probs,
            name=t["accept_prob"],
            mode="markers+lines",
            line={"color": palette.INK, "width": 1, "dash": "dot"},
            marker={"symbol": "diamond", "size": 12, "color": palette.INK},
            xaxis="x2",
            yaxis="y2",
        )
    )

    for key in ("xaxis", "xaxis2"):
        axes[key].update(tickvals=xs, ticktext=names, range=[0.5, k + 1.5], showgrid=False)
    axes["yaxis"].update(visible=False, range=[0, 1])
    axes["yaxis2"].update(range=[0, 1.18], title={"text": t["probability"]}, gridcolor=GRID)
    layout = merge(
        axes,
        base_layout(
            barmode="group",
            height=470,
            bargap=0.35,
            shapes=shapes,
            annotations=notes,
            title={"text": t["round_title"].format(n=rnd.index, committed=len(rnd.committed))},
            margin={"l": 62, "r": 20, "t": 90, "b": 40},
        ),
    )
    return figure(data, layout)


@figure_cache
def rows_figure(rnd: BlockRound, labels: Sequence[str], text: Mapping[str, str]) -> go.Figure:
    """Heatmaps of the K draft rows q_i and the K+1 target rows p_i of one round.

    Column i holds the next-token law after input i ([anchor, y1 … yK]); each draft token
    is outlined in its outcome colour, the corrected or bonus token in its own colour.
    """
    t = pick(text, KEYS, "rows_figure")
    k = rnd.k
    size = rnd.p_rows.shape[1]
    inputs = [rnd.anchor, *rnd.drafts]
    outcomes = rnd.slot_outcomes
    after = [t["after"].format(token=escape(labels[tok])) for tok in inputs]
    q_names = [f"q{i + 1}<br>{after[i]}" for i in range(k)]
    p_names = [f"p{i + 1}<br>{after[i]}" for i in range(k + 1)]
    axes = subplot_axes(1, 2, shared_yaxes=True, column_widths=(k, k + 1), horizontal_spacing=0.03)
    titles = [
        subplot_title(axes, 1, title, col=col, cols=2) for col, title in ((1, t["q_rows"]), (2, t["p_rows"]))
    ]
    ys = np.arange(size)
    data = []
    for col, rows, names, scale in ((1, rnd.q_rows, q_names, DRAFT), (2, rnd.p_rows, p_names, TARGET)):
        z = rows.T  # tokens down, positions across
        cells = [[f"{v:.2f}" if v > 0 else "" for v in line] for line in z]
        x_ref, y_ref = axis_names(1, col, 2)
        data.append(
            {
                "type": "heatmap",
                "z": z,
                "x": np.arange(len(names)),
                "y": ys,
                "zmin": 0,
                "zmax": 1,
                "text": cells,
                "texttemplate": "%{text}",
                "colorscale": [[0, palette.WHITE], [1, scale]],
                "showscale": False,
                "xgap": 2,
                "ygap": 2,
                "hovertemplate": "%{customdata}: %{z:.4f}<extra></extra>",
                "customdata": [[escape(labels[tok])] * len(names) for tok in range(size)],
                "xaxis": x_ref,
                "yaxis": y_ref,
            }
        )
        axes[layout_axis(x_ref)].update(tickvals=np.arange(len(names)), ticktext=names)

    shapes = []
    marks: dict[str, dict[str, list[tuple[float, float]]]] = {"": {}, "2": {}}  # by heatmap, state

    def outline(axes: str, x: int, token: int, kind: str) -> None:
        dash = "dot" if kind == "void" else "solid"
        box = _rect(
            x - 0.5, x + 0.5, token - 0.5, token + 0.5, OUTCOME_COLOURS[kind], dash=dash, axes=axes, width=3
        )
        shapes.append(box)
        marks[axes].setdefault(kind, []).append((x - 0.3, token - 0.22))

    def grey_out(axes: str, x: int) -> None:
        shapes.append(_rect(x - 0.5, x + 0.5, -0.5, size - 0.5, None, VOID, axes=axes, opacity=0.35))

    for i, token in enumerate(rnd.drafts):
        void = outcomes[i] == "void"
        for ax in ("", "2"):  # q heatmap, p heatmap
            outline(ax, i, token, outcomes[i])
            if void:
                grey_out(ax, i)
    if rnd.rejected is not None:
        outline("2", rnd.accepted, rnd.committed[-1], "corrected")
        grey_out("2", k)
    else:
        outline("2", k, rnd.committed[-1], "bonus")
    data += state_marks(marks[""], t, "x", "y", legend=False)
    data += state_marks(marks["2"], t, "x2", "y2", kinds=_OUTCOMES)  # the legend names them all
    axes["yaxis"].update(
        tickvals=ys,
        ticktext=[escape(lab) for lab in labels],
        autorange="reversed",
        showgrid=False,
    )
    for key in ("xaxis", "xaxis2"):
        axes[key].update(showgrid=False, tickfont={"size": 12}, tickangle=0)
    note = {
        "text": t["after_axis"],
        "xref": "paper",
        "yref": "paper",
        "x": 0.5,
        "y": -0.15,
        "showarrow": False,
        "font": {"size": 13, "color": palette.MUTED},
    }
    layout = merge(
        {**axes, "annotations": [*titles, note]},
        base_layout(
            height=180 + 34 * size,
            margin={"l": 70, "r": 20, "t": 50, "b": 140},
            legend={"orientation": "h", "yanchor": "top", "y": -0.24, "x": 0},
            shapes=shapes,
        ),
    )
    return figure(data, layout)


def _cell(
    cells: list[tuple[dict, dict]],
    x: float,
    y: float,
    label: str,
    fill: str,
    border: str,
    dash: str = "solid",
    font: str = palette.INK,
) -> None:
    box = _rect(x - 0.45, x + 0.45, y - 0.38, y + 0.38, border, fill, dash)
    cells.append((box, _label(x, y, label, font, 15)))


@figure_cache
def cache_figure(
    rnd: BlockRound,
    labels: Sequence[str],
    prefix: Sequence[int],
    text: Mapping[str, str],
    context: int = 3,
) -> go.Figure:
    """The committed text and both caches after one round, cell by cell.

    `prefix` is the committed text before the round. Cache cells are coloured by what
    happened to them: already cached before the round, added and kept, or rolled back
    (struck out). The newest committed token is in no cache: it is the next round's first
    input. Only the last `context` cells from before the round are drawn.
    """
    t = pick(text, KEYS, "cache_figure")
    before = list(prefix)
    if not before or before[-1] != rnd.anchor:
        raise ValueError("prefix must be the committed text before the round, ending with its anchor.")
    after_text = before + rnd.committed
    caches = [
        (t["target"], rnd.target_cache, TARGET, palette.TARGET_TINT),
        (t["draft"], rnd.draft_cache, DRAFT, palette.DRAFT_TINT),
    ]
    content = before + rnd.drafts  # what the caches hold at their peak, position by position
    lo = max(0, min(c.start for _, c, _, _ in caches) - context)
    hi = max(len(after_text), *(c.peak for _, c, _, _ in caches))
    cells: list[tuple[dict, dict]] = []
    kinds = ["old"] * len(before) + rnd.kinds
    marks: dict[str, list[tuple[float, float]]] = {}  # the round's committed tokens, by state
    for pos in range(lo, len(after_text)):
        label = escape(labels[after_text[pos]])
        kind = kinds[pos]
        if kind == "old":
            _cell(cells, pos, 0, label, palette.PALE, palette.NEUTRAL)
            continue
        newest = pos == len(after_text) - 1
        dash = "dash" if newest else "solid"
        _cell(
            cells, pos, 0, f"<b>{label}</b>", palette.WHITE, KIND_CELL[kind], dash, palette.STATE_TEXT[kind]
        )
        marks.setdefault(kind, []).append((pos - 0.33, -0.24))
    for row, (_, cache, colour, tint) in enumerate(caches, start=1):
        for pos in range(lo, cache.peak):
            label = escape(labels[content[pos]])
            if pos < cache.start:
                _cell(cells, pos, row, label, palette.PALE, palette.NEUTRAL)
            elif pos < cache.after:
                _cell(cells, pos, row, label, tint, colour)
            else:
                _cell(
                    cells,
                    pos,
                    row,
                    f"<s>{label}</s>",
                    palette.REJECTED_TINT,
                    REJECTED,
                    font=palette.REJECTED_TEXT,
                )
    shapes = [shape for shape, _ in cells] + [
        {
            "type": "line",
            "x0": c.start - 0.5,
            "x1": c.start - 0.5,
            "y0": row - 0.48,
            "y1": row + 0.48,
            "line": {"color": palette.INK, "width": 4},
        }
        for row, (_, c, _, _) in enumerate(caches, start=1)
    ]
    notes = [note for _, note in cells]
    if lo > 0:
        notes.append(_label(lo - 1.2, 1.5, t["earlier"].format(n=lo), palette.MUTED, 12))
    legend = (
        (palette.NEUTRAL, t["cached_before"]),
        (TARGET, t["kept"].format(model=t["target"])),
        (DRAFT, t["kept"].format(model=t["draft"])),
        (REJECTED, t["dropped"]),
        (palette.INK, t["start"]),
        (CORRECTED, t["newest"]),
    )
    data = [_legend_entry(name, colour) for colour, name in legend] + state_marks(marks, t, "x", "y")
    names = [t["text_row"], *(f"{name}<br>{c.start} → {c.peak} → {c.after}" for name, c, _, _ in caches)]
    layout = base_layout(
        height=300, margin={"l": 110, "r": 20, "t": 92, "b": 60}, shapes=shapes, annotations=notes
    )
    layout["xaxis"] = {
        "range": [lo - 2.0 if lo else -0.6, hi - 0.4],
        "tickvals": list(range(lo, hi)),
        "ticktext": [str(p + 1) for p in range(lo, hi)],
        "title": {"text": t["position_axis"]},
        "showgrid": False,
        "zeroline": False,
    }
    layout["yaxis"] = {
        "range": [2.6, -0.6],
        "tickvals": [0, 1, 2],
        "ticktext": names,
        "showgrid": False,
        "zeroline": False,
    }
    return figure(data, layout)
