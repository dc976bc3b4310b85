"""The round page and the roofline lesson in a real browser, in English and Chinese.

The round page draws a toy run made on the live page in the same session (its figures, the
step-through, and a row opening the live inspector); the roofline's sliders are moved with the
keyboard and their values read back from the slider, the numbers and the copied link.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from specdec_core.course import roofline as r
from specdec_core.live.machine_profile import reference
from support.browser import wait_for_page, wait_not_stale
from tests.browser.conftest import copy_link

TIMEOUT = 45_000
TOY = "live_target=toy&live_draft=toy_draft&live_max=40"
WORDS = {
    "en": {
        "live": "Live generation",
        "stats": "Rounds and statistics",
        "round": "One round, inside the model",
        "next": "Next stage",
        "batch": "Batch (sequences per step)",
        "speedup": "Predicted speedup",
    },
    "zh": {
        "live": "实时生成",
        "round": "一轮，在模型内部",
        "next": "下一阶段",
        "batch": "批大小（每步的序列数）",
        "speedup": "预测加速比",
    },
}


def _press(page: Page, key: str, stage: int) -> None:
    """Press a stage button and wait until the page shows that stage."""
    page.locator(f".st-key-{key} button").click()
    expect(page.locator(".st-key-round_stage input:checked")).to_have_value(str(stage), timeout=TIMEOUT)
    wait_not_stale(page)


def _title(page: Page, text: str) -> None:
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(text, timeout=TIMEOUT)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_round_page_draws_a_run_made_on_the_live_page(
    page: Page, app_url: str, lang: str, screenshot_dir
):
    w = WORDS[lang]
    page.goto(f"{app_url}/live?lang={lang}&{TOY}")
    _title(page, w["live"])
    page.locator(".st-key-live_generate button").click()
    expect(page.locator(".st-key-live_download")).to_be_visible(timeout=120_000)  # the run is kept
    page.get_by_test_id("stSidebarNav").locator('a[href$="/round"]').click()
    wait_for_page(page)
    _title(page, w["round"])
    main = page.get_by_test_id("stMain")
    expect(main.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)  # the timeline
    summary = main.locator("p").filter(has_text=re.compile(r"γ = \d")).first
    expect(summary).to_be_visible(timeout=TIMEOUT)
    page.screenshot(path=str(screenshot_dir / f"round-{lang}-timeline.png"), full_page=True)
    for stage in (1, 2):  # to the accept tests: the rows' figure and table
        _press(page, "round_next", stage)
    expect(main.get_by_test_id("stDataFrame")).to_be_visible(timeout=TIMEOUT)
    expect(main.locator(".js-plotly-plot")).to_have_count(1, timeout=TIMEOUT)
    page.screenshot(path=str(screenshot_dir / f"round-{lang}-tests.png"), full_page=True)
    _press(page, "round_next", 3)
    expect(main.get_by_test_id("stAlertContentInfo")).to_contain_text("KV", timeout=TIMEOUT)  # toy: no cache
    _press(page, "round_prev", 2)
    page.locator(".st-key-round_inspect button").click()
    _title(page, w["live"])
    expect(page.locator(".st-key-live_download")).to_be_visible(timeout=TIMEOUT)  # the same run, no new one
    expect(page.locator(".st-key-live_inspector")).to_be_in_viewport(timeout=TIMEOUT)
    assert not page.get_by_test_id("stException").count()


def _slider(page: Page, label: str):
    return page.get_by_role("slider", name=label)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_roofline_sliders_move_and_read_back(page: Page, app_url: str, lang: str, screenshot_dir):
    w = WORDS[lang]
    page.goto(f"{app_url}/roofline?lang={lang}")
    wait_for_page(page)
    main = page.get_by_test_id("stMain")
    expect(main.locator(".js-plotly-plot")).to_have_count(2, timeout=TIMEOUT)
    batch = _slider(page, w["batch"])
    expect(batch).to_have_attribute("aria-valuetext", "1", timeout=TIMEOUT)
    speedup = page.get_by_test_id("stMetric").filter(has_text=w["speedup"]).get_by_test_id("stMetricValue")
    h100 = reference("h100")
    machine = r.Machine(h100.bandwidth_gbs, h100.compute_gflops)

    def expected(b: int) -> str:
        setup = r.Setup(machine, r.MODELS["llama_8b"], r.MODELS["llama_1b"], 2.0, b, 4096, 4, 0.8)
        return f"{r.evaluate(setup).speedup:.2f}×"

    expect(speedup).to_have_text(expected(1), timeout=TIMEOUT)
    batch.focus()
    for _ in range(9):  # 1 → 512
        batch.press("ArrowRight")
    expect(batch).to_have_attribute("aria-valuetext", "512", timeout=TIMEOUT)
    wait_not_stale(page)
    expect(speedup).to_have_text(expected(512), timeout=TIMEOUT)
    assert parse_qs(urlparse(copy_link(page)).query)["roof_batch"] == ["512"]
    page.screenshot(path=str(screenshot_dir / f"roofline-{lang}.png"), full_page=True)
    assert not page.get_by_test_id("stException").count()
