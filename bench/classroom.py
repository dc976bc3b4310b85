"""A classroom on one server: the load check run by ``python -m bench.live_page``.

Live: N sessions press Generate on the default settings at once (one runs; the rest join that
run in the run service, or are answered from the shared trace cache); latency is click →
finished view.
Lessons: M sessions (spread over the lesson pages) move a slider at once; latency is key
press → page settled (nothing stale, no skeleton, no status widget for 0.3 s, after the
rerun's messages came). Both clocks run inside each page, started by the page's own
pointer or key event and stopped by a timer there, so every session is timed at once; a
harness that polled the pages one after another would add its own rounds to the later ones.
Every live session's text is checked against the plain greedy output and every slider
against the value its session moved it to (no session may see another's), and every page
for errors.

A class on several processes, on its own (``main``)::

    .venv/bin/python -m bench.classroom --processes 2            # 30 learners, the bundled model
    .venv/bin/python -m bench.classroom --processes 2 --quick    # 8 learners, the toy pair

A throwaway PostgreSQL (support/postgres.py), the app processes in classroom mode sharing it,
and nginx in front on loopback with the shipped site file (support/replicas.py). Each learner
is a browser of its own (its own route cookie, so nginx spreads them over the processes; the
proxy's log says which served whom). Every learner answers two quiz questions; then one learner
on the first process presses Generate, and once it has finished all the others press Generate
on the same request at once, so theirs are replays: from that process's cache on the first
process, from the class's database on the others. Timed click → finished view by a clock in
each page. ``answers_lost``: answers given minus rows in the database; ``replay_ratio``: the
median replay on the other processes over the median on the first. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tomllib
from typing import Any

from bench.live_browser import (
    BUSY,
    FINISHED_ID,
    ROOT,
    RUN_TIMEOUT_MS,
    download_trace,
    errors_shown,
    finished,
    live_run,
    open_live,
    settled,
)
from support.browser import ARGS, CHROMIUM, COUNT_MESSAGES

#: Lesson pages and the slider a student moves there (the block lesson opened ten rounds in).
LESSON_SLIDERS = [
    ("sampling_lab", "k", ""),
    ("tree", "tree_top_n", ""),
    ("block", "block_k", "block_round=10"),
    ("cost", "cost_gamma", ""),
    ("tree_drafts", "trd_t", ""),
]

#: Whether the page shows the "In line for the models" queue note (a text search, no role query).
_QUEUED = "() => document.body.textContent.includes('In line for the models')"

#: A clock inside the page: the next pointer or key press starts it; a timer every 50 ms
#: stops it when the page is ready and has stayed so for `quietMs` (it keeps the moment
#: readiness began), and starts it again if the page stops being ready. Ready: with `doneId`,
#: that element exists; without, the page has had websocket messages since arming
#: (COUNT_MESSAGES) and nothing on it is busy.
_ARM = """([quietMs, doneId]) => {
  const clock = window.__sdClassClock = {start: null, end: null};
  const base = window.__sdMessages || 0;
  const go = () => { if (clock.start === null) clock.start = performance.now(); };
  document.addEventListener('pointerdown', go, {capture: true, once: true});
  document.addEventListener('keydown', go, {capture: true, once: true});
  let readySince = null;
  const tick = () => {
    if (clock.start !== null) {
      const ready = doneId ? !!document.getElementById(doneId) : (window.__sdMessages > base && !BUSY);
      const now = performance.now();
      if (!ready) { readySince = null; clock.end = null; }
      else if (readySince === null) readySince = now;
      if (readySince !== null && now - readySince >= quietMs) clock.end = readySince;
    }
    setTimeout(tick, 50);
  };
  tick();
}""".replace("BUSY", BUSY)
_READ = "() => { const c = window.__sdClassClock; return c.end === null ? null : (c.end - c.start) / 1000; }"
STEADY_S = 1.0  # every clock stopped, and none moved, for this long: the measurement is over


def _latencies(pages: list[Any], timeout_s: float, on_poll: Any = None) -> dict[int, float]:
    """Each page's clock once all have stopped and stayed unchanged for ``STEADY_S``; pages
    whose clock still runs at `timeout_s` are left out. `on_poll(page)`: called for each page
    still running, at each round of polling."""
    deadline = time.perf_counter() + timeout_s
    last: list[float | None] = []
    steady_since = None
    while time.perf_counter() < deadline:
        values = []
        for page in pages:
            values.append(page.evaluate(_READ))
            if values[-1] is None and on_poll is not None:
                on_poll(page)
        if None in values or values != last:
            steady_since = None
        elif steady_since is None:
            steady_since = time.perf_counter()
        elif time.perf_counter() - steady_since >= STEADY_S:
            break
        last = values
        time.sleep(0.2)
    return {i: v for i, v in enumerate(last) if v is not None}


def _spread(prefix: str, latency: dict[int, float]) -> dict[str, float | None]:
    """``<prefix>_median_s`` and ``<prefix>_worst_s`` of the sessions' latencies (None: none)."""
    times = sorted(latency.values())
    return {
        f"{prefix}_median_s": statistics.median(times) if times else None,
        f"{prefix}_worst_s": times[-1] if times else None,
    }


def classroom_live(url: str, browser: Any, sessions: int, expected_tokens: list[int]) -> dict[str, Any]:
    """`sessions` browsers press Generate on the default settings at once."""
    contexts = [
        browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        for _ in range(sessions)
    ]
    pages = [c.new_page() for c in contexts]
    for page in pages:
        open_live(page, url)
        page.evaluate(_ARM, [0, FINISHED_ID])
    for page in pages:
        page.get_by_role("button", name="Generate").click()
    queue_seen = False

    def queued(page: Any) -> None:
        nonlocal queue_seen
        queue_seen = queue_seen or bool(page.evaluate(_QUEUED))

    latency = _latencies(pages, RUN_TIMEOUT_MS / 1000, queued)
    errors, foreign, cached, fresh, ran = 0, 0, 0, 0, set()
    for page in pages:
        errors += errors_shown(page)
        if not finished(page) or not page.get_by_role("heading", name="Rounds and statistics").is_visible():
            errors += 1
            continue
        trace = download_trace(page)
        tokens = [t for e in trace["speculative"]["events"] for t in e["committed"]]
        foreign += tokens != expected_tokens
        if trace["meta"].get("cached"):
            cached += 1
            errors += not page.get_by_text("replayed from the shared cache").count()  # a replay must say so
        else:  # a run of its own, or one it joined (the same request, waiting or running)
            fresh += 1
            ran.add(trace["meta"].get("created"))
    for c in contexts:
        c.close()
    return {
        "classroom_live_sessions": sessions,
        **_spread("classroom_live", latency),
        "classroom_live_runs": len(ran),  # distinct runs the models made (by their creation time)
        "classroom_live_joined": fresh - len(ran),  # sessions answered by a run they joined
        "classroom_live_replays": cached,
        "classroom_live_queue_shown": queue_seen,
        "classroom_live_errors": errors + sessions - len(latency),
        "classroom_live_foreign_outputs": foreign,
    }


def _value(slider: Any) -> float:
    return float(slider.evaluate("e => e.getAttribute('aria-valuenow') ?? e.value"))


def classroom_lessons(url: str, browser: Any, sessions: int) -> dict[str, Any]:
    """`sessions` browsers (spread over the lesson pages) move a slider at once: 1, 2 or 3
    steps right, so each must end showing its own value."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(sessions)]
    jobs = []
    for i, c in enumerate(contexts):
        name, key, query = LESSON_SLIDERS[i % len(LESSON_SLIDERS)]
        page = c.new_page()
        page.add_init_script(COUNT_MESSAGES)
        page.goto(f"{url}/{name}" + (f"?{query}" if query else ""))
        slider = page.locator(f".st-key-{key} [role='slider'], .st-key-{key} input[type='range']").first
        slider.wait_for(timeout=120_000)
        jobs.append((page, slider, 1 + i % 3))
    for page, *_ in jobs:
        settled(page, timeout_s=300)
    before = [_value(slider) for _, slider, _ in jobs]
    for page, *_ in jobs:
        page.evaluate(_ARM, [300, None])
    for _page, slider, steps in jobs:
        slider.focus()
        for _ in range(steps):
            slider.press("ArrowRight")
    latency = _latencies([page for page, *_ in jobs], 300)
    errors = len(jobs) - len(latency)
    foreign = 0
    for i, (page, slider, _steps) in enumerate(jobs):
        if i in latency:
            try:
                settled(page, quiet_s=0.3, timeout_s=60)  # whatever came after the clock stopped
            except TimeoutError:
                errors += 1
        errors += errors_shown(page)
        foreign += not _value(slider) > before[i]  # moved, by this session's own presses
    for c in contexts:
        c.close()
    return {
        "classroom_lessons_sessions": sessions,
        **_spread("classroom_lessons", latency),
        "classroom_lessons_errors": errors,
        "classroom_lessons_foreign_values": foreign,
    }


# -- a class on several processes behind nginx (python -m bench.classroom) -----------------------
QUIZ_PAGE = "cost"
QUIZ = tomllib.loads((ROOT / "lessons" / "en" / f"{QUIZ_PAGE}.toml").read_text("utf-8"))["quiz"]
QUESTIONS = 2  # answered by each learner
TOY_QUERY = "live_target=toy&live_draft=toy_draft&live_max=16&live_compare=0"


def _route(context: Any) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "sdroute")


def _answer_all(pages: list[Any]) -> tuple[int, int]:
    """Every learner answers :data:`QUESTIONS` questions, all at each question before the next
    (even learners right, odd ones wrong); (answers given, learners whose feedback never came)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    given, errors = 0, 0
    for question in range(QUESTIONS):
        n, right = len(QUIZ[question]["options"]), QUIZ[question]["answer"]
        waiting = []
        for i, page in enumerate(pages):
            option = right if i % 2 == 0 else (right + 1) % n
            radio = page.locator(f".st-key-quiz_{QUIZ_PAGE}_{question}").get_by_test_id("stRadioOption")
            radio.first.wait_for(timeout=120_000)
            radio.nth(option).click()  # every learner sees the file's order
            given += 1
            waiting.append((page, "stAlertContentSuccess" if option == right else "stAlertContentError"))
        for page, feedback in waiting:
            try:
                page.get_by_test_id(feedback).nth(question).wait_for(timeout=120_000)
            except PlaywrightTimeout:  # counted, and the class goes on
                errors += 1
    return given, errors


def _stored_answers(url: str) -> int:
    from sqlalchemy import create_engine, func, select

    from specdec_core.live.answers import answers_table

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(answers_table)).scalar() or 0)
    finally:
        engine.dispose()


def class_on_processes(replicas: Any, browser: Any, learners: int, query: str) -> dict[str, Any]:
    """`learners` browsers through the proxy: quiz answers, then one run and its replays."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
                for _ in range(learners)]  # fmt: skip
    pages = [c.new_page() for c in contexts]
    for page in pages:
        page.goto(f"{replicas.url}/{QUIZ_PAGE}")
    where = [replicas.process_of(_route(c)) for c in contexts]
    given, errors = _answer_all(pages)
    for page in pages:
        open_live(page, replicas.url, query)
    first = where.index(0)
    first_run_s, trace = live_run(pages[first])
    expected = [t for e in trace["speculative"]["events"] for t in e["committed"]]
    others = [i for i in range(learners) if i != first]
    for i in others:
        pages[i].evaluate(_ARM, [0, FINISHED_ID])
    for i in others:
        pages[i].get_by_role("button", name="Generate").click()
    latency = _latencies([pages[i] for i in others], RUN_TIMEOUT_MS / 1000)
    latency = {others[k]: v for k, v in latency.items()}
    errors += len(others) - len(latency)
    replays, foreign = 0, 0
    for i in others:
        errors += errors_shown(pages[i])
        if not finished(pages[i]):
            continue
        got = download_trace(pages[i])
        foreign += [t for e in got["speculative"]["events"] for t in e["committed"]] != expected
        replays += bool(got["meta"].get("cached"))
    for c in contexts:
        c.close()
    deadline = time.time() + 30
    stored = _stored_answers(replicas.database_url)
    while stored < given and time.time() < deadline:  # answers waiting in an outbox are written soon
        time.sleep(1)
        stored = _stored_answers(replicas.database_url)
    on = {p: [latency[i] for i in others if where[i] == p and i in latency] for p in set(where)}
    times = sorted(latency.values())
    here, there = on.get(0, []), [t for p, ts in on.items() if p != 0 for t in ts]
    return {
        "learners": learners,
        "learners_per_process": [where.count(p) for p in range(len(replicas.ports))],
        "first_run_s": first_run_s,
        "replays": replays,
        "fresh_runs": len(latency) - replays,
        "foreign_outputs": foreign,
        "replay_median_s_per_process": [
            statistics.median(on[p]) if on.get(p) else None for p in range(len(replicas.ports))
        ],
        "median_s": statistics.median(times) if times else None,
        "worst_s": times[-1] if times else None,
        "errors": errors + foreign,
        "answers_given": given,
        "answers_lost": given - stored,
        "replay_ratio": statistics.median(there) / statistics.median(here) if here and there else None,
    }


def _table(r: dict[str, Any]) -> str:
    rows = [("process", "learners", "replay median s")]
    for p, (n, m) in enumerate(zip(r["learners_per_process"], r["replay_median_s_per_process"], strict=True)):
        rows.append((str(p), str(n), "-" if m is None else f"{m:.2f}"))
    width = [max(len(row[k]) for row in rows) for k in range(3)]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, width, strict=True)) for row in rows]
    lines.append(
        f"first run {r['first_run_s']:.2f} s on process 0; {r['replays']} replays, "
        f"{r['fresh_runs']} fresh runs; "
        f"answers {r['answers_given']} given, {r['answers_lost']} lost; errors {r['errors']}"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="A class on several app processes behind nginx.")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="8 learners on the toy pair")
    parser.add_argument("--learners", type=int, default=None)
    parser.add_argument("--model", choices=("bundled", "toy"), default=None,
                        help="the live request's target (default: bundled, toy with --quick)")  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from support.postgres import Cluster
    from support.replicas import Replicas

    model = args.model or ("toy" if args.quick else "bundled")
    learners = args.learners or (8 if args.quick else 30)
    cluster = Cluster()
    try:
        database = cluster.new_database()
        preload = "toy" if model == "toy" else "bundled,toy"
        logs = ROOT / "artifacts" / "bench-classroom"
        with Replicas(cluster, database, args.processes, preload, logs) as replicas, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            result = class_on_processes(replicas, browser, learners, TOY_QUERY if model == "toy" else "")
            browser.close()
    finally:
        cluster.remove()
    result = {"processes": args.processes, "model": model, **result}
    print(_table(result))
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in result.items()}))


if __name__ == "__main__":
    main()
