"""The app served by ``streamlit run`` and Debian's Chromium that drives it: one setup for the
browser tests and the browser benches alike.

Chromium comes from Debian (``apt-get install chromium``, done by ``.ci/setup.sh --test``);
Playwright never downloads a browser here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]
VIEWPORT = {"width": 1280, "height": 900}


def free_port() -> int:
    """A TCP port free on this machine now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_cmd(port: int) -> list[str]:
    """`streamlit run app.py` on `port`, headless, as every browser test serves it."""
    return [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless", "true", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip


@contextlib.contextmanager
def serve(
    cmd: list[str], port: int, log: Path, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> Iterator[str]:
    """Run a Streamlit server command in `cwd` (output to `log`), wait until its health check
    answers, yield its URL; stop it afterwards."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
    url = f"http://localhost:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"streamlit did not start; see {log}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


#: Init script: counts websocket messages into ``window.__sdMessages`` (:func:`reset_messages`,
#: :func:`messages`), so a test or a bench can tell how much of a page one change resent.
COUNT_MESSAGES = """(() => {
  const Plain = window.WebSocket;
  window.__sdMessages = 0;
  window.WebSocket = function (...args) {
    const socket = new Plain(...args);
    socket.addEventListener('message', () => { window.__sdMessages += 1; }, true);
    return socket;
  };
  window.WebSocket.prototype = Plain.prototype;
  Object.assign(window.WebSocket, Plain);
})()"""


def reset_messages(page: Any) -> None:
    """Start counting `page`'s websocket messages from zero (needs :data:`COUNT_MESSAGES`)."""
    page.evaluate("() => { window.__sdMessages = 0; }")


def messages(page: Any) -> int:
    """`page`'s websocket messages since the last :func:`reset_messages`."""
    return page.evaluate("() => window.__sdMessages")


def wait_for_page(page: Any, timeout: float = 45_000) -> None:
    """Until the page's title is shown and Streamlit's "running" widget is gone."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible(timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout
    )


def wait_not_stale(page: Any, timeout: float = 45_000) -> None:
    """Until no element is marked stale (a rerun's redraw has reached every element)."""
    page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')", timeout=timeout)
