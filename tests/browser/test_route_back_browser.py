"""Back returns to the route (issue 64), in a real browser: the lecturer follows four of the
90-minute route's links in one tab, moves a control on each page, and presses Back; every time
the route comes back, at the step they left. Each page visit adds one history entry, whatever
its controls do, and each page opened from the route links back to its step. "Copy link to
this setup" writes the page's settings into the address once, when asked.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from playwright.sync_api import Page, expect

from support.browser import wait_for_page, wait_not_stale

TIMEOUT = 45_000
TEACH_TITLE = "Teach it in 90 minutes"
#: Route steps in the class's order: the page a step's link opens, its title and the step's key.
STEPS = (
    ("overlap", "Overlap and residual", "overlap"),
    ("tree", "Probability tree", "tree"),
    ("cost", "Cost and speedup", "cost"),
    ("sampling_lab", "Sampling lab", "greedy"),
)


def _settled(page: Page) -> None:
    wait_for_page(page)
    wait_not_stale(page)


def _title(page: Page):
    return page.get_by_test_id("stMain").locator("h1").first


def _history(page: Page) -> int:
    return int(page.evaluate("() => window.history.length"))


def _move_a_slider(page: Page) -> None:
    slider = page.get_by_test_id("stMain").locator('[data-testid="stSlider"] input[type="range"]').first
    slider.scroll_into_view_if_needed()
    before = slider.input_value()
    slider.focus()
    slider.press("ArrowLeft" if slider.get_attribute("aria-valuemax") == before else "ArrowRight")
    expect(slider).not_to_have_value(before, timeout=TIMEOUT)
    _settled(page)


def test_back_from_four_route_pages_lands_on_the_route_at_its_step_and_copy_link_writes_once(
    page: Page, app_url: str
):
    """One tab for both walks (one route page load, not two): Back from four route pages, then
    "Copy link to this setup" on the cost page and its back link."""
    page.goto(f"{app_url}/teach?lang=en")
    expect(_title(page)).to_have_text(TEACH_TITLE, timeout=TIMEOUT)
    _settled(page)
    for i, (target, title, step) in enumerate(STEPS):
        container = page.locator(f".st-key-teach_class_{step}")
        link = container.locator(f'[data-testid="stPageLink"] a[href^="{target}?"]').first
        link.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        entries = _history(page)
        link.click()
        expect(_title(page)).to_have_text(title, timeout=TIMEOUT)
        _settled(page)
        back_link = page.get_by_test_id("stMain").get_by_text("← back to step")
        expect(back_link).to_be_visible(timeout=TIMEOUT)
        _move_a_slider(page)
        _move_a_slider(page)
        if i == 0:  # later visits replace the forward entry Back left, so the length stays
            assert _history(page) == entries + 1, "the visit and its moves added more than one entry"
        page.go_back()
        expect(_title(page)).to_have_text(TEACH_TITLE, timeout=TIMEOUT)
        _settled(page)
        expect(container).to_be_in_viewport(timeout=TIMEOUT)
    _copy_link_writes_the_setup_once_and_the_back_link_returns_to_the_step(page)


def _copy_link_writes_the_setup_once_and_the_back_link_returns_to_the_step(page: Page) -> None:
    link = page.locator('.st-key-teach_class_cost [data-testid="stPageLink"] a[href^="cost?"]').first
    link.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    link.click()
    expect(_title(page)).to_have_text("Cost and speedup", timeout=TIMEOUT)
    _settled(page)
    gamma = page.locator('.st-key-cost_gamma [data-testid="stSlider"] input[type="range"]')
    before = gamma.input_value()
    gamma.focus()
    gamma.press("ArrowRight")
    expect(gamma).not_to_have_value(before, timeout=TIMEOUT)
    _settled(page)
    moved = gamma.input_value()
    entries = _history(page)
    page.get_by_test_id("stSidebar").get_by_role("button", name="Copy link to this setup").click()
    shown = page.get_by_test_id("stSidebar").get_by_test_id("stCode")
    expect(shown).to_contain_text(f"cost_gamma={moved}", timeout=TIMEOUT)
    query = dict(parse_qsl(urlsplit(page.url).query))
    assert query.get("cost_gamma") == moved and query.get("lang") == "en" and "from_step" not in query
    assert _history(page) == entries + 1

    page.get_by_test_id("stMain").get_by_text("← back to step").click()
    expect(_title(page)).to_have_text(TEACH_TITLE, timeout=TIMEOUT)
    _settled(page)
    expect(page.locator(".st-key-teach_class_cost")).to_be_in_viewport(timeout=TIMEOUT)
