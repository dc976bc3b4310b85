"""The teacher's pages in a real browser: a route link sets its page up, and an exercise sheet
prints without the app's chrome or its controls, over as many sheets of paper as it needs."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from specdec_core.theory import linear_verify_cost, speedup

TIMEOUT = 45_000


def _settled(page: Page) -> None:
    expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('[data-stale=\"true\"]')",
        timeout=TIMEOUT,
    )


def test_a_route_link_opens_its_page_set_up(page: Page, app_url: str):
    """The cost step's link (verification 1 + βγ, β the server's machine profile's, read back
    from the page's β slider) and the motivation step's link (the memory-bound 2.80×) open the
    cost page at α 0.8, c 0.05, γ 4 with the speedup specdec_core gives for them."""
    page.goto(f"{app_url}/teach")
    _settled(page)
    main = page.get_by_test_id("stMain")
    for verify in ("linear", "constant"):
        link = main.locator(
            f'[data-testid="stPageLink"] a[href^="cost?"][href*="cost_verify={verify}"]'
        ).first
        link.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        link.click()
        expect(main.locator("h1").first).to_have_text("Cost and speedup", timeout=TIMEOUT)
        _settled(page)
        assert "cost_alpha=0.8" in page.url and "cost_c=0.05" in page.url
        assert f"cost_verify={verify}" in page.url
        values = page.get_by_test_id("stMetricValue")
        expect(values.first).to_have_text("3.36", timeout=TIMEOUT)
        beta = 0.0
        if verify == "linear":  # the server's profile decides β: read it off the page's slider
            slider = main.get_by_test_id("stSlider").filter(has_text="Extra cost per drafted token β")
            beta = float(slider.locator('input[type="range"]').input_value())
        expected = speedup(0.8, 4, 0.05, linear_verify_cost(beta))
        expect(values.nth(2)).to_have_text(f"{expected:.2f}×", timeout=TIMEOUT)
        page.goto(f"{app_url}/teach")
        _settled(page)


def test_an_exercise_sheet_prints_cleanly(page: Page, app_url: str, screenshot_dir):
    page.goto(f"{app_url}/exercises?ex_seed=3&ex_key=1&lang=zh")
    _settled(page)
    main = page.get_by_test_id("stMain")
    expect(main.locator("h1", has_text="投机解码：练习题 3")).to_be_visible(timeout=TIMEOUT)
    controls = page.locator(".st-key-noprint_ex_controls")
    expect(controls).to_be_visible()
    assert main.locator(".st-key-ex_sheet .katex").count() > 10  # the formulas are typeset

    page.emulate_media(media="print")
    expect(page.get_by_test_id("stSidebar")).to_be_hidden()
    expect(controls).to_be_hidden()
    expect(page.locator(".st-key-noprint_ex_downloads")).to_be_hidden()
    expect(main.locator("h1", has_text="投机解码：练习题 3")).to_be_visible()
    expect(main.locator("h1", has_text="答案：练习题 3")).to_be_visible()
    # Nothing scrolls inside the app any more: the whole sheet flows onto the paper.
    height, scrolled = main.evaluate("e => [e.clientHeight, e.scrollHeight - e.clientHeight]")
    assert height > 3 * page.viewport_size["height"] and scrolled < 50, (height, scrolled)
    pdf = page.pdf(path=str(screenshot_dir / "exercises-zh.pdf"))
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) >= 3  # every problem and the key, not one screenful
