"""The Compare page in a real browser, on the real bundled model: a small grid runs, its heatmap
appears, and the cells download as CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.slow

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + runs on a slow, shared CPU


def test_a_small_grid_shows_its_heatmap_and_exports_csv(page: Page, app_url: str):
    page.goto(f"{app_url}/compare?cmp_drafts=ngram&cmp_cats=copy,code&cmp_max=8")
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1").first).to_have_text("Compare drafts", timeout=TIMEOUT)
    run = page.get_by_role("button", name="Run the grid")
    expect(run).to_be_enabled(timeout=TIMEOUT)
    run.click()
    expect(page.get_by_text("Greedy decoding: every draft's output equals its target's own")).to_be_visible(
        timeout=RUN_TIMEOUT
    )
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name="Download the cells (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert [(r["target"], r["draft"], r["category"]) for r in rows] == [
        ("bundled", "ngram", "copy"),
        ("bundled", "ngram", "code"),
    ]
    assert all(float(r["tau"]) >= 1.0 and r["greedy_identical"] == "true" for r in rows)
