"""The first visit after a server starts: `streamlit run app.py` against `streamlit run serve.py`.

Each run starts a fresh server (support/browser.py's settings), lets it idle a second as a learner
would find it, opens the home page in headless Chromium and times the first heading and the
finished page; a second tab then times a warm visit. The two entry points alternate, so both
see the same machine. Prints one line per visit and, last, one JSON line with the medians.

    .venv/bin/python -m bench.first_visit [--runs 2]    # from the repository root
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.live_browser import ROOT
from support.browser import ARGS, CHROMIUM, VIEWPORT, free_port, serve, wait_for_page

HEADING = '[data-testid="stHeading"]'


def _command(script: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(ROOT / script),
        "--server.headless", "true", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip


def _visit(browser: Any, url: str) -> tuple[float, float]:
    page = browser.new_page(viewport=VIEWPORT)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(HEADING, timeout=60_000)
    heading = time.perf_counter() - start
    wait_for_page(page, 60_000)
    return heading, time.perf_counter() - start


def once(script: str) -> dict[str, float]:
    """Seconds of a fresh server's first visit (heading, finished) and a second tab's."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    log = Path(tempfile.mkdtemp()) / "server.log"
    with serve(_command(script, port), port, log) as url, sync_playwright() as pw:
        time.sleep(1.0)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        heading, done = _visit(browser, url)
        second = _visit(browser, url)[1]
        browser.close()
    return {"heading_s": heading, "first_s": done, "second_tab_s": second}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    seen: dict[str, list[dict[str, float]]] = {"app.py": [], "serve.py": []}
    for _ in range(args.runs):
        for script, runs in seen.items():
            runs.append(once(script))
            print(script, {k: round(v, 2) for k, v in runs[-1].items()}, flush=True)
    out = {
        f"{script.removesuffix('.py')}_{key}": round(statistics.median(r[key] for r in runs), 2)
        for script, runs in seen.items()
        for key in ("heading_s", "first_s", "second_tab_s")
    }
    print(json.dumps(out | {"runs": args.runs, "load": Path("/proc/loadavg").read_text().split()[0]}))


if __name__ == "__main__":
    main()
