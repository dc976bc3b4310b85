"""Bad input in a real browser: after each error the next valid action works, hostile tokens
show literally, and the shared link follows the widgets when sliders move fast in several
sessions at once. Toy pair only (no real model), so these run in seconds.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, Page, expect

from specdec_core.live.trace import to_json
from tests.bad_input.hostile import hostile_trace, toy_trace
from tests.browser.conftest import copy_link

TIMEOUT = 45_000
TOY = "live_target=toy&live_draft=toy_draft&live_max=16"


def _settled(page: Page) -> None:
    """No script run in progress, nothing stale or still a skeleton (tests/TESTING.md)."""
    page.wait_for_function(
        """() => !document.querySelector('[data-testid="stStatusWidget"]')
              && !document.querySelector('[data-stale="true"]')
              && !document.querySelector('[data-testid="stSkeleton"]')""",
        timeout=TIMEOUT,
    )
    page.wait_for_timeout(700)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=TIMEOUT
    )


def _open(page: Page, url: str) -> None:
    _open_all([page], [url])


def _open_all(pages: list[Page], urls: list[str]) -> None:
    """Open each page at its URL, all at once (each session renders in its own process, so
    the loads overlap as a class's would), then wait until every one has settled."""
    for page, url in zip(pages, urls, strict=True):
        page.goto(url, wait_until="commit")
    for page in pages:
        expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible(timeout=TIMEOUT)
        _settled(page)


def _errors(page: Page):
    return page.get_by_test_id("stMain").get_by_test_id("stAlertContentError")


def _set_prompt(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Prompt", exact=True)
    box.fill(text)
    box.press("ControlOrMeta+Enter")  # commit the text area's value
    _settled(page)


def test_prompt_error_then_a_good_prompt_generates(page: Page, app_url: str):
    _open(page, f"{app_url}/live?{TOY}")
    _set_prompt(page, "   ")
    page.get_by_role("button", name="Generate").click()
    expect(_errors(page)).to_contain_text("The prompt is empty", timeout=TIMEOUT)
    _set_prompt(page, "the cat sat on the mat")
    page.get_by_role("button", name="Generate").click()
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=TIMEOUT)
    expect(_errors(page)).to_have_count(0)
    assert not page.get_by_test_id("stException").count()


def test_missing_model_then_another_target_generates(page: Page, app_url: str):
    _open(page, f"{app_url}/live?live_target=custom&live_max=16")
    page.get_by_role("button", name="Generate").click()
    expect(_errors(page)).to_contain_text("custom target", timeout=TIMEOUT)
    box = page.get_by_role("combobox", name="Target model")
    box.click()
    box.fill("Toy")
    page.keyboard.press("Enter")
    _settled(page)
    page.get_by_role("button", name="Generate").click()
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=TIMEOUT)
    expect(_errors(page)).to_have_count(0)


def test_bad_trace_then_a_good_trace_replays_and_shows_tokens_literally(
    page: Page, app_url: str, tmp_path: Path
):
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text('{"format": "specdec-studio/live-trace", "version": 99}')
    good.write_text(to_json(hostile_trace()))
    _open(page, f"{app_url}/live?{TOY}")
    page.get_by_text("Replay a saved run").click()
    chooser = page.locator("input[type=file]")
    chooser.set_input_files(str(bad))
    expect(_errors(page)).to_contain_text("version 99", timeout=TIMEOUT)
    chooser.set_input_files(str(good))
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=TIMEOUT)
    expect(_errors(page)).to_have_count(0)
    _settled(page)
    main = page.get_by_test_id("stMain")
    # the inspector's lines: payload tokens as their literal text, never bold, a link or maths
    expect(main).to_contain_text("**zq1**")
    for selector in ("strong:text-is('zq1')", "a[href='h:x']", "b:text-is('zq6')", ".katex:has-text('zq3')"):
        assert main.locator(selector).count() == 0, selector
    assert not page.get_by_test_id("stException").count()


def test_toy_trace_replays_in_chinese(page: Page, app_url: str, tmp_path: Path):
    good = tmp_path / "toy.json"
    good.write_text(to_json(toy_trace()))
    _open(page, f"{app_url}/live?lang=zh&{TOY}")
    page.get_by_text("重放").first.click()
    page.locator("input[type=file]").set_input_files(str(good))
    expect(page.get_by_test_id("stMain")).to_contain_text("从保存的轨迹重放", timeout=TIMEOUT)
    expect(_errors(page)).to_have_count(0)


def _gamma(page: Page) -> tuple[int, int | None]:
    """(the γ slider's value on screen, γ in the page's copied link)."""
    shown = int(page.get_by_role("slider", name="Drafts per round γ").input_value())
    linked = parse_qs(urlparse(copy_link(page)).query).get("cost_gamma", [None])[0]
    return shown, None if linked is None else int(linked)


def test_link_follows_fast_slider_moves_in_several_sessions(browser: Browser, app_url: str):
    """Three sessions at once, each moving γ quickly (no waiting between key presses, the
    sessions interleaved): after the last change every link equals its own page's widgets."""
    moves = {
        0: ["ArrowRight"] * 5,
        1: ["ArrowRight"] * 6 + ["ArrowLeft"] * 3,
        2: ["ArrowLeft"] * 2 + ["ArrowRight"] * 7,
    }
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in moves]
    try:
        pages = [c.new_page() for c in contexts]
        _open_all(pages, [f"{app_url}/cost"] * len(pages))
        sliders = [p.get_by_role("slider", name="Drafts per round γ") for p in pages]
        start = [_gamma(p)[0] for p in pages]
        for s in sliders:
            s.focus()
        for step in range(max(len(m) for m in moves.values())):
            for i, s in enumerate(sliders):
                if step < len(moves[i]):
                    s.press(moves[i][step], delay=0)
        for i, p in enumerate(pages):
            _settled(p)
            p.wait_for_timeout(500)
            _settled(p)
            expected = start[i]
            for key in moves[i]:
                expected = min(16, max(1, expected + (1 if key == "ArrowRight" else -1)))
            shown, linked = _gamma(p)
            assert shown == expected, (i, shown, expected)
            assert linked == shown, f"session {i}: link says γ = {linked}, the slider {shown}"
        # the link alone reopens the same state, in a new session: session 1's, which moved both ways
        again = contexts[1].new_page()
        _open_all([again], [pages[1].url])
        assert _gamma(again)[0] == _gamma(pages[1])[0]
    finally:
        for c in contexts:
            c.close()


def test_bad_logits_link_then_a_slider_works(page: Page, app_url: str):
    _open(page, f"{app_url}/sampling_lab?logits=a:nan,b:1,c:2")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stAlertContentWarning").first).to_contain_text("logits", timeout=TIMEOUT)
    slider = page.get_by_role("slider", name=re.compile("top-k"))
    slider.focus()
    slider.press("ArrowRight")  # k: 0 (off) -> 1
    metric = page.get_by_test_id("stMetric").filter(has_text="Sampleable tokens").first
    expect(metric.get_by_test_id("stMetricValue")).to_have_text("1", timeout=TIMEOUT)
    assert "k=1" in copy_link(page) and not page.get_by_test_id("stException").count()


def test_bad_race_depths_then_the_toy_pair_races(page: Page, app_url: str):
    _open(page, f"{app_url}/race?race_depths=abc&race_max=16")
    page.get_by_role("button", name="Run the race").click()
    expect(_errors(page)).to_contain_text("is not a list of layer counts", timeout=TIMEOUT)
    box = page.get_by_role("combobox", name="Target model")
    box.click()
    box.fill("Toy")
    page.keyboard.press("Enter")
    _settled(page)
    page.get_by_role("button", name="Run the race").click()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible(timeout=TIMEOUT)
    _settled(page)
    expect(_errors(page)).to_have_count(0)
