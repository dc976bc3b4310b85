"""How long a lesson takes to open: from a click on its sidebar link to its first figure drawn.

``streamlit run app.py`` serves the app to headless Chromium with the browser tests' settings
(support/browser.py). Every lesson page (a page with lesson text, ``lessons/en/<page>.md``) is
first visited once through the sidebar and left to settle: that visit is not counted (the
server compiles the page and fills its caches then). Each following pass clicks every page's
link again, in the course's order, and times inside the browser from the pointer press to the
page's first figure drawn (a ``.js-plotly-plot`` holding its SVG, not stale, under the new
page's title) or, on a page without a figure, its first paragraph. A page's figure is its
median over the passes. Prints one line per page and, last, one JSON line with ``median_s``
and ``worst_s`` over the pages (goals: median ≤ 1.0 s, worst ≤ 2.0 s).

    .venv/bin/python -m bench.first_paint [--passes 3] [--quick]    # from the repository root
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from bench.live_browser import ROOT, Server, errors_shown, settled
from pages.common.nav import PAGES
from support.browser import ARGS, CHROMIUM, VIEWPORT

#: Goals of issue 63: a lesson opens in a second at the median, two at worst.
GOAL_MEDIAN_S, GOAL_WORST_S = 1.0, 2.0

#: Armed before a click with ``[title, figure]``: the pointer press starts the clock; every
#: animation frame then looks for the new page (its title in a heading, not stale) and its first
#: figure with its SVG (or, `figure` false, a paragraph of text), and stops the clock there.
_ARM = """([title, figure]) => {
  const clock = window.__sdPaint = {start: null, end: null};
  document.addEventListener('pointerdown', () => { clock.start = performance.now(); },
                            {capture: true, once: true});
  const fresh = el => !el.closest('[data-stale="true"]');
  const main = () => document.querySelector('[data-testid="stMain"]');
  const drawn = () => {
    const m = main();
    const heads = m ? Array.from(m.querySelectorAll('h1')) : [];
    if (!heads.some(h => fresh(h) && h.textContent.trim() === title)) return false;
    if (figure) return Array.from(m.querySelectorAll('.js-plotly-plot .main-svg')).some(fresh);
    return Array.from(m.querySelectorAll('[data-testid="stMarkdownContainer"] p'))
      .some(p => fresh(p) && p.textContent.trim() && !p.closest('h1'));
  };
  const tick = () => {
    if (clock.start !== null && drawn()) { clock.end = performance.now(); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
_CLOCK = "() => window.__sdPaint.end !== null && (window.__sdPaint.end - window.__sdPaint.start) / 1000"
_TITLE = """() => { const h = document.querySelector('[data-testid="stMain"] h1');
  return h ? h.textContent.trim() : null; }"""
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


def _visit(page: Any, key: str, title: str | None = None, figure: bool = True) -> float | None:
    """Click `key`'s sidebar link and wait for the page to settle; the seconds to its first
    figure (or paragraph) when `title` is given."""
    if title is not None:
        page.evaluate(_ARM, [title, figure])
    _link(page, key).click()
    seconds = None
    if title is not None:
        seconds = float(page.wait_for_function(_CLOCK, polling=50, timeout=120_000).json_value())
    settled(page)
    return seconds


def measure(url: str, pages: list[str], passes: int) -> tuple[dict[str, list[float]], list[str]]:
    """Seconds from click to first figure (or paragraph), `passes` visits per page after one
    visit each that is not counted; and the pages left out because they show an error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        _link(page, pages[0]).wait_for(timeout=120_000)
        settled(page)
        looks: dict[str, tuple[str, bool]] = {}
        failed = []
        for key in pages:  # first visits: not counted
            _visit(page, key)
            if errors_shown(page):
                failed.append(key)
            else:
                looks[key] = (page.evaluate(_TITLE), page.evaluate(_HAS_FIGURE))
        seconds: dict[str, list[float]] = {key: [] for key in looks}
        for _ in range(passes):
            for key in looks:
                seconds[key].append(_visit(page, key, *looks[key]))
        browser.close()
    return seconds, failed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=3, help="timed visits per page")
    ap.add_argument("--quick", action="store_true", help="one timed visit per page")
    args = ap.parse_args(argv)
    pages = lesson_pages()
    server = Server(ROOT / "artifacts" / "first-paint-streamlit.log")
    try:
        seconds, failed = measure(server.url, pages, 1 if args.quick else args.passes)
    finally:
        server.close()
    out = {**summary(seconds), "error_pages": failed}
    for key in seconds:
        print(f"{key:<14} {out['pages'][key]:6.3f} s   visits: {', '.join(f'{x:.3f}' for x in seconds[key])}")
    print(f"median {out['median_s']:.3f} s (goal ≤ {GOAL_MEDIAN_S}), worst {out['worst_s']:.3f} s "
          f"on {out['worst_page']} (goal ≤ {GOAL_WORST_S})")  # fmt: skip
    if failed:
        print(f"left out, showing an error: {', '.join(failed)}")
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
