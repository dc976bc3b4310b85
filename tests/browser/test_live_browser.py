"""The live page in a real browser, on the real bundled model (SmolLM2-135M-Instruct).

A greedy n-gram run on the copy prompt shows coloured tokens, the identical-text check and
a measured speedup, and a click on a token opens its position in the inspector; two
browser sessions generating at the same time both finish, each with
its own text (the second waits, visibly, for the model) and downloads its own trace; a long
run can be stopped.
Screenshots are saved under artifacts/screenshots. Prepare the model cache first
(``python -m specdec_core.models.bundled``) so loading takes seconds, not half a minute.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import stale_texts

pytestmark = pytest.mark.slow

TIMEOUT = 45_000
RUN_TIMEOUT = 240_000  # first model load + a run on a slow, shared CPU


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("Live generation", timeout=TIMEOUT)
    expect(page.get_by_role("button", name="Generate")).to_be_enabled(timeout=TIMEOUT)


def _finished(page: Page) -> None:
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=RUN_TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    assert not page.get_by_test_id("stAlertContentError").count()


def _shot(page: Page, path) -> None:
    """Screenshot with the coloured text in view (the page scrolls inside its main block)."""
    page.locator(".sd-legend").first.scroll_into_view_if_needed()
    page.screenshot(path=str(path))


def _spec_tokens(page: Page, kind: str = ":not(.prompt)"):
    """The speculative run's tokens of `kind` (a CSS suffix), once the clickable text shows."""
    expect(page.locator(".sd-pick .sd-tok").first).to_be_visible(timeout=TIMEOUT)  # drawn by JS
    return page.locator(f".sd-pick .sd-tokens .sd-tok{kind}")


def _generated_text(page: Page) -> str:
    """The speculative run's generated text (prompt and rejected drafts excluded)."""
    return "".join(_spec_tokens(page, ":not(.prompt):not(.rejected)").all_inner_texts())


def test_greedy_copy_run_shows_colours_and_a_speedup(page: Page, app_url: str, screenshot_dir):
    _open(page, f"{app_url}/live?live_max=48")
    page.get_by_role("button", name="Generate").click()
    _finished(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("identical token for token")
    assert _spec_tokens(page, ".accepted").count() > 10, "the n-gram draft copies whole phrases"
    assert page.locator(".sd-tokens .sd-tok.target").count() > 10
    # a state reads without its colour too: its own line (assets/style.css), named in the legend
    line = "el => getComputedStyle(el).textDecorationLine"
    assert _spec_tokens(page, ".accepted").first.evaluate(line) == "underline"
    assert page.locator(".sd-tokens .sd-tok.target").first.evaluate(line) == "none"
    expect(page.locator(".sd-legend-note").first).to_be_visible()
    speedup = page.get_by_test_id("stMetric").filter(has_text="Speedup (wall clock)")
    expect(speedup.get_by_test_id("stMetricValue")).to_have_text(re.compile(r"^\d+\.\d\d×$"))
    assert "Thames" in _generated_text(page)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    _shot(page, screenshot_dir / "live-greedy-copy.png")
    # a click on a token of a later round opens its round and position in the inspector
    token = next(t for t in _spec_tokens(page).all() if int(t.get_attribute("data-round")) > 2)
    n, slot = int(token.get_attribute("data-round")), int(token.get_attribute("data-slot"))
    expect(main).not_to_contain_text(f"Round {n} (γ")
    token.click()
    expect(main).to_contain_text(f"Round {n} (γ", timeout=TIMEOUT)
    checked = page.get_by_test_id("stRadio").filter(has_text="Position in the round").locator("input:checked")
    expect(checked).to_have_value(str(slot), timeout=TIMEOUT)


def _download_trace(page: Page) -> dict:
    """The session's run as the JSON trace its download button gives."""
    button = page.get_by_test_id("stDownloadButton").filter(has_text="JSON trace").locator("button")
    with page.expect_download(timeout=TIMEOUT) as info:
        button.click()
    return json.loads(Path(info.value.path()).read_text(encoding="utf-8"))


def _trace_text(trace: dict) -> str:
    texts = trace["token_texts"]
    return "".join(texts[str(t)] for e in trace["speculative"]["events"] for t in e["committed"])


def test_two_sessions_generate_at_once(browser: Browser, app_url: str, screenshot_dir):
    first, second = browser.new_context(accept_downloads=True), browser.new_context(accept_downloads=True)
    try:
        a, b = first.new_page(), second.new_page()
        # a's run is long enough that b's press finds it still running, even on a slow CI machine
        _open(a, f"{app_url}/live?live_preset=chat&live_max=128&live_compare=0")
        _open(b, f"{app_url}/live?live_preset=copy&live_max=32&live_compare=0")
        a.get_by_role("button", name="Generate").click()
        # a's run holds its turn from before its status line says it runs until its end; the
        # line reads "running…" only until the first totals (a fraction of a second, which a
        # loaded browser can miss), then "round N, …" until the end: either means a's run is on
        running = a.get_by_text(re.compile(r"speculative: (running…|round \d+)"))
        done = a.get_by_role("heading", name="Rounds and statistics")
        expect(running.or_(done).first).to_be_visible(timeout=RUN_TIMEOUT)
        assert not done.count(), "a's run ended before b's press: too short to overlap b's"
        b.get_by_role("button", name="Generate").click()
        expect(b.get_by_text("In line for the models: 1 request(s) ahead of yours")).to_be_visible(
            timeout=TIMEOUT
        )
        _finished(a)
        _finished(b)
        text_a, text_b = _generated_text(a), _generated_text(b)
        assert "Thames" in text_b and "Thames" not in text_a, "each session shows its own run"
        trace_a, trace_b = _download_trace(a), _download_trace(b)
        assert trace_a["settings"]["max_new_tokens"] == 128 and trace_b["settings"]["max_new_tokens"] == 32
        shown = [t.replace("↵", "") for t in (text_a, text_b)]  # the page marks line breaks
        assert [_trace_text(trace_a), _trace_text(trace_b)] == shown
        _shot(a, screenshot_dir / "live-two-sessions-a.png")
        _shot(b, screenshot_dir / "live-two-sessions-b.png")
    finally:
        first.close()
        second.close()


def test_a_long_run_can_be_stopped(page: Page, browser: Browser, app_url: str):
    url = f"{app_url}/live?live_preset=chat&live_max=400&live_compare=0&live_t=0.8"
    _open(page, url)
    page.get_by_role("button", name="Generate").click()
    expect(page.get_by_text(re.compile(r"speculative: round \d+"))).to_be_visible(timeout=RUN_TIMEOUT)
    # the run goes in the run service and a fragment on a timer draws it: nothing else is
    # redrawn, so nothing else turns stale (and fades) while the model runs
    assert not stale_texts(page), "elements outside the run were redrawn"
    # the streaming text's elements flow as one text: assets/style.css names their container by its key
    parts = page.locator(".st-key-sd_stream_spec [data-testid='stElementContainer']")
    assert parts.first.evaluate("e => getComputedStyle(e).display") == "inline"
    page.locator(".st-key-live_stop button").click()  # the page's Stop, not the toolbar's
    stopped = page.get_by_text("Stopped before the end")
    expect(stopped).to_be_visible(timeout=TIMEOUT)
    _finished(page)
    expect(page.get_by_role("button", name="Generate")).to_be_enabled()
    # a second run, stopped before its first round (it waits in line behind another session's
    # different run: an identical one would share that run), streams above the first one's
    # view, which stays, is named, and is still there after
    other = browser.new_context()
    try:
        busy = other.new_page()
        _open(busy, url + "&live_seed=7")
        busy.get_by_role("button", name="Generate").click()
        expect(busy.get_by_text(re.compile(r"speculative: round \d+"))).to_be_visible(timeout=RUN_TIMEOUT)
        page.get_by_role("button", name="Generate").click()
        expect(page.get_by_text(re.compile(r"In line for the models"))).to_be_visible(timeout=TIMEOUT)
        previous = page.get_by_text("Until this run ends, the view below still shows the previous run.")
        expect(previous).to_be_visible()
        page.locator(".st-key-live_stop button").click()
        expect(previous).to_have_count(0, timeout=TIMEOUT)
        _finished(page)
        expect(stopped).to_be_visible()  # the first run's view: a stop before any round loses nothing
        busy.locator(".st-key-live_stop button").click()
        _finished(busy)
    finally:
        other.close()
