"""After a failed run, one click opens the target list and the draft list.

A custom target that is not on the machine fails to load; the error comes back in the run's
own part of the page, below the controls. A learner then scrolls back up (the page was scrolled
down to reach Generate) and clicks a list once: it must open. The test scrolls back with the mouse
wheel, as a person does.

(A click that scrolls the list into view and presses it in the same instant, as Playwright's
``click`` does, sometimes opens and closes the list at once, on a fresh page as well as after a
failed run, and in a plain Streamlit app with one select box; that is the browser's scroll
racing the select's popover, not this app's run, so this test scrolls first.)
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from support.browser import wait_for_page, wait_not_stale

TIMEOUT = 120_000
LISTS = ("Target model", "Draft")
FAILING = "/live?live_target=custom&live_target_src=nonexistent-org/no-such-model"


def _fail_a_run(page: Page, url: str) -> None:
    page.goto(url + FAILING)
    generate = page.get_by_role("button", name="Generate")
    expect(generate).to_be_enabled(timeout=TIMEOUT)
    generate.click()
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text("no-such-model", timeout=TIMEOUT)
    expect(generate).to_be_enabled(timeout=TIMEOUT)
    wait_for_page(page, TIMEOUT)
    wait_not_stale(page, TIMEOUT)


def _one_click_opens(page: Page, label: str) -> None:
    page.get_by_role("combobox", name=label, exact=True).click()
    expect(page.get_by_role("listbox")).to_be_visible(timeout=5_000)
    page.keyboard.press("Escape")
    expect(page.get_by_role("listbox")).to_have_count(0)


def test_after_a_failed_run_one_click_opens_each_list_once_scrolled_back_up(page: Page, app_url: str):
    _fail_a_run(page, app_url)
    first = page.get_by_role("combobox", name=LISTS[0], exact=True)
    assert first.bounding_box()["y"] < 0  # reaching Generate left the lists above the window
    page.mouse.move(640, 450)
    page.mouse.wheel(0, -5000)
    page.wait_for_function("() => document.querySelector('[data-testid=stMain]').scrollTop === 0")
    page.wait_for_timeout(300)  # the wheel's scroll settles
    for label in LISTS:
        _one_click_opens(page, label)
