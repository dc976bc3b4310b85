"""A classroom on one server: the load check run by ``python -m bench.live_page``.

Live: N sessions press Generate on the default settings at once (one runs, the rest are
answered from the shared trace cache or wait their turn); latency is click → finished view.
Lessons: M sessions (spread over the lesson pages) move a slider at once; latency is key
press → page settled (nothing stale, no skeleton, no status widget for 0.3 s, after the
rerun's messages came). Both clocks run inside each page, started by the page's own
pointer or key event and stopped by a timer there, so every session is timed at once; a
harness that polled the pages one after another would add its own rounds to the later ones.
Every live session's text is checked against the plain greedy output and every slider
against the value its session moved it to (no session may see another's), and every page
for errors.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.live_browser import (
    BUSY,
    FINISHED_ID,
    RUN_TIMEOUT_MS,
    download_trace,
    errors_shown,
    finished,
    open_live,
    settled,
)
from support.browser import COUNT_MESSAGES

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
    errors, foreign, cached, ran = 0, 0, 0, 0
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
        else:
            ran += 1
    for c in contexts:
        c.close()
    return {
        "classroom_live_sessions": sessions,
        **_spread("classroom_live", latency),
        "classroom_live_runs": ran,
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
