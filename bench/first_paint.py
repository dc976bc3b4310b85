"""How long a lesson takes to open: from a click on its sidebar link to its first figure drawn.

``streamlit run app.py`` serves the app to headless Chromium with the browser tests' settings
(support/browser.py). Every lesson page (a page with lesson text, ``lessons/en/<page>.md``) is
first visited once through the sidebar and left to settle: that visit is not counted (the
server compiles the page and fills its caches then). Each following pass clicks every page's
link again, in the course's order, and times inside the browser from the pointer press to the
page's first figure drawn (a new ``.js-plotly-plot`` holding its SVG, not stale) or, on a page
without a figure, its first paragraph; and to its first text (``text_s``: a new paragraph or
heading, the page's first lines run by the server and drawn); the server (bench.lessons'
``--serve``) notes its script runs' seconds for each visit (``server_s``), so the rest is the
browser's and the wire's. A page's figures are medians over the passes. Prints one line per
page and, last, one JSON line with ``median_s`` and ``worst_s`` over the pages (goals:
median ≤ 1.0 s, worst ≤ 2.0 s).

    .venv/bin/python -m bench.first_paint [--passes 3] [--quick]    # from the repository root
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.lessons import _runs
from bench.live_browser import ROOT, errors_shown, settled
from pages.common.nav import PAGES
from support.browser import ARGS, CHROMIUM, VIEWPORT, free_port, serve

#: Goals of issue 63: a lesson opens in a second at the median, two at worst.
GOAL_MEDIAN_S, GOAL_WORST_S = 1.0, 2.0

#: Armed before a click with `figure` (whether the page has one): notes what the page holds
#: (each paragraph's text, each figure's data); the pointer press starts the clock; every
#: animation frame then looks for a paragraph or heading of the new page (one not held before,
#: or changed, and not stale: the server's first lines run and drawn), then a new figure with its
#: SVG (or, `figure` false, a new paragraph), and stops the clock there.
_ARM = """figure => {
  const m = document.querySelector('[data-testid="stMain"]');
  const TEXT = '[data-testid="stMarkdownContainer"] p, [data-testid="stHeading"]';
  const FIGURE = '.js-plotly-plot';
  const sign = el => el.matches(FIGURE) ? el.data : el.textContent;
  const held = new Map(Array.from(m.querySelectorAll(TEXT + ',' + FIGURE)).map(el => [el, sign(el)]));
  const fresh = el => !el.closest('[data-stale="true"]') && (!held.has(el) || held.get(el) !== sign(el));
  const clock = window.__sdPaint = {start: null, text: null, end: null};
  document.addEventListener('pointerdown', () => { clock.start = performance.now(); },
                            {capture: true, once: true});
  const any = sel => Array.from(m.querySelectorAll(sel)).some(el => fresh(el) && el.textContent.trim());
  const tick = () => {
    if (clock.start !== null) {
      if (clock.text === null && any(TEXT)) clock.text = performance.now();
      const done = figure
        ? Array.from(m.querySelectorAll(FIGURE)).some(g => fresh(g) && g.querySelector('.main-svg'))
        : any('[data-testid="stMarkdownContainer"] p');
      if (done) { clock.end = performance.now(); return; }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
_CLOCK = """() => { const c = window.__sdPaint;
  return c.end !== null && [(c.end - c.start) / 1000, ((c.text ?? c.end) - c.start) / 1000]; }"""
_HAS_FIGURE = "() => !!document.querySelector('[data-testid=\"stMain\"] .js-plotly-plot .main-svg')"


def lesson_pages() -> list[str]:
    """The pages with lesson text, in the course's order (their URL path is their key)."""
    return [p.key for p in PAGES if (ROOT / "lessons" / "en" / f"{p.key}.md").exists()]


def summary(seconds: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Per page the median of its timed visits; over the pages the median and the worst, the
    worst page, and whether the goals are met."""
    if not seconds or not all(seconds.values()):
        raise ValueError("every page needs at least one timed visit")
    per_page = {page: round(statistics.median(xs), 3) for page, xs in seconds.items()}
    worst_page = max(per_page, key=per_page.__getitem__)
    median_s, worst_s = statistics.median(per_page.values()), per_page[worst_page]
    return {
        "pages": per_page,
        "median_s": round(median_s, 3),
        "worst_s": worst_s,
        "worst_page": worst_page,
        "median_goal_met": median_s <= GOAL_MEDIAN_S,
        "worst_goal_met": worst_s <= GOAL_WORST_S,
    }


def _link(page: Any, key: str) -> Any:
    path = "" if key == "home" else key
    return page.get_by_test_id("stSidebarNav").locator(f'a[href$="/{path}"]').first


def _visit(page: Any, key: str, log: Path, figure: bool | None = None) -> list[float] | None:
    """Click `key`'s sidebar link and wait for the page to settle; timed when `figure` (whether
    the page draws one) is given: the seconds to its first figure (or paragraph), to its first
    text, and of the server's script runs for the visit (`log`, written by the server)."""
    if figure is not None:
        page.evaluate(_ARM, figure)
    seen = len(_runs(log))
    _link(page, key).click()
    seconds = None
    if figure is not None:
        seconds = page.wait_for_function(_CLOCK, polling=50, timeout=120_000).json_value()
    deadline = time.perf_counter() + 120
    while len(_runs(log)) == seen:  # a loaded server may start the run after `settled`'s quiet
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the server never ran {key}")
        time.sleep(0.05)
    settled(page)
    if seconds is not None:
        seconds.append(sum(run["s"] for run in _runs(log)[seen:]))
    return seconds


def measure(
    url: str, log: Path, pages: list[str], passes: int
) -> tuple[dict[str, list[list[float]]], list[str]]:
    """Per page, `passes` visits after one that is not counted, each [seconds to the first figure
    (or paragraph), to the first text, of the server's runs]; and the pages left out for an error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        _link(page, pages[0]).wait_for(timeout=120_000)
        settled(page)
        looks: dict[str, bool] = {}
        failed = []
        for key in pages:  # first visits: not counted
            _visit(page, key, log)
            if errors_shown(page):
                failed.append(key)
            else:
                looks[key] = page.evaluate(_HAS_FIGURE)
        seconds: dict[str, list[list[float]]] = {key: [] for key in looks}
        for _ in range(passes):
            for key in looks:
                seconds[key].append(_visit(page, key, log, looks[key]))
        browser.close()
    return seconds, failed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=3, help="timed visits per page")
    ap.add_argument("--quick", action="store_true", help="one timed visit per page")
    args = ap.parse_args(argv)
    pages, port = lesson_pages(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "runs.jsonl"  # bench.lessons' server notes each script run's seconds
        cmd = [sys.executable, "-m", "bench.lessons", "--serve", str(port), str(log)]
        with serve(cmd, port, Path(tmp) / "server.log") as url:
            visits, failed = measure(url, log, pages, 1 if args.quick else args.passes)
    out = summary({key: [v[0] for v in vs] for key, vs in visits.items()})
    for name, i in (("text_s", 1), ("server_s", 2)):
        out[name] = {key: round(statistics.median(v[i] for v in vs), 3) for key, vs in visits.items()}
    out["error_pages"] = failed
    print(f"{'page':<14} {'figure':>7} {'text':>7} {'server':>7}   visits (figure)")
    for key, vs in visits.items():
        row = " ".join(f"{x[key]:6.3f}s" for x in (out["pages"], out["text_s"], out["server_s"]))
        print(f"{key:<14} {row}   {', '.join(f'{v[0]:.3f}' for v in vs)}")
    print(f"median {out['median_s']:.3f} s (goal ≤ {GOAL_MEDIAN_S}), worst {out['worst_s']:.3f} s "
          f"on {out['worst_page']} (goal ≤ {GOAL_WORST_S})")  # fmt: skip
    if failed:
        print(f"left out, showing an error: {', '.join(failed)}")
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
