"""A teach link works on every click (issue 52), in a real browser: clicked, its page shows the
link's values; a control moved there, another page opened and the same link clicked again in the
same tab, the page shows the link's values once more, not the defaults nor the moved control.

The links are found by the page they open, not by their place in the route, and the values
expected are read from the link's own address.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from playwright.sync_api import Locator, Page, expect

from support.browser import wait_for_page, wait_not_stale
from tests.browser.conftest import copy_link

TIMEOUT = 45_000
TEACH_TITLE = "Teach it in 90 minutes"


def _settled(page: Page) -> None:
    wait_for_page(page)
    wait_not_stale(page)


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _holding(key: str, value: str) -> re.Pattern[str]:
    """An address whose `key` holds `value`."""
    return re.compile(rf"[?&]{re.escape(key)}={re.escape(value)}(&|$)")


def _press(target: Locator) -> None:
    """Click as a person does: scroll to it, pause, then press (see TESTING.md)."""
    target.scroll_into_view_if_needed()
    target.page.wait_for_timeout(300)
    target.click()


def _open_teach(page: Page) -> None:
    """Open the teach page from the sidebar's menu (another page than the link's)."""
    _press(page.get_by_test_id("stSidebarNav").locator('a[href$="/teach"]'))
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(TEACH_TITLE, timeout=TIMEOUT)
    _settled(page)


def _click_link(page: Page, target: str, title: str) -> dict[str, str]:
    """Click the teach page's (first) link to `target` (its page's title `title`); returns the
    link's query, once its page shows and has settled."""
    links = page.get_by_test_id("stMain").locator(f'[data-testid="stPageLink"] a[href^="{target}?"]')
    expect(links.first).to_be_attached(timeout=TIMEOUT)
    link = links.first
    query = _query(link.get_attribute("href") or "")
    assert query, f"the link to {target} carries no values"
    _press(link)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(title, timeout=TIMEOUT)
    _settled(page)
    return query


def _address_holds(page: Page, query: dict[str, str]) -> None:
    """The address holds every value of the link (the page never rewrites it on its own)."""
    shown = _query(page.url)
    assert {k: shown.get(k) for k in query} == query, page.url


def test_the_sampling_lab_link_sets_top_p_on_every_click(page: Page, app_url: str):
    page.goto(f"{app_url}/teach?lang=en")
    _settled(page)
    query = _click_link(page, "sampling_lab", "Sampling lab")
    slider = page.locator('.st-key-p [data-testid="stSlider"] input[type="range"]')
    kept = (
        page.get_by_test_id("stMetric").filter(has_text="Sampleable tokens").get_by_test_id("stMetricValue")
    )
    expect(slider).to_have_value(query["p"], timeout=TIMEOUT)
    _address_holds(page, query)
    _settled(page)
    expect(kept).to_have_text(re.compile(r"^\d+$"), timeout=TIMEOUT)  # drawn, not mid-rerun
    tokens = (kept.text_content() or "").strip()  # the DOM's text: inner_text is "" while not laid out
    assert tokens.isdigit()

    slider.focus()
    slider.press("End")  # top-p to 1.0: every token sampleable again
    expect(slider).to_have_value("1", timeout=TIMEOUT)
    _settled(page)
    expect(kept).to_have_text(re.compile(r"^\d+$"), timeout=TIMEOUT)
    expect(kept).not_to_have_text(tokens, timeout=TIMEOUT)

    _open_teach(page)
    assert _click_link(page, "sampling_lab", "Sampling lab") == query
    expect(slider).to_have_value(query["p"], timeout=TIMEOUT)
    expect(kept).to_have_text(tokens, timeout=TIMEOUT)
    _address_holds(page, query)


def test_the_exercises_link_sets_its_seed_on_every_click(page: Page, app_url: str):
    page.goto(f"{app_url}/teach?lang=en")
    _settled(page)
    query = _click_link(page, "exercises", "Exercise sheets")
    seed = page.locator('.st-key-ex_seed input[type="number"]')
    expect(seed).to_have_value(query["ex_seed"], timeout=TIMEOUT)
    _address_holds(page, query)

    moved = "5" if query["ex_seed"] != "5" else "6"
    seed.fill(moved)
    seed.press("Enter")
    _settled(page)
    assert _holding("ex_seed", moved).search(copy_link(page))

    _open_teach(page)
    assert _click_link(page, "exercises", "Exercise sheets") == query
    expect(seed).to_have_value(query["ex_seed"], timeout=TIMEOUT)
    _address_holds(page, query)
