"""The lessons in a real browser: every page renders, a slider moves a number, 中文 works.

Runs against `streamlit run app.py` in Debian's chromium; screenshots of every page are
saved under artifacts/screenshots (the path is printed).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from pages.common.nav import PAGES
from support.browser import COUNT_MESSAGES, messages, reset_messages, wait_for_page, wait_not_stale
from tests.browser.conftest import copy_link

PLOTTED = {"sampling_lab", "overlap", "tree", "block", "cost"}
TIMEOUT = 45_000


def test_every_page_renders_with_its_figures(page: Page, app_url: str, screenshot_dir):
    page.goto(app_url)
    wait_for_page(page)
    nav = page.get_by_test_id("stSidebarNav")
    for info in PAGES:
        # The home page is the default one: its link points at the app's root.
        link = nav.locator("a").first if info.key == "home" else nav.locator(f'a[href$="/{info.key}"]')
        link.click()
        wait_for_page(page)
        if info.key == "block":  # nothing is drawn before the first round
            page.get_by_role("button", name="Next round").click()
        if info.key in PLOTTED:
            expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
        assert not page.get_by_test_id("stException").count(), info.key
        page.screenshot(path=str(screenshot_dir / f"{info.key}-en.png"), full_page=True)


def test_a_slider_changes_a_number(page: Page, app_url: str):
    page.goto(f"{app_url}/sampling_lab")
    wait_for_page(page)
    metric = page.get_by_test_id("stMetric").filter(has_text="Sampleable tokens")
    expect(metric).to_be_visible(timeout=TIMEOUT)
    before = metric.get_by_test_id("stMetricValue").inner_text()
    slider = page.get_by_role("slider", name=re.compile("top-k"))
    slider.focus()
    slider.press("ArrowRight")  # k: 0 (off) -> 1
    expect(metric.get_by_test_id("stMetricValue")).to_have_text("1", timeout=TIMEOUT)
    assert before != "1"
    expect(page.get_by_test_id("stMain")).to_contain_text("top-k with k = 1")


def test_a_page_url_opens_inside_the_course(page: Page, app_url: str, screenshot_dir):
    page.goto(f"{app_url}/overlap")
    wait_for_page(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("中文")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("Overlap and residual")
    sidebar.get_by_text("中文").click()
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("重叠与残差", timeout=TIMEOUT)
    expect(page.get_by_test_id("stSidebarNav")).to_contain_text("概率树")
    # Keyed selectboxes keep their identity across languages; their shown value must follow.
    preset = page.get_by_test_id("stSelectbox").first.locator("input")
    expect(preset).to_have_value("A/B/C（课堂示例）", timeout=TIMEOUT)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    assert "lang=zh" in copy_link(page)
    page.screenshot(path=str(screenshot_dir / "overlap-zh.png"), full_page=True)


def test_a_shared_link_restores_the_controls(page: Page, app_url: str):
    page.goto(f"{app_url}/sampling_lab?lang=zh&k=1")
    wait_for_page(page)
    metric = page.get_by_test_id("stMetric").filter(has_text="可采样")
    expect(metric.get_by_test_id("stMetricValue")).to_have_text("1", timeout=TIMEOUT)


#: The numbers of a metric card that do not fit it (shown cut off, "0.4…").
_CARD_CUT_OFF = """card => Array.from(card.querySelectorAll(
    '[data-testid="stMetricValue"], [data-testid="stMetricValue"] *'))
    .filter(e => e.innerText.trim() && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText)"""


def _cut_off(page: Page) -> list[str]:
    """The numbers cut off in any metric card of the page, each card scrolled into view first
    (cards far out of view are not laid out)."""
    cut = []
    for card in page.get_by_test_id("stMetric").all():
        card.scroll_into_view_if_needed()
        cut += card.evaluate(_CARD_CUT_OFF)
    return cut


@pytest.mark.parametrize(("lang", "p_label"), [("en", "p-value"), ("zh", "p 值")])
def test_the_monte_carlo_run_redraws_its_own_section_only(page: Page, app_url: str, lang: str, p_label: str):
    """Run reruns the Monte Carlo's fragment alone: its result appears, its settings reach the
    page's link, and the lesson above it is not sent again (about 90 elements) nor redrawn. No number
    of its result row is cut off, in either language."""
    page.add_init_script(COUNT_MESSAGES)
    page.goto(f"{app_url}/overlap?ov_n=100000&lang={lang}")
    wait_for_page(page)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    wait_not_stale(page)
    lesson_chart = page.locator(".js-plotly-plot").first.element_handle()
    seed = page.locator(".st-key-ov_mc_seed input")
    seed.fill("4")
    seed.press("Enter")
    expect(seed).to_have_value("4", timeout=TIMEOUT)
    wait_not_stale(page)
    reset_messages(page)
    page.locator(".st-key-ov_mc_run button").click()
    p_value = page.get_by_test_id("stMetric").filter(has_text=p_label)
    expect(p_value).to_be_visible(timeout=TIMEOUT)
    assert messages(page) < 50  # the section's own elements (29 here; 108 when the lesson reran)
    assert float(p_value.get_by_test_id("stMetricValue").inner_text()) > 1e-3
    assert lesson_chart.evaluate("e => e.isConnected")  # not redrawn by the trials' run
    assert not page.get_by_test_id("stException").count()
    assert _cut_off(page) == []
    assert "ov_mc_seed=4" in copy_link(page)


def test_the_monte_carlo_numbers_fit_a_1024_pixel_projector(page: Page, app_url: str):
    """Projector mode on a 1024-pixel screen, the sidebar open: every number of the pair's
    summary and of the Monte Carlo's result is shown whole (five cards in a row cut them)."""
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{app_url}/overlap?ov_n=10000")
    wait_for_page(page)
    page.get_by_test_id("stSidebar").get_by_text("Projector mode").click()
    expect(page.locator("html")).to_have_css("font-size", "20px", timeout=TIMEOUT)
    page.locator(".st-key-ov_mc_run button").click()
    p_value = page.get_by_test_id("stMetric").filter(has_text="p-value")
    expect(p_value).to_be_visible(timeout=TIMEOUT)
    assert _cut_off(page) == []
