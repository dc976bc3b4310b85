"""The handouts in a real browser: each of the three sheets, in English and Chinese, prints on
exactly one page of A4 and of Letter, without the sidebar, the app's header or the page's
controls, with no formula cut off at the edge; the rule sheet's two figures print side by side;
and the teach page's handout links open the right sheet."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from specdec_core.course.handouts import HANDOUTS
from support.browser import wait_for_page, wait_not_stale

TIMEOUT = 45_000
TITLES = {
    "en": {
        "rule": "Speculative sampling: the acceptance rule and the residual",
        "speedup": "Expected tokens per round and the speedup",
        "proof": "Why the whole text follows the target's law",
    },
    "zh": {
        "rule": "投机采样：接受规则与残差",
        "speedup": "每轮期望 token 数与加速比",
        "proof": "为什么整段文本都服从目标模型的分布",
    },
}
#: Display formulas and tables wider than the box they sit in (they would print cut off).
_CUT = """() => Array.from(document.querySelectorAll(
    '.st-key-handout_sheet .katex-display, .st-key-handout_sheet table'))
    .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right >
                 document.querySelector('.st-key-handout_sheet').getBoundingClientRect().right + 1)
    .map(e => e.textContent.slice(0, 60))"""


def _pages(pdf: bytes) -> int:
    """Pages of a PDF, counted from its raw page objects (no PDF library needed)."""
    return len(re.findall(rb"/Type\s*/Page(?!s)", pdf))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("handout", HANDOUTS)
def test_a_handout_prints_on_one_page_without_the_app_around_it(
    page: Page, app_url: str, handout: str, lang: str, screenshot_dir
):
    page.goto(f"{app_url}/handouts?handout={handout}&lang={lang}")
    wait_for_page(page)
    wait_not_stale(page)
    sheet = page.locator(".st-key-handout_sheet")
    expect(sheet.locator("h2").first).to_have_text(TITLES[lang][handout], timeout=TIMEOUT)
    expect(sheet.locator(".katex").first).to_be_visible()  # the formulas are typeset
    figures = sheet.locator(".js-plotly-plot")
    if handout == "rule":
        expect(figures).to_have_count(2, timeout=TIMEOUT)
        expect(figures.nth(1).locator(".main-svg").first).to_be_visible(timeout=TIMEOUT)

    page.emulate_media(media="print")
    expect(page.get_by_test_id("stSidebar")).to_be_hidden()
    expect(page.get_by_test_id("stHeader")).to_be_hidden()
    expect(page.locator(".st-key-noprint_handout_controls")).to_be_hidden()
    expect(page.get_by_test_id("stMain").locator("h1")).to_be_hidden()  # the page's own title
    expect(sheet.locator("h2").first).to_be_visible()
    assert page.evaluate(_CUT) == []
    if handout == "rule":  # side by side, as drawn: a figure prints at the size it was drawn
        left, right = figures.nth(0).bounding_box(), figures.nth(1).bounding_box()
        assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"]
    for paper in ("A4", "Letter"):
        pdf = page.pdf(path=str(screenshot_dir / f"handout-{handout}-{lang}-{paper}.pdf"), format=paper)
        assert _pages(pdf) == 1, (handout, lang, paper)


def test_the_teach_pages_handout_link_opens_its_sheet(page: Page, app_url: str):
    page.goto(f"{app_url}/teach?lang=en")
    wait_for_page(page)
    wait_not_stale(page)
    link = page.get_by_test_id("stMain").locator('[data-testid="stPageLink"] a[href*="handout=proof"]').first
    link.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    link.click()
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("Handouts", timeout=TIMEOUT)
    wait_not_stale(page)
    expect(page.locator(".st-key-handout_sheet h2").first).to_have_text(
        TITLES["en"]["proof"], timeout=TIMEOUT
    )
    assert "handout=proof" in page.url
