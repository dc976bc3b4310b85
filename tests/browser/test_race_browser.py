"""The draft race in a real browser, on the real bundled model: Stop ends a running race.

The race runs target-only first, then each draft; once the bf16 draft is running, the
target-only and n-gram runs are recorded, so a Stop there must leave a result marked as
stopped, with the n-gram draft in its table, and the page ready for the next race.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import stale_texts

pytestmark = pytest.mark.slow

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + runs on a slow, shared CPU


def test_a_running_race_can_be_stopped(page: Page, app_url: str):
    page.goto(f"{app_url}/race?race_preset=chat&race_max=64&race_repeats=2")
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1").first).to_have_text("Draft race", timeout=TIMEOUT)
    run = page.get_by_role("button", name="Run the race")
    expect(run).to_be_enabled(timeout=TIMEOUT)
    run.click()
    expect(page.get_by_text(re.compile(r"^bf16 copy: \d+ tokens"))).to_be_visible(timeout=RUN_TIMEOUT)
    # the race runs in the run service; only its watching fragment reruns: nothing else fades
    assert not stale_texts(page), "elements outside the race were redrawn"
    page.locator(".st-key-race_stop button").click()  # the page's Stop, not the toolbar's
    expect(page.get_by_text(re.compile(r"^The race was stopped: the table"))).to_be_visible(timeout=TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible(timeout=TIMEOUT)
    expect(run).to_be_enabled(timeout=TIMEOUT)
    expect(table).to_contain_text("n-gram")
    expect(table).not_to_contain_text("bf16 copy")  # stopped before its runs finished
    expect(page.get_by_text(re.compile(r": \d+ tokens$"))).to_have_count(0)  # no run goes on
