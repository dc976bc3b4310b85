"""The token states are told apart by more than colour, and their colours pass WCAG and the
three common colour-vision deficiencies: checked on viz/palette.py AND on the colours written in
assets/style.css (read from the file, so the two cannot drift apart)."""

import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from specdec_core.live.text import SPAN_KINDS
from specdec_core.viz import palette
from tests import colour_maths as cc

ROOT = Path(__file__).resolve().parents[1]
STYLE = (ROOT / "assets/style.css").read_text(encoding="utf-8")
VISIONS = (None, *cc.MACHADO)  # normal vision, then each simulated deficiency

#: Sharma, Wu & Dalal (2005), Table 1: L1 a1 b1, L2 a2 b2, ΔE2000, all 34 pairs.
SHARMA = np.array(
    [
        [50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425],
        [50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615],
        [50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412],
        [50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, -1.1848, -84.8006, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, -0.9009, -85.5211, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669],
        [50.0000, -1.0000, 2.0000, 50.0000, 0.0000, 0.0000, 2.3669],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0010, 7.1792],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0012, 7.2195],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0009, -2.4900, 4.8045],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0010, -2.4900, 4.8045],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0011, -2.4900, 4.7461],
        [50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065],
        [50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492],
        [50.0000, 2.5000, 0.0000, 61.0000, -5.0000, 29.0000, 22.8977],
        [50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030],
        [50.0000, 2.5000, 0.0000, 58.0000, 24.0000, 15.0000, 19.4535],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.1736, 0.5854, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.2972, 0.0000, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 1.8634, 0.5757, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.2592, 0.3350, 1.0000],
        [60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644],
        [63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630],
        [61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731],
        [35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645],
        [22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373],
        [36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146],
        [90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441],
        [90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381],
        [6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377],
        [2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082],
    ],
    dtype=np.float64,
)

#: The states' mark colours in the palette, by span kind.
PALETTE_STATES = {kind: palette.KIND_COLOURS[kind] for kind in SPAN_KINDS}
#: The stylesheet's custom property of each state.
CSS_VARS = {
    "accepted": "--sd-accepted",
    "rejected": "--sd-rejected",
    "corrected": "--sd-corrected",
    "bonus": "--sd-bonus",
    "target": "--sd-target-step",
    "void": "--sd-void",
}
#: A chip's classes for each kind (viz/live.py writes "rejected void" for a draft never examined).
CHIP_CLASSES = {kind: ("rejected", "void") if kind == "void" else (kind,) for kind in SPAN_KINDS}


def css_rules(css: str) -> list[tuple[str, dict[str, str]]]:
    """(selector, declarations) of every plain rule of `css`, in order (comments removed)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        decls = dict(
            (name.strip().lower(), value.strip())
            for name, value in (d.split(":", 1) for d in body.split(";") if ":" in d)
        )
        rules += [(sel.strip(), decls) for sel in selectors.split(",")]
    return rules


def chip_style(classes: tuple[str, ...], css: str = STYLE) -> dict[str, str]:
    """The declarations a ``<span class="sd-tok …">`` with `classes` gets from the rules that
    name only its classes (``.sd-tok``, ``.sd-tok.accepted`` …), by specificity then order."""
    own = {"sd-tok", *classes}
    matched = []
    for order, (sel, decls) in enumerate(css_rules(css)):
        names = re.fullmatch(r"((?:\.[a-z-]+)+)", sel)
        if names and set(names.group(1).lstrip(".").split(".")) <= own and "sd-tok" in sel:
            matched.append((sel.count("."), order, decls))
    style: dict[str, str] = {}
    for _, _, decls in sorted(matched, key=lambda m: m[:2]):
        style.update(decls)
    return style


def css_variables(css: str = STYLE) -> dict[str, str]:
    return dict(re.findall(r"(--sd-[a-z-]+)\s*:\s*(#[0-9A-Fa-f]{6})", css))


def line_cue(style: dict[str, str]) -> tuple[str, str, str]:
    """A chip's second cue: its decoration line and style, and its border's style."""
    border = style.get("border", "")
    border_style = next((w for w in border.split() if w in ("solid", "dashed", "dotted", "double")), "")
    return (
        style.get("text-decoration-line", "none"),
        style.get("text-decoration-style", "solid"),
        border_style,
    )


def test_ciede2000_matches_sharmas_published_pairs_both_ways():
    lab1, lab2, want = SHARMA[:, :3], SHARMA[:, 3:6], SHARMA[:, 6]
    assert np.abs(cc.ciede2000(lab1, lab2) - want).max() < 1e-4
    assert np.abs(cc.ciede2000(lab2, lab1) - want).max() < 1e-4


def test_srgb_luminance_contrast_and_lab_against_known_values():
    grey = np.linspace(0, 1, 11)
    assert np.allclose(cc.to_srgb(cc.to_linear(grey)), grey)
    assert cc.contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert cc.contrast("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)  # WCAG's grey at 4.5
    assert np.allclose(cc.lab(cc.to_linear(cc.srgb("#FF0000"))), [53.24, 80.09, 67.20], atol=0.01)
    assert np.allclose(cc.lab(np.ones(3)), [100, 0, 0], atol=1e-6)


def test_machado_matrices_keep_greys_and_merge_red_with_green_for_the_red_green_deficiencies():
    for matrix in cc.MACHADO.values():
        assert np.allclose(matrix.sum(axis=1), 1.0, atol=1e-5)  # white and every grey stay put
    red, green = "#D64545", "#2E9E5B"  # the accepted/rejected pair the palette once used
    assert cc.difference(red, green) > 40
    assert cc.difference(red, green, "deuteranopia") < 10
    assert cc.difference(red, green, "tritanopia") > 10


def test_the_checks_catch_the_colours_they_replaced():
    assert cc.contrast("#E09B1A", palette.WHITE) < 3  # the old corrected amber, 2.37:1
    assert cc.contrast("#B8BEC9", palette.WHITE) < 3  # the old void grey, 1.87:1
    old = {"accepted": "#2E9E5B", "rejected": "#D64545", "corrected": "#E09B1A", "bonus": "#3A7BD5"}
    assert cc.closest_pair(old, "deuteranopia")[0] < 10


@pytest.mark.parametrize("source", ["palette", "style.css"])
def test_state_colours_are_marks_of_3_to_1_and_distinct_under_every_colour_vision(source):
    variables = css_variables()
    states = PALETTE_STATES if source == "palette" else {k: variables[v] for k, v in CSS_VARS.items()}
    assert set(states) == set(SPAN_KINDS)
    for kind, colour in states.items():
        assert cc.contrast(colour, palette.WHITE) >= 3.0, (kind, colour)
    for vision in VISIONS:
        gap, a, b = cc.closest_pair(states, vision)
        assert gap >= 10.0, (vision, a, b, gap)


def test_the_stylesheet_writes_the_palettes_state_colours():
    variables = css_variables()
    assert {k: variables[v].upper() for k, v in CSS_VARS.items()} == PALETTE_STATES


@pytest.mark.parametrize("kind", [*SPAN_KINDS, "prompt"])
def test_chip_text_reaches_4_5_to_1_on_its_tint(kind):
    style = chip_style(CHIP_CLASSES.get(kind, (kind,)))
    background = style.get("background", palette.WHITE)
    assert cc.contrast(style["color"], background) >= 4.5, (kind, style)


def test_palette_text_colours_reach_4_5_to_1_on_their_tints():
    pairs = [
        (palette.ACCEPTED_TEXT, palette.ACCEPTED_TINT),
        (palette.REJECTED_TEXT, palette.REJECTED_TINT),
        (palette.CORRECTED_TEXT, palette.CORRECTED_TINT),
        (palette.BONUS_TEXT, palette.BONUS_TINT),
        (palette.VOID_TEXT, palette.VOID_TINT),
    ]
    for text, tint in pairs:
        assert cc.contrast(text, tint) >= 4.5, (text, tint)


def test_every_chip_state_has_a_line_of_its_own_in_the_stylesheet():
    cues = {kind: line_cue(chip_style(CHIP_CLASSES[kind])) for kind in SPAN_KINDS}
    assert len(set(cues.values())) == len(cues), cues
    assert cues["rejected"][0] == "line-through" and cues["accepted"][0] == "underline"


def test_chip_style_reads_specificity_and_order():
    css = ".sd-tok { color: #111111; } .sd-tok.a.b { color: #333333; } .sd-tok.a { color: #222222; }"
    assert chip_style(("a",), css)["color"] == "#222222"
    assert chip_style(("a", "b"), css)["color"] == "#333333"
    assert chip_style(("c",), css)["color"] == "#111111"


def test_each_state_has_its_own_marker_symbol_and_fill_pattern():
    for table in (palette.STATE_SYMBOLS, palette.STATE_PATTERNS):
        assert set(table) == set(SPAN_KINDS)
        assert len(set(table.values())) == len(table)


def test_closest_pair_names_the_pair():
    gap, a, b = cc.closest_pair({"x": "#000000", "y": "#010101", "z": "#FFFFFF"})
    assert (a, b) == ("x", "y") and gap < 1
    with pytest.raises(ValueError):
        cc.closest_pair({"x": "#000000"})
    assert all(cc.difference(x, y) > 0 for x, y in combinations(PALETTE_STATES.values(), 2))
