"""The Chinese live demo on the real bundled model (issue 64): the default copy run finishes its
sentence, every "·" chip (a piece of a character, from the byte-level tokenizer) is marked as a
piece and explained by the line under the text, the token text stays escaped, and a click on a
token brings the inspector into view with the keyboard's focus.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.slow

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + a run on a slow, shared CPU


def test_the_zh_copy_run_reads_as_text_and_a_click_shows_its_inspection(page: Page, app_url: str):
    page.goto(f"{app_url}/live?lang=zh&live_compare=0")  # no target-only baseline: nothing here reads it
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("实时生成", timeout=TIMEOUT)
    page.get_by_role("button", name="生成", exact=True).click()
    expect(page.get_by_role("heading", name="轮次与统计")).to_be_visible(timeout=RUN_TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    tokens = page.locator(".sd-pick .sd-tokens .sd-tok:not(.prompt)")
    expect(tokens.first).to_be_visible(timeout=TIMEOUT)
    committed = ".sd-pick .sd-tokens .sd-tok:not(.prompt):not(.rejected):not(.void)"
    text = "".join(page.locator(committed).all_text_contents()).replace("·", "")
    assert "注入东海。" in text, text  # the default length reaches the end of the sentence it copies

    dots = [t for t in tokens.all() if (t.text_content() or "") == "·"]
    assert dots, "the Chinese text has pieces of characters"
    assert all("piece" in (t.get_attribute("class") or "") for t in dots)
    note = page.locator(".sd-pick .sd-piece-note")
    expect(note).to_have_count(1)
    expect(note).to_contain_text("UTF-8")

    token = next(t for t in tokens.all() if int(t.get_attribute("data-round") or 0) > 2)
    token.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    token.click()
    inspector = page.locator(".st-key-live_inspector")
    expect(inspector).to_be_in_viewport(timeout=TIMEOUT)
    expect(inspector).to_be_focused(timeout=TIMEOUT)
