"""A lesson's charts in a real browser: each carries its description for assistive technology
(in the page, not drawn) and opens its data table from the keyboard."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.figure_strings import figure_text, string

TIMEOUT = 90_000  # a fresh server loads plotly.js once; slow on a loaded 2-core machine


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_chart_is_described_and_its_data_opens_from_the_keyboard(page: Page, app_url: str, lang: str):
    page.set_viewport_size({"width": 1280, "height": 6000})  # the whole lesson in view and laid out
    page.goto(f"{app_url}/overlap?lang={lang}")
    main = page.get_by_test_id("stMain")
    charts = main.locator(".js-plotly-plot")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length >= 6",
        polling=1000,
        timeout=TIMEOUT,
    )  # the lesson's six charts drawn
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stStatusWidget"], [data-stale="true"]\')',
        timeout=TIMEOUT,
    )
    described = main.locator("p.sr-only")
    expect(described).to_have_count(charts.count())
    first = described.first.text_content() or ""
    assert figure_text("overlap.overlap", lang)["overlap"] in first  # the bars' own series, with its total
    box = described.first.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1  # read, not drawn

    words = string(lang, "common", "figure")
    toggle = main.get_by_test_id("stExpander").first.locator("summary")
    expect(toggle).to_contain_text(words["data"])
    toggle.focus()
    page.keyboard.press("Enter")
    table = main.get_by_test_id("stExpander").first.get_by_test_id("stDataFrame")
    expect(table).to_be_visible(timeout=TIMEOUT)
