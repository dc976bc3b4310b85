"""The Compare page's default grid in a real browser: how long it takes from Run to the finished
heatmaps with its models already loaded, against the estimate the page shows before the run.

    .venv/bin/python -m bench.compare_page          # two trials, each on a fresh server

(from the repository root; figures go to bench/RESULTS.md.) Each trial serves the app afresh
(so the class's cache holds nothing), loads the default grid's models by running a warm-up grid
of the same target and drafts on the copying category (not in the default grid, so nothing of
it is replayed), reads the estimate the page then shows for the default grid (paced by the
warm-up's runs), presses Run and times until the new heatmap, its verdict and its table are
drawn. The last line is one JSON object: ``grid_s`` and ``estimate_s`` (one per trial),
``estimate_ratio`` (estimate ÷ measured), ``runs`` and ``tokens`` of the default grid.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from bench.live_browser import Server, errors_shown, settled
from support.browser import ARGS, CHROMIUM, VIEWPORT

ROOT = Path(__file__).resolve().parents[1]
TRIALS = 2
WARM_QUERY = "cmp_cats=copy"  # the default target and drafts, on a category the default grid lacks
RUN_TIMEOUT_MS = 900_000
_ESTIMATE = re.compile(r"(\d+) generations of up to (\d+) tokens: about ([\d.]+) minutes")
#: the shipped example's notice is gone and the page shows a finished grid's verdict
_DONE = """() => !document.body.innerText.includes('Nothing has run in this session yet')
  && document.body.innerText.includes("every draft's output equals its target's own")
  && !document.querySelector('[data-testid="stProgress"]')"""


def run_grid(page: Any) -> float:
    """Press Run; seconds until the finished grid is drawn."""
    page.get_by_role("button", name="Run the grid").click()
    start = time.perf_counter()
    page.wait_for_function(_DONE, polling=250, timeout=RUN_TIMEOUT_MS)
    seen = time.perf_counter() - start
    settled(page)
    if errors_shown(page):
        raise RuntimeError("the Compare page shows an error")
    return seen


def estimate(page: Any) -> tuple[int, int, float, str]:
    """(runs, tokens, seconds, the whole line) of the estimate the page shows."""
    line = page.get_by_text(_ESTIMATE).first.inner_text()
    runs, tokens, minutes = _ESTIMATE.search(line).groups()  # type: ignore[union-attr]
    return int(runs), int(tokens), 60 * float(minutes), line


def trial(browser: Any, log: Path) -> dict[str, Any]:
    server = Server(log)
    try:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{server.url}/compare?{WARM_QUERY}")
        page.get_by_role("button", name="Run the grid").wait_for(timeout=120_000)
        settled(page)
        warm = run_grid(page)  # loads the target and drafts
        page.goto(f"{server.url}/compare")
        page.get_by_role("button", name="Run the grid").wait_for(timeout=120_000)
        settled(page)
        runs, tokens, est, line = estimate(page)
        took = run_grid(page)
        page.close()
        return {
            "warm_s": warm,
            "grid_s": took,
            "estimate_s": est,
            "runs": runs,
            "tokens": tokens,
            "line": line,
        }
    finally:
        server.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        for i in range(TRIALS):
            t = trial(browser, ROOT / "artifacts" / f"compare_page_{i}.log")
            print(
                f"trial {i + 1}: warm-up grid {t['warm_s']:.1f} s; default grid {t['grid_s']:.1f} s "
                f"({t['runs']} runs × {t['tokens']} tokens); estimate shown {t['estimate_s']:.0f} s "
                f"(ratio {t['estimate_s'] / t['grid_s']:.2f})\n  {t['line']}",
                flush=True,
            )
            out.append(t)
        browser.close()
    print(
        json.dumps(
            {
                "grid_s": [round(t["grid_s"], 1) for t in out],
                "estimate_s": [round(t["estimate_s"], 1) for t in out],
                "estimate_ratio": [round(t["estimate_s"] / t["grid_s"], 3) for t in out],
                "runs": out[0]["runs"],
                "tokens": out[0]["tokens"],
            }
        )
    )


if __name__ == "__main__":
    main()
