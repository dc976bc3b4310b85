"""bench/browser_costs.py in a real browser: the redraw it prices (a changed figure mounted
afresh) is what the app does, and its figure readers and drawing clock work on a lesson page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from bench.browser_costs import draw_seconds, figure_summary, page_figures
from support.browser import COUNT_MESSAGES, messages, reset_messages, wait_for_page, wait_not_stale

pytestmark = pytest.mark.browser
TIMEOUT = 45_000


def test_a_changed_figure_is_mounted_afresh_what_bench_browser_costs_measures(page: Page, app_url: str):
    """bench/browser_costs.py prices a redraw as a full Plotly.newPlot per changed figure and
    counts the messages of a change: both rest on what this checks."""
    page.add_init_script(COUNT_MESSAGES)
    page.goto(f"{app_url}/sampling_lab")
    wait_for_page(page)
    # both of the lab's charts drawn (on a busy machine the second can come well after the first)
    expect(page.locator(".js-plotly-plot")).to_have_count(2, timeout=TIMEOUT)
    figures = page_figures(page)
    chart = page.locator(".js-plotly-plot").first.element_handle()
    reset_messages(page)
    slider = page.get_by_role("slider", name=re.compile("top-k"))
    slider.focus()
    slider.press("ArrowRight")
    metric = page.get_by_test_id("stMetric").filter(has_text="Sampleable tokens")
    expect(metric.get_by_test_id("stMetricValue")).to_have_text("1", timeout=TIMEOUT)
    wait_not_stale(page)
    assert not chart.evaluate("e => e.isConnected")  # the old drawing is gone, not updated
    assert messages(page) >= 10  # the fragment's elements, one by one
    draws = draw_seconds(page.context.browser, figures, repeats=1)
    assert len(draws) == len(figures) >= 2 and all(0 < d < 30 for d in draws)
    assert all(f["traces"] >= 1 for f in figure_summary(figures))
