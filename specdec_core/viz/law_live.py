"""Figures of the lab "Exact on a real model": exact probabilities beside counted shares, and
each rule's total variation distance beside the noise band.

Token labels may be any text (spaces, newlines, ``<script>``): they are shortened with visible
whitespace and escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.viz import palette
from specdec_core.viz.labels import short_label
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.spec import axis, bar, figure, scatter, token_axis
from specdec_core.viz.strings import pick

#: Figure strings each builder reads (``[fig]`` of law_live.toml; the page fills "broken" with
#: the broken rule's name).
KEYS: dict[str, tuple[str, ...]] = {
    "share_bars": ("exact", "counted", "broken", "rest", "xaxis", "yaxis", "hover"),
    "tv_bars": ("tv", "noise", "tv_yaxis", "hover_tv", "hover_noise"),
}


def _values(name: str, values: Sequence[float] | None, size: int) -> np.ndarray | None:
    """float64 copy of `values` (one per bar, finite, in [0, 1]; rounding above 1 is clipped
    to 1); None stays None."""
    if values is None:
        return None
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (size,):
        raise ValueError(f"{name} needs {size} values, got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1 + 1e-9):
        raise ValueError(f"{name} must hold finite shares between 0 and 1.")
    return np.minimum(arr, 1.0)


@figure_cache
def share_bars(
    labels: Sequence[str],
    exact: Sequence[float],
    counted: Sequence[float] | None,
    broken: Sequence[float] | None,
    text: Mapping[str, str],
    height: int = 360,
) -> go.Figure:
    """Grouped bars per token: the exact probability, the speculative run's counted share and
    the broken rule's (a series left out while it is None). `labels` are raw token texts, one
    per bar but the last: that bar is "the rest", labelled by ``text["rest"]``, so each series
    has one value more than `labels`."""
    t = pick(text, KEYS, "share_bars")
    n = len(labels) + 1
    series = [  # the broken rule's bars are also hatched, as rejected bars are elsewhere
        (t["exact"], _values("exact", exact, n), {"color": palette.TARGET}),
        (t["counted"], _values("counted", counted, n), palette.state_bar("accepted")),
        (t["broken"], _values("broken", broken, n), palette.state_bar("rejected")),
    ]
    shown = [html.escape(short_label(str(x), 12)) for x in labels] + [html.escape(t["rest"])]
    data = []
    for name, values, marker in series:
        if values is None:
            continue
        data.append(
            bar(
                x=list(range(n)),
                y=values.tolist(),
                name=html.escape(name),
                marker=marker,
                customdata=shown,
                hovertemplate=t["hover"],
            )
        )
    layout = palette.base_layout(barmode="group", height=height, bargap=0.25)
    # placed by position, so two tokens that print alike keep their own bars
    layout["xaxis"] = token_axis(shown, title={"text": t["xaxis"]})
    layout["yaxis"] = axis(t["yaxis"], rangemode="tozero")
    return figure(data, layout)


@figure_cache
def tv_bars(
    rules: Sequence[str],
    tv: Sequence[float],
    noise: Sequence[float],
    text: Mapping[str, str],
    height: int = 300,
) -> go.Figure:
    """One bar per rule: its counts' total variation distance from the exact law, with a
    marker at the noise band (what exact sampling reaches 95 % of the time with as many samples)."""
    t = pick(text, KEYS, "tv_bars")
    n = len(rules)
    d, band = _values("tv", tv, n), _values("noise", noise, n)
    assert d is not None and band is not None
    names = [html.escape(str(r)) for r in rules]
    colours = [palette.ACCEPTED] + [palette.REJECTED] * (n - 1)
    hatch = [palette.STATE_PATTERNS["accepted"]] + [palette.STATE_PATTERNS["rejected"]] * (n - 1)
    marker = {"color": colours, "pattern": {"shape": hatch, "fillmode": "overlay", "fgcolor": palette.WHITE}}
    data = [
        bar(x=names, y=d.tolist(), name=t["tv"], marker=marker, hovertemplate=t["hover_tv"]),
        scatter(
            x=names,
            y=band.tolist(),
            name=t["noise"],
            mode="markers",
            marker={"symbol": "line-ew-open", "size": 64, "color": palette.INK, "line": {"width": 3}},
            hovertemplate=t["hover_noise"],
        ),
    ]
    layout = palette.base_layout(height=height, bargap=0.45)
    layout["yaxis"] = axis(t["tv_yaxis"], rangemode="tozero")
    layout["xaxis"] = {"type": "category"}
    return figure(data, layout)
