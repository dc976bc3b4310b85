"""Figures of one chain round inside the model, built from :mod:`specdec_core.live.round_view` data."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from specdec_core.live.round_view import CacheView, RoundView, Step
from specdec_core.viz import palette
from specdec_core.viz.labels import display_label
from specdec_core.viz.spec import axis, bar, figure, scatter, token_axis
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "timeline_figure": (
        "lane_draft",
        "lane_target",
        "lane_rest",
        "step",
        "lookup",
        "verify",
        "rest",
        "ms_axis",
    ),
    "mask_figure": ("row", "context", "input", "accepted", "rejected", "bonus", "unread", "mask_axis"),
    "accept_figure": ("row", "threshold", "u", "accepted", "rejected", "bonus", "unread", "accept_axis"),
    "cache_figure": ("target", "draft", "peak", "after", "held", "kept", "cut", "next", "position_axis"),
}

#: Colour of each row status and each cache cell status.
STATUS_COLOURS: dict[str, str] = {
    "accepted": palette.ACCEPTED,
    "rejected": palette.REJECTED,
    "bonus": palette.BONUS,
    "unread": palette.VOID,
    "held": palette.NEUTRAL,
    "kept": palette.ACCEPTED,
    "cut": palette.REJECTED,
    "next": palette.CORRECTED,
}
_STEP_COLOURS = {
    "draft": palette.DRAFT,
    "lookup": palette.DRAFT,
    "verify": palette.TARGET,
    "rest": palette.MUTED,
}
_CELL = 40  # pixels per grid cell


def _label(texts: Mapping[int, str], token: int | None) -> str:
    return "·" if token is None else display_label(texts.get(int(token), "?"), 8)


def timeline_figure(steps: list[Step], text: Mapping[str, str]) -> go.Figure:
    """The round's steps as bars on one time axis (milliseconds), one lane per model."""
    t = pick(text, KEYS, "timeline_figure")
    lane = {
        "draft": t["lane_draft"],
        "lookup": t["lane_draft"],
        "verify": t["lane_target"],
        "rest": t["lane_rest"],
    }
    names = {
        "draft": lambda s: t["step"].format(i=s.index + 1),
        "lookup": lambda s: t["lookup"],
        "verify": lambda s: t["verify"],
        "rest": lambda s: t["rest"],
    }
    data = [
        bar(
            x=[s.seconds * 1000.0],
            base=[s.start_s * 1000.0],
            y=[lane[s.kind]],
            orientation="h",
            name=names[s.kind](s),
            text=[names[s.kind](s)],
            customdata=[s.seconds * 1000.0],
            textposition="inside",
            textangle=0,
            insidetextanchor="middle",
            marker={"color": _STEP_COLOURS[s.kind], "line": {"color": palette.WHITE, "width": 1}},
            hovertemplate="%{text} · %{customdata:.2f} ms<extra></extra>",
            showlegend=False,
        )
        for s in steps
    ]
    layout = palette.base_layout(height=220, barmode="overlay", margin={"l": 110, "r": 24, "t": 20, "b": 50})
    layout["xaxis"] = axis(t["ms_axis"], rangemode="tozero")
    layout["yaxis"] = {
        "categoryorder": "array",
        "categoryarray": [t["lane_rest"], t["lane_target"], t["lane_draft"]],
    }
    return figure(data, layout)


def mask_figure(view: RoundView, texts: Mapping[int, str], text: Mapping[str, str]) -> go.Figure:
    """The verification pass: one row per input position; row i sees the prompt's tail and the
    inputs up to its own (the causal mask's triangle), and its output verifies the next draft."""
    t = pick(text, KEYS, "mask_figure")
    columns = [*view.context, *view.inputs]
    n_context = len(view.context)
    xs, ys, labels, colours, hover = [], [], [], [], []
    row_names = []
    for row in view.rows:
        checks = "" if row.checks is None else f" → {_label(texts, row.checks)}"
        row_names.append(f"{t['row'].format(i=row.index)}{checks} · {t[row.status]}")
        for c, token in enumerate(columns):
            if c > n_context + row.index:
                continue  # the mask: no row sees a later position
            xs.append(c)
            ys.append(row.index)
            labels.append(_label(texts, token))
            own = c == n_context + row.index
            colours.append(
                STATUS_COLOURS[row.status] if own else palette.PALE if c < n_context else palette.TARGET_TINT
            )
            hover.append(t["context"] if c < n_context else t["input"])
    data = [
        scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            text=labels,
            textfont={"size": 10, "color": palette.INK},
            customdata=hover,
            hovertemplate="%{customdata}: %{text}<extra></extra>",
            marker={
                "symbol": "square",
                "size": _CELL - 4,
                "color": colours,
                "line": {"color": palette.GRID, "width": 1},
            },
            showlegend=False,
        )
    ]
    height = 90 + _CELL * len(view.rows)
    layout = palette.base_layout(height=height, margin={"l": 230, "r": 24, "t": 20, "b": 60})
    ticks = [t["context"] if c < n_context else str(c - n_context) for c in range(len(columns))]
    layout["xaxis"] = token_axis(ticks, title={"text": t["mask_axis"]}, showgrid=False)
    layout["yaxis"] = {
        "tickmode": "array",
        "tickvals": list(range(len(view.rows))),
        "ticktext": row_names,
        "autorange": "reversed",
        "showgrid": False,
    }
    return figure(data, layout)


def accept_figure(view: RoundView, texts: Mapping[int, str], text: Mapping[str, str]) -> go.Figure:
    """Each row's accept test: a bar to min(1, p/q) and a marker at u (accepted when u is left of
    the bar's end); the bonus row and the rows never read are named, not drawn."""
    t = pick(text, KEYS, "accept_figure")
    names = []
    thresholds, us, colours, notes = [], [], [], []
    for row in view.rows:
        checks = "" if row.checks is None else f" · {_label(texts, row.checks)}"
        names.append(f"{t['row'].format(i=row.index)}{checks}")
        thresholds.append(row.accept_prob if row.accept_prob is not None else 0.0)
        us.append(row.u)
        colours.append(STATUS_COLOURS[row.status])
        notes.append(t[row.status])
    data = [
        bar(
            x=thresholds,
            y=names,
            orientation="h",
            name=t["threshold"],
            marker={"color": [palette.rgba(c, 0.55) for c in colours]},
            hovertemplate=f"{t['threshold']} = %{{x:.4g}}<extra></extra>",
        ),
        scatter(
            x=[1.0] * len(names),
            y=names,
            mode="text",
            text=notes,
            textposition="middle right",
            textfont={"color": colours},
            cliponaxis=False,
            showlegend=False,
            hoverinfo="skip",
        ),
        scatter(
            x=[u for u in us if u is not None],
            y=[n for n, u in zip(names, us, strict=True) if u is not None],
            mode="markers",
            name=t["u"],
            marker={"symbol": "line-ns", "size": 26, "line": {"color": palette.INK, "width": 3}},
            hovertemplate=f"{t['u']} = %{{x:.4g}}<extra></extra>",
        ),
    ]
    layout = palette.base_layout(height=110 + 34 * len(names), margin={"l": 150, "r": 110, "t": 40, "b": 50})
    layout["xaxis"] = axis(t["accept_axis"], range=[0, 1.0])
    layout["yaxis"] = {"autorange": "reversed"}
    return figure(data, layout)


#: Each cache state's cell: colour is never its only cue (cut cells are crossed, the tokens
#: read next round hollow).
_CELL_SYMBOLS = {"held": "square", "kept": "square", "cut": "square-x", "next": "square-open"}


def _cell_marker(status: str, size: int) -> dict[str, object]:
    colour = STATUS_COLOURS[status]
    if status == "next":
        return {"symbol": "square-open", "size": size, "color": colour, "line": {"color": colour, "width": 3}}
    if status == "cut":  # a light fill under the cross, so the token stays legible
        fill, line = palette.rgba(colour, 0.3), {"color": colour, "width": 1}
        return {"symbol": "square-x", "size": size, "color": fill, "line": line}
    return {"symbol": "square", "size": size, "color": colour, "line": {"color": palette.WHITE, "width": 1}}


def cache_figure(caches: list[CacheView], texts: Mapping[int, str], text: Mapping[str, str]) -> go.Figure:
    """Each model's session: its positions at the peak of the round (held, kept, cut) and after
    the rollback (held and kept, then the committed tokens it reads next round). A dotted line
    marks where the round began in each session, a dashed one where it was cut."""
    t = pick(text, KEYS, "cache_figure")
    lanes: list[str] = []
    cells: dict[str, list[tuple[int, str, str]]] = {status: [] for status in _CELL_SYMBOLS}
    for cache in caches:
        peak, after = f"{t[cache.model]} · {t['peak']}", f"{t[cache.model]} · {t['after']}"
        lanes += [peak, after]
        for cell in cache.cells:
            cells[cell.status].append((cell.position, peak, _label(texts, cell.token)))
            if cell.status != "cut":
                cells[cell.status].append((cell.position, after, _label(texts, cell.token)))
        for cell in cache.waiting:
            cells["next"].append((cell.position, after, _label(texts, cell.token)))
    data = [
        scatter(
            x=[x for x, _, _ in points] or [None],
            y=[y for _, y, _ in points] or [None],
            mode="markers+text",
            name=t[status],
            text=[label for _, _, label in points] or [None],
            textfont={"size": 10, "color": palette.INK},
            hovertemplate=f"{t[status]}: %{{text}} (%{{x}})<extra></extra>",
            marker=_cell_marker(status, _CELL - 4),
        )
        for status, points in cells.items()
    ]
    shapes = []
    top = len(lanes) - 1  # category positions: the first lane is drawn at the top
    for m, cache in enumerate(caches):
        y0, y1 = top - 2 * m - 1 - 0.5, top - 2 * m + 0.5
        for x, dash, colour in (
            (cache.before, "dot", palette.MUTED),
            (cache.after, "dash", palette.REJECTED),
        ):
            shapes.append(
                {
                    "type": "line",
                    "x0": x - 0.5,
                    "x1": x - 0.5,
                    "y0": y0,
                    "y1": y1,
                    "xref": "x",
                    "yref": "y",
                    "line": {"color": colour, "dash": dash, "width": 2},
                }
            )
    layout = palette.base_layout(height=120 + 40 * len(lanes), margin={"l": 170, "r": 24, "t": 40, "b": 50})
    layout["xaxis"] = {"title": {"text": t["position_axis"]}, "dtick": 1, "showgrid": False}
    layout["yaxis"] = {"categoryorder": "array", "categoryarray": lanes[::-1], "showgrid": False}
    layout["shapes"] = shapes
    return figure(data, layout)
