"""Views of a live run: the coloured text (HTML), the round timeline, progress over time, and
the target's row at a bonus or target-only position; token text is escaped, whitespace made visible.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from specdec_core.live.stats import Timeline
from specdec_core.live.text import SPAN_KINDS, TokenSpan, readable
from specdec_core.viz import palette
from specdec_core.viz.labels import short_label
from specdec_core.viz.spec import axis, bar, figure, scatter
from specdec_core.viz.strings import pick

_TIPS = ("tip_draft", "tip_token", "tip_p", "tip_piece")

#: Figure strings each builder reads: ``[fig]`` of lessons/<lang>/live.toml, the token kinds
#: (``[kinds]`` of common.toml) and ``void`` (live.toml), as the live page gathers them.
KEYS: dict[str, tuple[str, ...]] = {
    "span_html": (*SPAN_KINDS, *_TIPS),
    "tokens_html": (*SPAN_KINDS, *_TIPS, "earlier", "piece_note"),
    "piece_note_html": ("piece_note",),
    "legend_html": (*SPAN_KINDS, "legend_lines"),
    "timeline_figure": (
        "drafted",
        "accepted",
        "corrected",
        "bonus",
        "target",
        "selected",
        "round_axis",
        "tokens_axis",
    ),
    "speed_figure": ("seconds_axis", "generated_axis", "tokens_hover"),
    "row_bars": ("chosen", "row_axis", "probability"),
}
#: The timeline's and the speed chart's margins, tighter than base_layout's.
_NARROW_MARGIN = {"l": 50, "r": 20, "t": 50, "b": 45}

_MAX_LABEL = 12


def visible(token: str) -> str:
    """A token's text with its whitespace made visible, NOT escaped: newline → ↵ (and a real
    line break), tab → ⇥, a token of spaces only → ␣ per space, the empty token → ∅."""
    if token == "":
        return "∅"
    if token.strip(" ") == "":
        return "␣" * len(token)
    return token.replace("\r", "␍").replace("\t", "⇥").replace("\n", "↵\n")


def label(token: str, limit: int = _MAX_LABEL) -> str:
    """A short one-line label for a figure axis (``tree.short_label``; the figure builders escape)."""
    return short_label(token, limit)


def number(x: float | None) -> str:
    """A probability for display: 4 significant digits, tiny values in scientific notation."""
    if x is None:
        return "?"
    if x == 0 or x >= 1e-3:
        return f"{x:.4g}"
    return f"{x:.2e}"


def _tip(span: TokenSpan, t: Mapping[str, str]) -> str:
    kind = t[span.kind]
    if span.q is not None:
        return t["tip_draft"].format(
            round=span.round,
            slot=span.slot + 1,
            kind=kind,
            q=number(span.q),
            p=number(span.p),
            a=number(span.accept_prob),
        )
    tip = t["tip_token"].format(round=span.round, slot=span.slot + 1, kind=kind)
    if span.p is not None:
        tip += t["tip_p"].format(p=number(span.p))
    return tip


def _css_class(kind: str) -> str:
    """A chip's classes: its kind; a draft never examined is also a (discarded) rejected one."""
    return "rejected void" if kind == "void" else kind


def span_html(span: TokenSpan, token: str | None, text: Mapping[str, str], selected: bool = False) -> str:
    """One coloured token: ``<span class="sd-tok KIND" data-round="…" data-slot="…" title="…">``
    with its escaped text; round and slot let a click open that position in the inspector.

    `token` None is a piece of a character that a later token completes: shown as "·", marked
    ``piece`` (:func:`piece_note_html` says why).
    """
    t = pick(text, KEYS, "span_html")
    cls = _css_class(span.kind) + (" piece" if token is None else "")
    style = []
    if token is None:  # a piece: sit close to the token that completes the character
        style.append("margin-right:0;padding-right:0")
    if selected:
        style.append(f"outline:2px solid {palette.INK};outline-offset:1px")
    attr = f' style="{";".join(style)}"' if style else ""
    tip = _tip(span, t) + (t["tip_piece"] if token is None else "")
    shown = "·" if token is None else visible(token)
    return (
        f'<span class="sd-tok {cls}" data-round="{span.round}" data-slot="{span.slot}" '
        f'title="{html.escape(tip, quote=True)}"{attr}>'
        f"{html.escape(shown)}</span>"
    )


def tokens_html(
    prompt: str,
    items: Sequence[TokenSpan],
    text_of: Callable[[int], str],
    text: Mapping[str, str],
    selected_round: int | None = None,
    prompt_chars: int = 400,
) -> str:
    """The prompt (grey, its last `prompt_chars` characters) and the coloured spans, as HTML."""
    t = pick(text, KEYS, "tokens_html")
    shown = prompt[-prompt_chars:] if prompt_chars > 0 else ""
    head = ""
    if len(prompt) > len(shown):
        earlier = html.escape(t["earlier"].format(n=len(prompt) - len(shown)))
        head = f'<span class="sd-tok prompt">{earlier}</span>'
    parts = [head]
    if shown:
        parts.append(f'<span class="sd-tok prompt">{html.escape(shown)}</span>')
    shown = readable([text_of(s.token) for s in items], [s.kind not in ("rejected", "void") for s in items])
    parts += [span_html(s, x, t, s.round == selected_round) for s, x in zip(items, shown, strict=True)]
    note = piece_note_html(t) if None in shown else ""
    return f'<div class="sd-tokens">{"".join(parts)}</div>{note}'


def piece_note_html(text: Mapping[str, str]) -> str:
    """The one line under a text with pieces of characters ("·" chips): why a character (a
    Chinese one: 3 bytes in UTF-8) can take several tokens of a byte-level tokenizer."""
    t = pick(text, KEYS, "piece_note_html")
    mark = '<span class="sd-piece-mark">·</span>'
    return f'<div class="sd-piece-note">{mark} {html.escape(t["piece_note"])}</div>'


def legend_html(
    kinds: Sequence[str], text: Mapping[str, str], counts: Mapping[str, int] | None = None
) -> str:
    """A legend: one sample chip per kind (in its tint and its line, assets/style.css), with how
    many tokens of that kind are shown, then a sentence naming each state's line."""
    t = pick(text, KEYS, "legend_html")
    chips = []
    for kind in kinds:
        n = f" · {counts[kind]}" if counts is not None and kind in counts else ""
        chips.append(f'<span class="sd-tok {_css_class(kind)}">{html.escape(t[kind])}{n}</span>')
    note = f'<span class="sd-legend-note">{html.escape(t["legend_lines"])}</span>'
    return f'<div class="sd-legend">{"".join(chips)}{note}</div>'


def timeline_figure(tl: Timeline, selected: int | None, text: Mapping[str, str]) -> go.Figure:
    """One bar per round: drafted (grey, behind), accepted (green) and the round's last token
    (amber corrected / blue bonus / grey target step when nothing was drafted) stacked on it,
    so the top is the tokens committed. Each state's bar also has its own fill pattern."""
    t = pick(text, KEYS, "timeline_figure")
    if not tl.rounds:
        raise ValueError("timeline_figure needs at least one round.")
    x = np.array(tl.rounds)
    accepted = np.array(tl.accepted)
    last = np.array(tl.committed) - accepted
    data = [
        bar(
            x=x,
            y=tl.drafted,
            width=0.9,
            name=t["drafted"],
            customdata=x,
            marker={
                "color": palette.rgba(palette.NEUTRAL, 0.45),
                "line": {"color": palette.TARGET_ONLY, "width": 1},
            },
            hovertemplate=f"{t['round_axis']} %{{x}}: {t['drafted']} %{{y}}<extra></extra>",
        ),
        bar(
            x=x,
            y=accepted,
            width=0.55,
            name=t["accepted"],
            customdata=x,
            marker=palette.state_bar("accepted"),
            hovertemplate=f"{t['round_axis']} %{{x}}: {t['accepted']} %{{y}}<extra></extra>",
        ),
    ]
    for kind in ("corrected", "bonus", "target"):
        mask = np.array([k == kind for k in tl.last_kind])
        if not mask.any():
            continue
        data.append(
            bar(
                x=x[mask],
                y=last[mask],
                base=accepted[mask],
                width=0.55,
                name=t[kind],
                customdata=x[mask],
                marker=palette.state_bar(kind),
                hovertemplate=f"{t['round_axis']} %{{x}}: {t[kind]}<extra></extra>",
            )
        )
    if selected is not None and selected in tl.rounds:
        i = tl.rounds.index(selected)
        top = max(tl.drafted[i], tl.committed[i])
        data.append(
            scatter(
                x=[selected],
                y=[top + 0.35],
                mode="markers",
                name=t["selected"],
                hoverinfo="skip",
                marker={"symbol": "triangle-down", "size": 13, "color": palette.INK},
            )
        )
    ymax = max(max(tl.drafted), max(tl.committed)) + 1
    layout = palette.base_layout(
        barmode="overlay", height=280, bargap=0.1, clickmode="event+select", margin=_NARROW_MARGIN
    )
    layout["xaxis"] = {"title": {"text": t["round_axis"]}, "showgrid": False}
    layout["yaxis"] = axis(t["tokens_axis"], range=[0, ymax], dtick=1 if ymax <= 12 else 2)
    return figure(data, layout)


def speed_figure(
    curves: Sequence[tuple[str, np.ndarray, np.ndarray, str]], text: Mapping[str, str]
) -> go.Figure:
    """Tokens generated against model time, one line per run: (name, seconds, tokens, colour)."""
    t = pick(text, KEYS, "speed_figure")
    data = [
        scatter(
            x=seconds,
            y=tokens,
            mode="lines",
            name=html.escape(name),
            line={"color": colour, "width": 3, "shape": "hv"},
            hovertemplate=f"%{{x:.2f}} s: %{{y}} {t['tokens_hover']}<extra></extra>",
        )
        for name, seconds, tokens, colour in curves
    ]
    layout = palette.base_layout(height=280, margin=_NARROW_MARGIN)
    layout["xaxis"] = axis(t["seconds_axis"], rangemode="tozero")
    layout["yaxis"] = axis(t["generated_axis"], rangemode="tozero")
    return figure(data, layout)


def row_bars(
    labels: Sequence[str],
    p: Sequence[float] | np.ndarray,
    chosen: int | None,
    text: Mapping[str, str],
) -> go.Figure:
    """The target's distribution p at a position without a draft (bonus or target-only token);
    bar `chosen` (the emitted token) is outlined."""
    t = pick(text, KEYS, "row_bars")
    probs = np.asarray(p, dtype=np.float64)
    if probs.shape != (len(labels),):
        raise ValueError("row_bars needs one probability per label.")
    widths = [3 if i == chosen else 0 for i in range(len(labels))]
    bars = bar(
        x=list(range(len(labels))),
        y=probs,
        marker={"color": palette.TARGET, "line": {"color": palette.INK, "width": widths}},
        customdata=[html.escape(s) for s in labels],
        name="p",
        hovertemplate="<b>%{customdata}</b>: %{y:.4f}<extra></extra>",
    )
    layout = palette.base_layout(height=320, showlegend=False)
    if chosen is not None:
        y = float(probs[chosen])
        layout["annotations"] = [
            {"x": chosen, "y": y, "text": t["chosen"], "showarrow": True, "arrowhead": 2, "ay": -30}
        ]
    layout["xaxis"] = {
        "tickmode": "array",
        "tickvals": list(range(len(labels))),
        "ticktext": [html.escape(s) for s in labels],
        "title": {"text": t["row_axis"]},
    }
    layout["yaxis"] = axis(t["probability"], rangemode="tozero")
    return figure([bars], layout)
