"""Figures of many rounds of block verification (the block lesson and the live page)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.course.block import BlockRound
from specdec_core.viz.memo import figure_cache
from specdec_core.viz.palette import (
    NEUTRAL,
    TARGET,
    TARGET_ONLY,
    base_layout,
    state_bar,
)
from specdec_core.viz.spec import axis, bar, figure, hline
from specdec_core.viz.strings import pick

#: Figure strings each builder reads (``[fig]`` of lessons/<lang>/block.toml; the live page
#: gives tokens_histogram its ``[fig_hist]``).
KEYS: dict[str, tuple[str, ...]] = {
    "rounds_figure": ("accepted", "corrected", "bonus", "rounds_axis", "tokens_axis", "k_plus_one"),
    "tokens_histogram": ("measured", "theory", "share_axis", "committed_axis"),
}


@figure_cache
def rounds_figure(rounds: Sequence[BlockRound], text: Mapping[str, str]) -> go.Figure:
    """Tokens each round committed: accepted drafts (green) plus its corrected or bonus token,
    each state's bars in its colour and its fill pattern."""
    t = pick(text, KEYS, "rounds_figure")
    if not rounds:
        raise ValueError("rounds_figure needs at least one round.")
    k = rounds[0].k
    xs = [r.index for r in rounds]
    last = [r.kinds[-1] for r in rounds]
    data = [bar(x=xs, y=[r.accepted for r in rounds], name=t["accepted"], marker=state_bar("accepted"))]
    for kind in ("corrected", "bonus"):
        data.append(
            bar(x=xs, y=[1 if kind == kd else 0 for kd in last], name=t[kind], marker=state_bar(kind))
        )
    line, label = hline(
        k + 1, {"color": TARGET_ONLY, "dash": "dash"}, t["k_plus_one"].format(n=k + 1), "top left"
    )
    layout = base_layout(
        barmode="stack",
        height=260,
        bargap=0.15,
        margin={"l": 50, "r": 20, "t": 60, "b": 60},
        shapes=[line],
        annotations=[label],
    )
    layout["xaxis"] = {"title": {"text": t["rounds_axis"]}, "showgrid": False}
    layout["yaxis"] = axis(t["tokens_axis"], range=[0, k + 1.6], dtick=1)
    return figure(data, layout)


@figure_cache
def tokens_histogram(
    counts: Sequence[int] | np.ndarray,
    law: Sequence[float] | np.ndarray,
    alpha: float,
    text: Mapping[str, str],
) -> go.Figure:
    """Share of rounds that committed n = 1 … K+1 tokens, beside the i.i.d. law for `alpha`."""
    t = pick(text, KEYS, "tokens_histogram")
    c = np.asarray(counts, dtype=np.float64)
    p = np.asarray(law, dtype=np.float64)
    if c.shape != p.shape or c.ndim != 1 or c.sum() <= 0:
        raise ValueError("counts and law need one entry per possible round length, and some rounds.")
    xs = np.arange(1, c.size + 1)
    share = c / c.sum()
    data = [
        bar(
            x=xs,
            y=share,
            name=t["measured"],
            marker={"color": TARGET},
            customdata=c.astype(int),
            hovertemplate="%{x}: %{y:.3f} (%{customdata})<extra></extra>",
        ),
        bar(
            x=xs,
            y=p,
            name=t["theory"].format(alpha=alpha),
            marker={"color": NEUTRAL},
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        ),
    ]
    layout = base_layout(
        barmode="group", height=300, bargap=0.25, margin={"l": 50, "r": 20, "t": 60, "b": 50}
    )
    layout["xaxis"] = {"title": {"text": t["committed_axis"]}, "tickvals": xs, "showgrid": False}
    layout["yaxis"] = axis(t["share_axis"], range=[0, 1.05])
    return figure(data, layout)
