"""A class on two app processes behind nginx, with one PostgreSQL database, in a real browser.

Two classroom processes (``streamlit run``) share a throwaway PostgreSQL cluster, named by the
README's ``.streamlit/secrets.toml`` example in their working folder, behind nginx on loopback
running the shipped site file (``assets/deploy/nginx-specdec.conf``, the README's). Every browser
gets its route cookie from nginx; learners are opened one after another until two have landed
on different processes (nginx's access log says which served whom). Then:

- both answer a quiz question; a teacher on either process opens "Class answers", sets the class
  code there, and sees both answers counted, and downloads both in the CSV;
- learner 1 runs the live page on the toy pair, downloads the trace and uploads it back;
  learner 2, on the other process, presses Generate on the same request and is shown the run
  replayed from the class's shared cache (the database), trace marked ``cached``;
- every request of each browser, its websocket (``/_stcore/stream``), its uploads
  (``/_stcore/upload_file``) and its downloads (``/media/…``) included, reached its one process.

Where nginx or PostgreSQL cannot be started, the tests fail and say why.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from sqlalchemy import create_engine

from specdec_core.live import answers
from support.browser import ROOT
from support.postgres import Cluster
from support.replicas import PASSCODE, ProxyUnavailable, Replicas

TIMEOUT = 180_000  # generous: two servers, nginx and the browser share a busy machine
PAGE = "cost"
QUIZ = tomllib.loads((ROOT / "lessons" / "en" / f"{PAGE}.toml").read_text("utf-8"))["quiz"]
LIVE = tomllib.loads((ROOT / "lessons" / "en" / "live.toml").read_text("utf-8"))
TOY = "live_target=toy&live_draft=toy_draft&live_max=16&live_compare=0"
TRIES = 16  # browsers opened at most to find one on each process (each lands on either at random)


def _said(template: str) -> str:
    """The longest stretch of a UI string's template without a placeholder: what the page shows."""
    return max(re.split(r"\{[^}]*\}", template), key=len).strip()


@pytest.fixture(scope="module")
def replicas(postgres_cluster: Cluster) -> Iterator[Replicas]:
    if not postgres_cluster.running():
        postgres_cluster.start()
    database = postgres_cluster.new_database()
    try:
        served = Replicas(postgres_cluster, database, preload="toy")
    except ProxyUnavailable as exc:
        pytest.fail(f"nginx could not be started: {exc}", pytrace=False)
    with served:
        yield served


def _route(context: BrowserContext) -> str:
    [route] = [c["value"] for c in context.cookies() if c["name"] == "sdroute"]
    return route


def _open(browser: Browser, replicas: Replicas, path: str) -> tuple[BrowserContext, Page, int]:
    """A new browser (its own cookies) on `path` through the proxy; the process that served it."""
    context = browser.new_context(accept_downloads=True)
    context.set_default_timeout(TIMEOUT)
    page = context.new_page()
    page.goto(f"{replicas.url}{path}")
    expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible(timeout=TIMEOUT)
    process = replicas.process_of(_route(context))  # nginx set the cookie on the first response
    assert process is not None, f"no request of route {_route(context)} in the proxy's log"
    return context, page, process


def _learners_apart(browser: Browser, replicas: Replicas, path: str) -> list[tuple[BrowserContext, Page]]:
    """Two learners on `path` whom nginx sent to different processes (process 0's first)."""
    found: dict[int, tuple[BrowserContext, Page]] = {}
    for _ in range(TRIES):
        context, page, process = _open(browser, replicas, path)
        if process in found:
            context.close()
        else:
            found[process] = (context, page)
        if len(found) == 2:
            return [found[0], found[1]]
    raise AssertionError(
        f"{TRIES} browsers all landed on process {set(found)}: the route cookie is not spread"
    )


def _closed_and_routed(
    replicas: Replicas, contexts: list[BrowserContext], wants: list[set[str]]
) -> list[int]:
    """Close the browsers; once nginx has logged their websockets, each one's process, after
    checking that every request of it went there and that its requests include `wants` (path
    prefixes, one set per browser)."""
    routes = [_route(c) for c in contexts]
    for c in contexts:
        c.close()
    deadline = time.time() + 30
    while True:
        seen = {r: {q.path for q in replicas.proxy.requests() if q.route == r} for r in routes}
        missing = [
            (r, w) for r, want in zip(routes, wants, strict=True) for w in want
            if not any(p.startswith(w) for p in seen[r])
        ]  # fmt: skip
        if not missing or time.time() > deadline:
            break
        time.sleep(0.5)
    assert not missing, f"requests missing from the proxy's log: {missing}"
    return [replicas.process_of(r) for r in routes]  # raises where a route reached two processes


def _answer(page: Page, question: int, option: int) -> None:
    radio = page.locator(f".st-key-quiz_{PAGE}_{question}")
    expect(radio.get_by_test_id("stRadioOption").first).to_be_visible(timeout=TIMEOUT)  # not its skeleton
    radio.get_by_test_id("stRadioOption").nth(option).click()
    right = option == QUIZ[question]["answer"]
    feedback = page.get_by_test_id("stAlertContentSuccess" if right else "stAlertContentError")
    expect(feedback.first).to_be_visible(timeout=TIMEOUT)


def _fill(page: Page, label: str, value: str) -> None:
    field = page.get_by_label(label, exact=True)
    expect(field).to_be_visible(timeout=TIMEOUT)
    field.fill(value)
    field.press("Enter")
    page.wait_for_timeout(500)  # the value reaches the server before the click


def test_replica_learners_on_two_processes_reach_one_teacher(browser: Browser, replicas: Replicas):
    (c1, first), (c2, second) = _learners_apart(browser, replicas, f"/{PAGE}")
    teacher_context, teacher, teacher_process = _open(browser, replicas, "/answers")
    contexts = [c1, c2, teacher_context]
    try:
        _fill(teacher, "Teacher's passcode", PASSCODE)
        teacher.get_by_role("button", name="Open the class's answers").click()
        _fill(teacher, "Class code", "fri-3")
        teacher.get_by_role("button", name="Use this class code").click()
        expect(teacher.get_by_text("Answers are now recorded under class code fri-3.")).to_be_visible()
        teacher.get_by_test_id("stSelectbox").filter(has_text="Questions of the page").locator(
            "input"
        ).click()
        teacher.get_by_role("option", name="Cost and speedup").click()
        title = teacher.locator(".js-plotly-plot").first.locator(".gtitle")
        expect(title).to_have_text("No answers yet")

        right = QUIZ[0]["answer"]
        wrong = (right + 1) % len(QUIZ[0]["options"])
        _answer(first, 0, right)  # on process 0
        _answer(second, 0, wrong)  # on process 1
        expect(title).to_have_text("50% correct (1 of 2)")  # the teacher's view refreshes by itself
        expect(teacher.get_by_test_id("stMetricValue").first).to_have_text("2")
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download the answers (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(download.value.path().read_text("utf-8"))))
        assert sorted((r["class_code"], r["question"], r["option"], r["correct"]) for r in rows) == sorted(
            [("fri-3", "0", str(right), "1"), ("fri-3", "0", str(wrong), "0")]
        )
    except BaseException:
        for c in contexts:
            c.close()
        raise
    processes = _closed_and_routed(
        replicas, contexts, [{"/_stcore/stream"}, {"/_stcore/stream"}, {"/_stcore/stream", "/media/"}]
    )
    assert processes[:2] == [0, 1] and processes[2] == teacher_process
    engine = create_engine(replicas.database_url)
    try:
        assert answers.sessions(engine, "fri-3") == 2  # in the one database, whichever process wrote
    finally:
        engine.dispose()


def _generate(page: Page) -> None:
    expect(page.get_by_role("button", name="Generate")).to_be_enabled(timeout=TIMEOUT)
    page.get_by_role("button", name="Generate").click()
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible(timeout=TIMEOUT)
    assert not page.get_by_test_id("stException").count()
    assert not page.get_by_test_id("stAlertContentError").count()


def _download_trace(page: Page, to: Path) -> dict:
    button = page.get_by_test_id("stDownloadButton").filter(has_text="JSON trace").locator("button")
    with page.expect_download() as info:
        button.click()
    info.value.save_as(to)
    return json.loads(to.read_text("utf-8"))


def _committed(trace: dict) -> list[int]:
    return [t for e in trace["speculative"]["events"] for t in e["committed"]]


def test_replica_run_on_one_process_is_replayed_on_the_other(browser: Browser, replicas: Replicas, tmp_path):
    (c1, first), (c2, second) = _learners_apart(browser, replicas, f"/live?{TOY}")
    try:
        _generate(first)  # process 0 runs it
        ran = _download_trace(first, tmp_path / "ran.json")
        assert not ran["meta"].get("cached")
        first.get_by_text(LIVE["replay_title"]).click()  # the saved trace goes back up, to process 0
        first.locator("input[type=file]").set_input_files(str(tmp_path / "ran.json"))
        expect(first.get_by_test_id("stMain")).to_contain_text(_said(LIVE["replayed"]), timeout=TIMEOUT)

        _generate(second)  # process 1 finds the run in the database
        expect(second.get_by_test_id("stMain")).to_contain_text(_said(LIVE["cached"]), timeout=TIMEOUT)
        replayed = _download_trace(second, tmp_path / "replayed.json")
        assert replayed["meta"].get("cached") is True
        assert _committed(replayed) == _committed(ran)
    except BaseException:
        c1.close()
        c2.close()
        raise
    processes = _closed_and_routed(
        replicas,
        [c1, c2],
        [{"/_stcore/stream", "/media/", "/_stcore/upload_file"}, {"/_stcore/stream", "/media/"}],
    )
    assert processes == [0, 1]
