"""The class's answers in a real browser: two learners on two app processes, one teacher.

Two classroom servers share one SQLite file (``SPECDEC_ANSWERS_DB``), as a class spread over
several processes would. The teacher opens "Class answers" with the passcode on server A and
sets the class code; learner 1 answers on server A, learner 2 on server B; the teacher's
view, refreshing by itself, shows both answers, keeps each learner's first answer only, and
downloads them as CSV.
"""

from __future__ import annotations

import contextlib
import csv
import io
import tomllib
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from support.browser import ROOT, free_port, serve, streamlit_cmd

TIMEOUT = 180_000  # generous: the servers share a busy machine with the browser
PASSCODE = "owl-42"
PAGE = "cost"
QUIZ = tomllib.loads((ROOT / "lessons" / "en" / f"{PAGE}.toml").read_text("utf-8"))["quiz"]


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory) -> Iterator[tuple[str, str]]:
    env = {
        "SPECDEC_CLASSROOM": "1",
        "SPECDEC_PRELOAD": "toy",
        "SPECDEC_TEACHER_PASSCODE": PASSCODE,
        "SPECDEC_ANSWERS_DB": str(tmp_path_factory.mktemp("answers") / "class.sqlite"),
    }
    logs = ROOT / "artifacts"
    with contextlib.ExitStack() as stack:
        urls = []
        for name in ("a", "b"):
            port = free_port()
            urls.append(
                stack.enter_context(serve(streamlit_cmd(port), port, logs / f"answers-{name}.log", env))
            )
        yield urls[0], urls[1]


def _answer(page: Page, url: str, question: int, option: int) -> None:
    """Open the lesson and pick `option` (its index in the file: every learner sees it in
    that place, under its letter)."""
    if PAGE not in page.url:
        page.goto(f"{url}/{PAGE}")
    radio = page.locator(f".st-key-quiz_{PAGE}_{question}")
    expect(radio.get_by_test_id("stRadioOption").first).to_be_visible(timeout=TIMEOUT)  # not its skeleton
    radio.get_by_test_id("stRadioOption").nth(option).click()
    right = option == QUIZ[question]["answer"]
    feedback = page.get_by_test_id("stAlertContentSuccess" if right else "stAlertContentError")
    expect(feedback.first).to_be_visible(timeout=TIMEOUT)


def _title(teacher: Page, question: int):
    return teacher.locator(".js-plotly-plot").nth(question).locator(".gtitle")


def test_two_learners_on_two_processes_and_the_teacher_sees_their_answers(browser: Browser, two_servers):
    url_a, url_b = two_servers
    contexts = [browser.new_context(accept_downloads=True) for _ in range(3)]
    try:
        for c in contexts:
            c.set_default_timeout(TIMEOUT)
        teacher, first, second = (c.new_page() for c in contexts)
        teacher.goto(f"{url_a}/answers")
        field = teacher.get_by_label("Teacher's passcode", exact=True)
        expect(field).to_be_visible(timeout=TIMEOUT)
        field.fill("owl-41")
        field.press("Enter")
        teacher.wait_for_timeout(500)  # the passcode reaches the server before the click
        teacher.get_by_role("button", name="Open the class's answers").click()
        expect(teacher.get_by_text("That is not the teacher's passcode.")).to_be_visible(timeout=TIMEOUT)
        field.fill(PASSCODE)
        field.press("Enter")
        teacher.wait_for_timeout(500)
        teacher.get_by_role("button", name="Open the class's answers").click()

        code = teacher.get_by_label("Class code", exact=True)
        expect(code).to_be_visible(timeout=TIMEOUT)
        code.fill("fri-3")
        code.press("Enter")
        teacher.wait_for_timeout(500)
        teacher.get_by_role("button", name="Use this class code").click()
        expect(teacher.get_by_text("Answers are now recorded under class code fri-3.")).to_be_visible(
            timeout=TIMEOUT
        )
        teacher.get_by_test_id("stSelectbox").filter(has_text="Questions of the page").locator(
            "input"
        ).click()
        teacher.get_by_role("option", name="Cost and speedup").click()
        expect(_title(teacher, 0)).to_have_text("No answers yet", timeout=TIMEOUT)

        right = QUIZ[0]["answer"]
        wrong = (right + 1) % len(QUIZ[0]["options"])
        _answer(first, url_a, 0, right)
        _answer(second, url_b, 0, wrong)
        _answer(second, url_b, 0, right)  # a second thought does not count
        expect(_title(teacher, 0)).to_have_text("50% correct (1 of 2)", timeout=TIMEOUT)
        expect(teacher.get_by_test_id("stMetricValue").first).to_have_text("2", timeout=TIMEOUT)

        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download the answers (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(download.value.path().read_text("utf-8"))))
        assert sorted(
            (r["class_code"], r["page"], r["question"], r["option"], r["correct"]) for r in rows
        ) == sorted([("fri-3", PAGE, "0", str(right), "1"), ("fri-3", PAGE, "0", str(wrong), "0")])
        assert len({r["session"] for r in rows}) == 2
    finally:
        for c in contexts:
            c.close()
