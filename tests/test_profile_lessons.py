"""Every hardware-dependent number of the cost, race, compare, About, tree-drafts, notation,
self-speculation, handouts and teaching-route lessons comes from this machine's profile
(specdec_core.live.machine_profile), else the memory-bound reference: none is written into their
lesson files, and each page fills every placeholder and names where its figures come from."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator

import pytest

from pages.common.lesson import PLACEHOLDER
from specdec_core.live.machine_profile import HARDWARE_FILE
from support.apptest import ROOT, open_page

LESSONS = ROOT / "lessons"
LANGS = ("en", "zh")
PAGES = ("cost", "race", "about", "compare", "tree_drafts", "notation", "self_spec", "handouts", "teach")

#: What a hardware-dependent quantity looks like written out: a draft's cost c, the β or the
#: model of the verification cost, a verification in steps, a step time, a measured speedup range.
HARDWARE = (
    r"(?<![\w\\])c\s*(?:=|≈|\\approx)\s*\d\.\d+",
    r"(?:\\beta|β)\s*=\s*0\.\d+",
    r"1 \+ 0\.\d+\s*(?:\\gamma|·\s*γ|γ)",
    r"\d\.\d+\s*(?:single |decode )?steps?\b",
    r"\d\.\d+\s*(?:个单步|步)",
    r"\d+(?:\.\d+)?\s*(?:ms|毫秒)\b",
    r"\d\.\d+\$?\s*[–-]\s*\$?\d\.\d+\s*\$?\s*(?:\\times|×|倍)",
)
#: Matches that are no machine's figure, each with why it stays.
NOT_HARDWARE = {
    # made-up drafts of the "choosing a draft" worked example
    ("cost", "c = 0.01"),
    ("cost", "c = 0.05"),
    # the given draft of the Notation page's worked example (and of the handout and route step
    # that quote it) and the given head of the self-speculation one, each said to be given
    ("notation", "c = 0.05"),
    ("self_spec", "c = 0.05"),
    # a 70B model on an H100, from the data sheet's figures in the same paragraph (checked below)
    ("cost", "42 ms"),
    ("teach", "42 ms"),  # the same example, read aloud in the route's first step
    ("cost", "36 ms"),
    ("cost", "181 ms"),
    # the engine's weight-based estimate for the bf16 copy: the same on every machine
    ("compare", "c \\approx 0.65"),
}


def _texts(lang: str, page: str) -> Iterator[tuple[str, str]]:
    """The page's lesson text (lines joined) and every string of its TOML outside the quiz
    blocks and the route's concept check (a question states its own numbers), as (where, text)."""
    md = (LESSONS / lang / f"{page}.md").read_text("utf-8")
    yield "md", re.sub(r"(?<=\S)\n(?=\S)", " ", md)
    table = tomllib.loads((LESSONS / lang / f"{page}.toml").read_text("utf-8"))
    table.pop("quiz", None)
    table.get("check", {}).pop("questions", None)

    def walk(node: object, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, f"{where}.{k}" if where else k)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v, where)
        elif isinstance(node, str):
            yield f"toml:{where}", node

    yield from walk(table, "")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_no_hardware_figure_is_written_into_the_lesson(lang, page):
    found = [
        (where, m.group(0))
        for where, text in _texts(lang, page)
        for pattern in HARDWARE
        for m in re.finditer(pattern, text)
        if (page, m.group(0)) not in NOT_HARDWARE
    ]
    assert not found, f"fill these from the profile ({{{{name}}}} placeholders): {found}"


def test_the_detector_finds_the_figures_it_replaced():
    """The patterns catch the literals the lessons used to carry (so the test above can fail)."""
    old = [
        "costs more than half a target step ($c \\approx 0.56$ on this course's CPU)",
        "a 5-token verification took about 1.4 single steps",
        "preset β = 0.1 runs through that point",
        "the measured verification $v = 1 + 0.1\\gamma = 1.4$",
        "(measured: $1.08$–$1.28\\times$)",
        "idle, a decode step takes about 22 ms",
        "验证 5 个 token 约花 1.4 个单步",
    ]
    for text in old:
        assert any(re.search(p, text) for p in HARDWARE), text


def test_the_h100_example_uses_the_data_sheet_figures():
    h100 = next(h for h in json.loads(HARDWARE_FILE.read_text("utf-8"))["hardware"] if h["key"] == "h100")
    for lang in LANGS:
        text = dict(_texts(lang, "cost"))["md"]
        assert f"{h100['bandwidth_gbs'] / 1000:.2f} TB/s" in text or "3.35 TB/s" in text
        assert f"{h100['compute_gflops'] / 1000:.0f}" in text
        assert f"140 / {h100['bandwidth_gbs']:.0f}" in text  # 140 GB of weights at its bandwidth


#: Each page that quotes the profile, with the link that shows its figures (the speedup handout).
QUERIES = {
    "race": {},
    "about": {},
    "compare": {},
    "notation": {},
    "self_spec": {},
    "handouts": {"handout": "speedup"},
    "teach": {},
}
#: What each page shows of the pinned profile: the bf16 copy's c, or β through its 5-row
#: verification (1.3 steps: β = 0.075), each a figure no other source gives.
PINNED = {
    "race": "0.71",
    "about": "0.71",
    "compare": "0.71",
    "notation": "\\beta = 0.075",
    "self_spec": "0.71",
    "handouts": "1 + 0.075·γ",
    "teach": "β = 0.075",
}


def _shown(page: str, lang: str) -> str:
    at = open_page(page, lang, query=QUERIES[page])
    assert not at.exception, page
    return "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(PINNED))
def test_each_page_fills_its_figures_from_the_profile_and_names_it(lang, page, pinned_profile):
    text = _shown(page, lang)
    assert not PLACEHOLDER.search(text)
    assert "Pinned CPU" in text and PINNED[page] in text


@pytest.mark.parametrize("lang", LANGS)
def test_before_any_model_loads_the_pages_name_the_memory_bound_reference(lang):
    reference = tomllib.loads((LESSONS / lang / "common.toml").read_text("utf-8"))["profile"]["reference"]
    for page in QUERIES:
        text = _shown(page, lang)
        assert not PLACEHOLDER.search(text) and reference in text, page
        assert "Pinned CPU" not in text, page
