"""The lab "Exact on a real model" in a real browser, on the toy pair (instant, exact): a small
N runs through the served app, and the chart, the tests with their p-values and the take-away
appear."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from support.browser import wait_for_page, wait_not_stale

TIMEOUT = 45_000


def test_a_small_run_shows_its_chart_and_p_values(page: Page, app_url: str):
    page.goto(f"{app_url}/law_live?law_target=toy&law_draft=toy_draft&law_n=60&law_seed=3")
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1").first).to_have_text("Exact on a real model", timeout=TIMEOUT)
    wait_for_page(page)
    shown = page.get_by_role("combobox", name="Broken rule to compare")
    expect(shown).to_have_value("keep every draft token", timeout=TIMEOUT)
    assert shown.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the rule's name fits its box"
    draw = page.get_by_role("button", name="Draw the samples")
    expect(draw).to_be_enabled(timeout=TIMEOUT)
    draw.click()
    takeaway = page.get_by_text(
        re.compile(r"the speculative counts show no evidence of a difference from the target's")
    )
    expect(takeaway).to_be_visible(timeout=TIMEOUT)
    wait_not_stale(page)
    assert re.search(r"\(p-value [0-9.e-]+\)", takeaway.first.text_content() or "")
    expect(page.get_by_text("First token: the target's law beside the counted shares")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() >= 2  # shares and the TV bars at least
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible(timeout=TIMEOUT)
    expect(table).to_contain_text("p-value")
    expect(table).to_contain_text("keep every draft token")
    assert not page.get_by_test_id("stException").count()
    expect(draw).to_be_enabled(timeout=TIMEOUT)  # back to idle
