"""Figures of the roofline lesson, from :mod:`specdec_core.course.roofline` data (plain arrays)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from specdec_core.viz import palette
from specdec_core.viz.spec import axis, figure, hline, scatter
from specdec_core.viz.strings import pick

KEYS: dict[str, tuple[str, ...]] = {
    "roofline_figure": (
        "point_hover",
        "target_line",
        "draft_line",
        "ridge",
        "plain",
        "verify",
        "draft",
        "intensity_axis",
        "time_axis",
    ),
    "batch_figure": ("batch_axis", "speedup_axis", "break_even", "context_line", "you"),
}


@dataclass(frozen=True)
class Point:
    """A pass placed on the roofline: its intensity (FLOPs/byte) and time (seconds)."""

    intensity: float
    seconds: float


def roofline_figure(
    target: tuple[np.ndarray, np.ndarray],
    draft: tuple[np.ndarray, np.ndarray],
    ridge: float,
    plain: Point,
    verify: Point,
    draft_step: Point,
    text: Mapping[str, str],
) -> go.Figure:
    """Log-log: each model's (intensity, seconds) curve, the ridge as a vertical line, and the
    plain step, the verification pass and the draft step as markers (times in ms)."""
    t = pick(text, KEYS, "roofline_figure")
    data = [
        scatter(
            x=target[0],
            y=target[1] * 1000.0,
            mode="lines",
            name=t["target_line"],
            line={"color": palette.TARGET, "width": 3},
        ),
        scatter(
            x=draft[0],
            y=draft[1] * 1000.0,
            mode="lines",
            name=t["draft_line"],
            line={"color": palette.DRAFT, "width": 2},
        ),
    ]
    for point, name, colour, symbol in (
        (plain, t["plain"], palette.TARGET_ONLY, "circle"),
        (verify, t["verify"], palette.ACCEPTED, "diamond"),
        (draft_step, t["draft"], palette.DRAFT, "square"),
    ):
        data.append(
            scatter(
                x=[point.intensity],
                y=[point.seconds * 1000.0],
                mode="markers",
                name=name,
                marker={
                    "color": colour,
                    "size": 14,
                    "symbol": symbol,
                    "line": {"color": palette.INK, "width": 1},
                },
                hovertemplate=f"{name}<br>{t['point_hover']}<extra></extra>",
            )
        )
    layout = palette.base_layout(height=420, margin={"l": 70, "r": 24, "t": 70, "b": 60})
    layout["xaxis"] = axis(t["intensity_axis"], type="log")
    layout["yaxis"] = axis(t["time_axis"], type="log")
    layout["shapes"] = [
        {
            "type": "line",
            "x0": ridge,
            "x1": ridge,
            "xref": "x",
            "y0": 0,
            "y1": 1,
            "yref": "y domain",
            "line": {"color": palette.MUTED, "dash": "dash", "width": 2},
        }
    ]
    layout["annotations"] = [
        {
            "x": float(np.log10(ridge)),
            "xref": "x",
            "y": 1,
            "yref": "y domain",
            "text": t["ridge"].format(ridge=ridge),
            "showarrow": False,
            "xanchor": "left",
            "yanchor": "top",
            "font": {"color": palette.MUTED},
        }
    ]
    return figure(data, layout)


def batch_figure(
    batches: np.ndarray,
    lines: Sequence[tuple[int, np.ndarray, bool]],
    batch: int,
    break_even: int | None,
    text: Mapping[str, str],
) -> go.Figure:
    """Speedup against batch size (log x), one line per context (`lines`: context, speedups,
    whether it is the chosen one), the line of 1× and the chosen batch; `break_even` (of the
    chosen context) marked when speculation stops paying within the range."""
    t = pick(text, KEYS, "batch_figure")
    shades = palette.shades(palette.ALPHA_LIGHT, palette.ALPHA_DARK, max(len(lines), 2))
    data = []
    for (context, speedups, chosen), shade in zip(lines, shades, strict=False):
        data.append(
            scatter(
                x=batches,
                y=speedups,
                mode="lines",
                name=t["context_line"].format(context=context),
                line={"color": palette.ACCEPTED if chosen else shade, "width": 4 if chosen else 2},
            )
        )
    chosen_line = next((s for _, s, c in lines if c), None)
    if chosen_line is not None:
        at = int(np.searchsorted(batches, batch))
        at = min(at, len(batches) - 1)
        data.append(
            scatter(
                x=[batches[at]],
                y=[chosen_line[at]],
                mode="markers",
                name=t["you"],
                marker={"color": palette.HIGHLIGHT, "size": 14, "line": {"color": palette.INK, "width": 1}},
            )
        )
    shape, label = hline(
        1.0, {"color": palette.INK, "dash": "dot", "width": 1}, t["break_even"], "bottom right"
    )
    layout = palette.base_layout(height=400, margin={"l": 70, "r": 24, "t": 90, "b": 60})
    layout["xaxis"] = axis(t["batch_axis"], type="log")
    layout["yaxis"] = axis(t["speedup_axis"], rangemode="tozero")
    layout["shapes"] = [shape]
    layout["annotations"] = [label]
    if break_even is not None:
        layout["shapes"].append(
            {
                "type": "line",
                "x0": break_even,
                "x1": break_even,
                "xref": "x",
                "y0": 0,
                "y1": 1,
                "yref": "y domain",
                "line": {"color": palette.REJECTED, "dash": "dash", "width": 2},
            }
        )
    return figure(data, layout)
