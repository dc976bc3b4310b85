"""One colour per concept, shared by every figure (and mirrored in assets/style.css)."""

TARGET = "#4C5FD5"  # p
DRAFT = "#F28E2B"  # q
OVERLAP = "#59A14F"  # min(p, q)
DEFICIT = "#4E79A7"  # (p - q)+
SURPLUS = "#E15759"  # (q - p)+
REMOVED = "#C9CED8"  # tokens a sampling filter cut
KEPT = "#4C5FD5"
ACCEPTED = "#2E9E5B"
REJECTED = "#D64545"
CORRECTED = "#E09B1A"
BONUS = "#3A7BD5"
TARGET_ONLY = "#8A93A6"
GRID = "#E3E7F0"
FONT = "Inter, 'Noto Sans SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"

KIND_COLOURS = {
    "accepted": ACCEPTED,
    "rejected": REJECTED,
    "corrected": CORRECTED,
    "bonus": BONUS,
    "target": TARGET_ONLY,
}


def base_layout(**overrides: object) -> dict[str, object]:
    """Layout shared by all figures: white background, light grid, legible fonts."""
    layout: dict[str, object] = {
        "template": "plotly_white",
        "font": {"family": FONT, "size": 14},
        "margin": {"l": 50, "r": 20, "t": 50, "b": 50},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        "hoverlabel": {"font": {"family": FONT}},
    }
    layout.update(overrides)
    return layout
