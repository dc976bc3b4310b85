"""The app served by ``streamlit run`` and the live page driven in headless Chromium: what the
live-page bench (:mod:`bench.live_page`) and its classroom check (:mod:`bench.classroom`) share."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from support.browser import free_port, serve, streamlit_cmd

ROOT = Path(__file__).resolve().parents[1]

LIVE_QUERY = "live"  # the default settings: bundled + n-gram, copy prompt, greedy, compare on
RUN_TIMEOUT_MS = 600_000

#: Something on the page is still being worked on: a stale element, a skeleton, the status widget.
BUSY = (
    'document.querySelector(\'[data-stale="true"], [data-testid="stSkeleton"],'
    ' [data-testid="stStatusWidget"]\')'
)
_BUSY = f"() => !!{BUSY}"

#: The live page's finished view: its "Rounds and statistics" heading (Streamlit's anchor id).
FINISHED_ID = "rounds-and-statistics"
_FINISHED = f"() => !!document.getElementById('{FINISHED_ID}')"


class Server:
    """``streamlit run app.py`` on a free port, as the browser tests serve it (`log`: its output)."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self._stack = contextlib.ExitStack()
        self.url = self._stack.enter_context(serve(streamlit_cmd(self.port), self.port, log))

    def close(self) -> None:
        self._stack.close()


def settled(page: Any, quiet_s: float = 0.5, timeout_s: float = 120.0) -> None:
    """Wait until nothing is stale or a skeleton and the status widget is gone for `quiet_s`."""
    deadline = time.perf_counter() + timeout_s
    quiet_since = None
    while time.perf_counter() < deadline:
        if page.evaluate(_BUSY):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.perf_counter()
        elif time.perf_counter() - quiet_since >= quiet_s:
            return
        time.sleep(0.02)
    raise TimeoutError("the page did not settle")


def open_live(page: Any, url: str, query: str = "") -> None:
    page.goto(f"{url}/{LIVE_QUERY}" + (f"?{query}" if query else ""))
    page.get_by_role("button", name="Generate").wait_for(timeout=120_000)
    settled(page)


def finished(page: Any) -> bool:
    """The finished view is there: one lookup by id, cheap enough to poll (a role query
    computes every element's ARIA role in the browser that shares the model's cores)."""
    return bool(page.evaluate(_FINISHED))


def live_run(page: Any) -> tuple[float, dict[str, Any]]:
    """Press Generate, wait for the finished view; (click → view seconds, the downloaded trace)."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Generate").click()
    start = time.perf_counter()
    # one cheap lookup by id every 0.2 s: Playwright's role queries (expect(get_by_role(…)))
    # walk the whole page for each poll, on the cores the model runs on; a user's browser
    # does no such thing
    page.wait_for_function(_FINISHED, polling=200, timeout=RUN_TIMEOUT_MS)
    seen = time.perf_counter() - start
    expect(page.get_by_role("heading", name="Rounds and statistics")).to_be_visible()
    if errors_shown(page):
        raise RuntimeError("the live page shows an error")
    return seen, download_trace(page)


def errors_shown(page: Any) -> int:
    """Exceptions and error boxes on the page."""
    return page.get_by_test_id("stException").count() + page.get_by_test_id("stAlertContentError").count()


def download_trace(page: Any) -> dict[str, Any]:
    """The trace the live page offers for download (its "JSON trace" button)."""
    with page.expect_download(timeout=120_000) as info:
        page.get_by_test_id("stDownloadButton").filter(has_text="JSON trace").locator("button").click()
    return json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
