"""Every colour comes from specdec_core/viz/palette.py: no other module of viz or pages writes
a colour literal (hex, rgb()/rgba() or a named colour) in its strings."""

import ast
import re
from pathlib import Path

import pytest

from specdec_core.viz import palette

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for p in [*(ROOT / "specdec_core/viz").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]
    if p.name != "palette.py"
)
COLOUR = re.compile(r"#[0-9A-Fa-f]{6}\b|#[0-9A-Fa-f]{3}\b|\brgba?\(|\b(?:white|black)\b", re.IGNORECASE)


def colour_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string constant in `source` that writes a colour."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and COLOUR.search(node.value)
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_colour_literal_outside_the_palette(path):
    assert colour_literals(path.read_text("utf-8")) == []


def test_the_check_sees_hex_rgb_and_named_colours_even_inside_f_strings():
    found = colour_literals(
        'a = "#1F2433"\nb = f"outline:2px solid #abc;{x}"\nc = "rgba(0,0,0,0)"\nd = "white"\n'
    )
    assert sorted(line for line, _ in found) == [1, 2, 3, 4]
    assert colour_literals('a = "#{j} token"\nb = palette.rgba(palette.WHITE, 0.5)\nc = "whitespace"\n') == []


def test_rgba_and_shades():
    assert palette.rgba("#2E9E5B", 0.45) == "rgba(46,158,91,0.45)"
    assert palette.shades("#000000", "#FF0080", 3) == ["#000000", "#800040", "#FF0080"]
    assert palette.shades(palette.ALPHA_LIGHT, palette.ALPHA_DARK, 2) == [
        palette.ALPHA_LIGHT,
        palette.ALPHA_DARK,
    ]
