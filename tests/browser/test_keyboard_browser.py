"""The 90-minute route with the keyboard only: once a page has opened, every step below is a key
press (Tab to reach a control, arrows, Enter or Space to use it), never a mouse click.

The teaching route: Tab to its cost step's link and press Enter. That lesson: Tab to γ's
slider, move it with an arrow key, and the figures redraw; Tab to the first question of its
quiz, pick an option with Space, and the feedback shows. The live page: Tab to Generate and
press Enter, Tab to Stop and press Space, Tab to a token of a later round (a focusable button
with a visible focus outline) and press Enter, and its position opens in the inspector, which
takes the focus; Tab to the JSON trace's download and press Enter, and the file downloads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + a run on a slow, shared CPU
#: The focused element, looked for through open shadow roots too (a component may render in one).
_ACTIVE = """() => { let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a; }"""
_FOCUSED = (
    f"([selector, extra]) => {{ const a = ({_ACTIVE})(); return !!a && a.matches(selector) && eval(extra); }}"
)


def tab_to(page: Page, selector: str, extra: str = "true", limit: int = 400) -> None:
    """Press Tab until the focused element matches `selector` (and the JS expression `extra`,
    which may read it as ``a``); fail if `limit` presses never reach one."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(_FOCUSED, [selector, extra]):
            return
    raise AssertionError(f"{limit} Tab presses never reached {selector} ({extra})")


#: Every figure's data on the page, to tell a redraw.
_DATA = "JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => g.data))"
_REDRAWN = f"before => {_DATA} !== before && !document.querySelector('[data-stale=\"true\"]')"


@pytest.mark.browser
def test_a_lesson_and_its_quiz_with_the_keyboard(page: Page, app_url: str):
    page.goto(f"{app_url}/teach")  # the route: its cost step's link, followed with Enter
    expect(page.get_by_test_id("stMain").locator("a[href^='cost?']").first).to_be_visible(timeout=TIMEOUT)
    tab_to(page, "[data-testid=stMain] a[href^='cost?']")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("stMain").locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    expect(page).to_have_url(re.compile(r"/cost\?"))
    slider = page.locator(".st-key-cost_gamma input[type=range]")
    before, drawn = slider.input_value(), page.evaluate(f"() => {_DATA}")
    tab_to(page, ".st-key-cost_gamma input[type=range]")
    page.keyboard.press("ArrowRight")
    expect(slider).to_have_value(str(int(before) + 1), timeout=TIMEOUT)
    page.wait_for_function(_REDRAWN, arg=drawn, timeout=TIMEOUT)
    # the quiz: the first question's first option, picked with Space, answers with its feedback
    question = page.get_by_test_id("stRadio").filter(has_text=re.compile(r"^1\. ")).first
    first = "a.closest('[data-testid=stRadio]').innerText.startsWith('1. ')"
    tab_to(page, "[data-testid=stRadio] input[type=radio]", first)
    page.keyboard.press("Space")
    expect(question.locator("input:checked")).to_have_count(1, timeout=TIMEOUT)
    feedback = page.get_by_test_id("stAlert").filter(has_text=re.compile(r"^(Right|Not quite)"))
    expect(feedback.first).to_be_visible(timeout=TIMEOUT)


@pytest.mark.browser
@pytest.mark.slow
def test_the_live_page_with_the_keyboard(page: Page, app_url: str):
    page.goto(f"{app_url}/live?live_preset=chat&live_max=400&live_compare=0&live_t=0.8")
    generate = page.get_by_role("button", name="Generate")
    expect(generate).to_be_enabled(timeout=TIMEOUT)
    tab_to(page, ".st-key-live_generate button")
    page.keyboard.press("Enter")
    expect(page.get_by_text(re.compile(r"speculative: round \d+"))).to_be_visible(timeout=RUN_TIMEOUT)
    tab_to(page, ".st-key-live_stop button")
    page.keyboard.press("Space")
    expect(page.get_by_text("Stopped before the end")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=TIMEOUT)
    main = page.get_by_test_id("stMain")
    expect(page.locator(".sd-pick .sd-tok[data-slot]").first).to_be_visible(timeout=TIMEOUT)  # drawn by JS
    # a token of a later round: a button the keyboard reaches, its focus drawn
    tab_to(page, ".sd-pick .sd-tok[data-slot]", "Number(a.dataset.round) >= 2")
    token = page.evaluate(
        f"() => {{ const a = ({_ACTIVE})(); return [a.getAttribute('role'), Number(a.dataset.round),"
        " Number(a.dataset.slot), getComputedStyle(a).outlineStyle]; }"
    )
    role, n, slot, outline = token
    assert role == "button" and outline != "none", token
    expect(main).not_to_contain_text(f"Round {n} (γ")
    page.keyboard.press("Enter")
    expect(main).to_contain_text(f"Round {n} (γ", timeout=TIMEOUT)
    checked = page.get_by_test_id("stRadio").filter(has_text="Position in the round").locator("input:checked")
    expect(checked).to_have_value(str(slot), timeout=TIMEOUT)
    page.wait_for_function(f"() => !!({_ACTIVE})().closest('.st-key-live_inspector')", timeout=TIMEOUT)
    # the trace's download, reached and pressed from the inspector with keys alone
    tab_to(page, ".st-key-live_download button")
    with page.expect_download(timeout=TIMEOUT) as info:
        page.keyboard.press("Enter")
    trace = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert len(trace["speculative"]["events"]) > n
