"""Classroom mode in a real browser: a server started for a class, a learner and a teacher.

The server runs with ``SPECDEC_CLASSROOM=1``, the toy pair and a tiny 4-layer transformer
folder as the teacher's models and a passcode. The learner sees those models (marked as the
teacher's), cannot type a model path (a link naming one loads the teacher's model instead),
and cannot unload with a wrong passcode; the teacher, in another session, unloads with the
right one and the learner's panel shows the empty shelf. The course's ordinary server
(``app_url``, no classroom variables) keeps the free path box and the plain Unload button.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from specdec_core.live.model_choices import targets
from support.browser import ROOT, free_port, serve, streamlit_cmd

TIMEOUT = 60_000
PASSCODE = "owl-42"


@contextlib.contextmanager
def _serve(env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    with serve(streamlit_cmd(port), port, ROOT / "artifacts" / "streamlit-classroom-test.log", env) as url:
        yield url


@pytest.fixture(scope="module")
def class_server(tiny_hf_folders) -> Iterator[tuple[str, str]]:
    folder = str(tiny_hf_folders["target"])
    env = {
        "SPECDEC_CLASSROOM": "1",
        "SPECDEC_PRELOAD": f"toy,{folder}",
        "SPECDEC_TEACHER_PASSCODE": PASSCODE,
    }
    with _serve(env) as url:
        yield url, folder


def _open(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text("Live generation", timeout=TIMEOUT)
    expect(page.get_by_role("button", name="Generate")).to_be_enabled(timeout=TIMEOUT)


def _panel(page: Page):
    """The models panel, opened."""
    panel = page.get_by_test_id("stExpander").filter(has_text="Models in memory")
    summary = panel.locator("summary")
    if panel.locator("details").get_attribute("open") is None:
        summary.click()
    return panel


def _options(page: Page, label: str) -> list[str]:
    """The options of the select box labelled `label` (opened, read, closed)."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label)
    box.locator("input").click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible(timeout=TIMEOUT)
    texts = [t.strip() for t in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return texts


def _until_preloaded(page: Page, url: str, seconds: float = 120) -> None:
    """Reopen the page until its panel no longer says the teacher's models are loading."""
    deadline = time.time() + seconds
    while True:
        _open(page, url)
        panel = _panel(page)
        expect(panel.get_by_text("At most 6 models stay loaded")).to_be_visible(timeout=TIMEOUT)
        if not panel.get_by_text("Loading the teacher's models").count() or time.time() > deadline:
            return
        page.wait_for_timeout(2000)


def _unload_with(page: Page, passcode: str) -> None:
    panel = _panel(page)
    field = panel.locator("input[type=password]")
    field.fill(passcode)
    field.press("Enter")
    page.wait_for_timeout(500)  # the passcode reaches the server before the click
    panel.get_by_role("button", name="Unload all models").click()


def test_a_learner_cannot_load_a_path_or_unload_and_the_teacher_can(browser: Browser, class_server):
    url, folder = class_server
    learner_ctx, teacher_ctx = browser.new_context(), browser.new_context()
    try:
        learner, teacher = learner_ctx.new_page(), teacher_ctx.new_page()
        # a link naming a server path: the teacher's model is chosen instead, the path shown nowhere
        _open(learner, f"{url}/live?live_target=custom&live_target_src=/etc&live_draft=layerskip&live_k=20")
        main = learner.get_by_test_id("stMain")
        source = learner.get_by_test_id("stSelectbox").filter(has_text="The teacher's model")
        expect(source.locator("input")).to_have_value(folder, timeout=TIMEOUT)
        assert not main.get_by_role("textbox", name="Target: Hugging Face id or local folder").count()
        expect(learner.get_by_role("spinbutton", name="Layers kept ℓ")).to_have_value(
            "4"
        )  # bounded by the 4 layers
        assert "/etc" not in main.inner_text()
        assert _options(learner, "Target model") == [
            "Toy Markov pair (instant, no download)",
            "Custom: HF id or local folder",
        ]
        assert _options(learner, "The teacher's model") == [folder]
        # the teacher's models are on the shelf, marked as such (the page shows them once loaded)
        _until_preloaded(learner, f"{url}/live")
        panel = _panel(learner)
        expect(panel.locator("summary")).to_contain_text("Models in memory (2)")
        expect(panel.get_by_text("(the teacher's)")).to_have_count(2)
        # a wrong passcode unloads nothing
        _unload_with(learner, "owl-41")
        expect(learner.get_by_text("Wrong passcode: nothing was unloaded.")).to_be_visible(timeout=TIMEOUT)
        expect(_panel(learner).locator("summary")).to_contain_text("Models in memory (2)")
        # the teacher's passcode, in another session, does
        _open(teacher, f"{url}/live")
        _unload_with(teacher, PASSCODE)
        expect(teacher.get_by_text("Unloaded 2 model(s).")).to_be_visible(timeout=TIMEOUT)
        learner.reload()
        expect(learner.get_by_role("button", name="Generate")).to_be_enabled(timeout=TIMEOUT)
        expect(_panel(learner).locator("summary")).to_contain_text("Models in memory (0)", timeout=TIMEOUT)
    finally:
        learner_ctx.close()
        teacher_ctx.close()


def test_outside_classroom_mode_the_form_is_unchanged(page: Page, app_url: str):
    _open(page, f"{app_url}/live?live_target=custom")
    main = page.get_by_test_id("stMain")
    box = main.get_by_role("textbox", name="Target: Hugging Face id or local folder")
    expect(box).to_be_editable(timeout=TIMEOUT)
    assert len(_options(page, "Target model")) == len(targets())  # every target, Gemma included
    panel = _panel(page)
    expect(panel.get_by_role("button", name="Unload all models")).to_be_visible()
    assert not panel.locator("input[type=password]").count()
    assert not main.get_by_text("Classroom server").count()
