"""The shared p/q table editor in a real browser: an edit is checked, normalised, and shared by
its link, on both lessons that use it (pages/common/pair_input.py)."""

from __future__ import annotations

from urllib.parse import unquote

from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import copy_link

TIMEOUT = 45_000
ROW = 35  # glide-data-grid's row (and header) height in pixels


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible(timeout=TIMEOUT)


def _type_into_p(page: Page, grid: Locator, row: int, text: str) -> None:
    """Select the token cell of `row`, step right to its p cell, open it and type `text`.

    The grid is a canvas: the pauses let it draw, move its selection and mount its cell editor
    before the next key (without them, keys are lost).
    """
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 60, box["y"] + ROW * (row + 1) + ROW / 2)
    for key in ("ArrowRight", "Enter", "ControlOrMeta+a"):
        page.wait_for_timeout(300)
        page.keyboard.press(key)
    page.keyboard.type(text)
    page.wait_for_timeout(300)
    page.keyboard.press("Enter")


def _metric(page: Page, label: str) -> Locator:
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def test_overlap_table_edit_is_explained_normalised_and_shared(page: Page, app_url: str):
    _open(page, f"{app_url}/overlap")
    expect(_metric(page, "R — rejection mass")).to_have_text("0.400", timeout=TIMEOUT)
    _type_into_p(page, page.get_by_test_id("stDataFrame").first, 0, "0.3")
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("Column p adds up to 1.1, not 1", timeout=TIMEOUT)
    main.get_by_role("button", name="Scale p and q so each sums to 1").click()
    expect(_metric(page, "R — rejection mass")).to_have_text("0.436", timeout=TIMEOUT)
    expect(main).to_contain_text("This table differs from the example")
    link = copy_link(page)
    assert "ov_table=" in link and "0.3" in unquote(link)

    _open(page, link)  # the link alone brings the edited table back
    expect(_metric(page, "R — rejection mass")).to_have_text("0.436", timeout=TIMEOUT)
    expect(page.get_by_test_id("stMain")).to_contain_text("This table differs from the example")


def test_tree_table_edit_is_explained_normalised_and_shared(page: Page, app_url: str):
    _open(page, f"{app_url}/tree?lang=zh")
    r = _metric(page, "拒绝质量 R")
    expect(r).to_have_text("0.4", timeout=TIMEOUT)
    page.get_by_text("编辑 p 和 q").click()
    _type_into_p(page, page.get_by_test_id("stDataFrame").first, 0, "0.3")
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("p 列之和为 1.1，不是 1", timeout=TIMEOUT)
    main.get_by_role("button", name="缩放 p 和 q，使各自之和为 1").click()
    expect(r).not_to_have_text("0.4", timeout=TIMEOUT)
    edited = r.inner_text()
    link = copy_link(page)
    assert edited.startswith("0.436") and "tree_table=" in link

    _open(page, link)
    expect(_metric(page, "拒绝质量 R")).to_have_text(edited, timeout=TIMEOUT)
    expect(page.get_by_test_id("stMain")).to_contain_text("这张表已与所选示例不同")
