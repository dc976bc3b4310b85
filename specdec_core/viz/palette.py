"""One colour per concept, shared by every figure (and mirrored in assets/style.css).

Every colour a figure or a page draws comes from here: no module outside this one writes a
hex or rgb() literal (tests/test_viz_palette.py checks).
"""

from __future__ import annotations

import numpy as np

TARGET = "#4C5FD5"  # p
DRAFT = "#F28E2B"  # q
OVERLAP = "#59A14F"  # min(p, q)
DEFICIT = "#4E79A7"  # (p - q)+
SURPLUS = "#E15759"  # (q - p)+
NEUTRAL = "#C9CED8"  # context only: cached before a round, a theory bar, a faded branch
REMOVED = NEUTRAL  # tokens a sampling filter cut
KEPT = "#4C5FD5"
#: The token states. Each reaches 3:1 against the white page as a mark (WCAG 1.4.11), and every
#: two of them stay ΔE2000 ≥ 10 apart with normal vision and with simulated protanopia,
#: deuteranopia and tritanopia (tests/test_colour_checks.py, which also reads the
#: copies in assets/style.css). Colour is never their only cue: figures add STATE_SYMBOLS or
#: STATE_PATTERNS, the token chips a line style.
ACCEPTED = "#22A36C"
REJECTED = "#C83435"
CORRECTED = "#C28508"
BONUS = "#3576D8"
TARGET_ONLY = "#687191"  # a plain target step
VOID = "#8D9199"  # drafts after a rejection: never examined
HIGHLIGHT = "#F2B400"  # a sampled path drawn on top
BEFORE = "#3B4256"  # heights before a sampling step; the chosen temperature
GRID = "#E3E7F0"
INK = "#1F2433"  # outlines, markers and rules drawn in the text colour
MUTED = "#6B7280"  # secondary text
WHITE = "#FFFFFF"
PALE = "#F4F6FB"  # background of cells that are only context
TRANSPARENT = "rgba(0,0,0,0)"

#: Light fills behind a cell of each colour.
TARGET_TINT = "#E4E8FA"
DRAFT_TINT = "#FDEBD9"
ACCEPTED_TINT = "#DDF3E5"
REJECTED_TINT = "#FBE0E0"
CORRECTED_TINT = "#FCEBC8"
BONUS_TINT = "#DCE8FB"
VOID_TINT = "#EEEFF2"
#: Text on a state's tint (≥ 4.5:1 there; the token chips of assets/style.css use the same pairs).
ACCEPTED_TEXT = "#17603A"
REJECTED_TEXT = "#A12B2B"
CORRECTED_TEXT = "#8A5A00"
BONUS_TEXT = "#1F4E9A"
VOID_TEXT = "#4B5263"

#: The lightest and darkest of the α lines (one shade each, from light to dark).
ALPHA_LIGHT = "#B7C0EE"
ALPHA_DARK = "#26339A"

#: One colour per draft in a race, in race order.
SERIES: tuple[str, ...] = (ACCEPTED, DRAFT, TARGET, "#B07AA1", "#76B7B2", SURPLUS, "#9C755F")

#: One colour per token line (the temperature sweep), cycled.
TOKEN_LINES: tuple[str, ...] = (
    "#1F77B4",
    "#FF7F0E",
    "#2CA02C",
    "#D62728",
    "#9467BD",
    "#8C564B",
    "#E377C2",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#66C2A5",
    "#FC8D62",
    "#8DA0CB",
    "#E78AC3",
    "#A6D854",
    "#FFD92F",
    "#E5C494",
    "#B3B3B3",
)

FONT = "Inter, 'Noto Sans SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"


def rgba(colour: str, alpha: float) -> str:
    """`colour` (``#RRGGBB``) with opacity `alpha`, as plotly's ``rgba(r,g,b,a)``."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def shades(light: str, dark: str, n: int) -> list[str]:
    """`n` colours evenly from `light` to `dark` (both ``#RRGGBB``)."""
    ends = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in (light, dark)], dtype=np.float64)
    steps = np.round(ends[0] + (ends[1] - ends[0]) * np.linspace(0, 1, n)[:, None]).astype(int)
    return ["#{:02X}{:02X}{:02X}".format(*row) for row in steps]


KIND_COLOURS = {
    "accepted": ACCEPTED,
    "rejected": REJECTED,
    "corrected": CORRECTED,
    "bonus": BONUS,
    "target": TARGET_ONLY,
    "void": VOID,
}

#: A second cue per state beside its colour, for figures: a marker shape (plotly
#: ``marker.symbol``) for points, a fill pattern (``marker.pattern.shape``) for bars and cells.
#: Each state has its own; accepted, the most common, keeps solid markers and bars.
STATE_SYMBOLS = {
    "accepted": "circle",
    "rejected": "x",
    "corrected": "diamond",
    "bonus": "star",
    "target": "square",
    "void": "circle-open",
}
STATE_PATTERNS = {
    "accepted": "",
    "rejected": "x",
    "corrected": "/",
    "bonus": ".",
    "target": "-",
    "void": "\\",
}
#: Text drawn in a state's colour on its tint or on white: the state's dark shade (≥ 4.5:1).
STATE_TEXT = {
    "accepted": ACCEPTED_TEXT,
    "rejected": REJECTED_TEXT,
    "corrected": CORRECTED_TEXT,
    "bonus": BONUS_TEXT,
    "target": INK,
    "void": VOID_TEXT,
}


def state_bar(kind: str) -> dict[str, object]:
    """A bar's ``marker`` for token state `kind`: its colour, overlaid with its white pattern."""
    pattern = {"shape": STATE_PATTERNS[kind], "fillmode": "overlay", "fgcolor": WHITE, "solidity": 0.3}
    return {"color": KIND_COLOURS[kind], "pattern": pattern}


def state_marker(kind: str, size: int = 10) -> dict[str, object]:
    """A point's ``marker`` for token state `kind`: its colour and its symbol."""
    symbol = STATE_SYMBOLS[kind]
    edge = KIND_COLOURS[kind] if symbol.endswith("-open") else WHITE
    return {
        "symbol": symbol,
        "size": size,
        "color": KIND_COLOURS[kind],
        "line": {"color": edge, "width": 1.5},
    }


#: The figures' plotly template: plotly_white cut to what 2-D figures use (see below).
TEMPLATE = "specdec"
_KEPT_TRACES = ("bar", "scatter", "heatmap", "contour")


def _register_template() -> None:
    """Register :data:`TEMPLATE` and make it plotly's default when the default is plotly's own.

    A template named in a layout is validated and copied into every figure; plotly_white
    holds styles for two dozen trace kinds, and that copy was most of a lesson rerun. The
    default template is attached to a new figure by reference, and this one keeps only the
    layout of 2-D plots and the styles of the traces drawn here, so the figures look as before.
    """
    import plotly.graph_objects as go
    import plotly.io as pio

    if TEMPLATE not in pio.templates:
        white = pio.templates["plotly_white"].to_plotly_json()
        layout = {k: v for k, v in white["layout"].items() if k not in ("polar", "ternary", "scene", "geo")}
        data = {k: v for k, v in white["data"].items() if k in _KEPT_TRACES}
        pio.templates[TEMPLATE] = go.layout.Template(layout=layout, data=data)
    if pio.templates.default == "plotly":
        pio.templates.default = TEMPLATE


def base_layout(**overrides: object) -> dict[str, object]:
    """Layout shared by all figures: white background, light grid, legible fonts."""
    import plotly.io as pio

    layout: dict[str, object] = {
        **({} if pio.templates.default == TEMPLATE else {"template": TEMPLATE}),
        "font": {"family": FONT, "size": 14},
        # Margins wide enough for the axis titles, tick labels and legends the figures usually
        # have (plotly would otherwise widen a margin by drawing the whole figure again).
        "margin": {"l": 64, "r": 24, "t": 50, "b": 60},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        "hoverlabel": {"font": {"family": FONT}},
    }
    layout.update(overrides)
    return layout


_register_template()
