"""Real-browser fixtures: the app served by `streamlit run`, driven by Debian's chromium.

Chromium comes from Debian (`apt-get install chromium`, done by `.ci/setup.sh --test`);
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

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def pytest_collection_modifyitems(items):
    """Mark this folder's tests `browser` (the hook sees every collected item, so filter by path)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `bash .ci/setup.sh --test` (it installs Debian's chromium).")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}


def stale_texts(page) -> list[str]:
    """The text of every element Streamlit marks stale (not yet redrawn by the run going on),
    empty ones left out: a run's own placeholders are stale and empty until it writes them."""
    texts = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-stale=true]')).map(e => e.textContent.trim())"
    )
    return [t for t in texts if t]


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
def serve(cmd: list[str], port: int, log: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a Streamlit server command (output to `log`), wait until its health check answers,
    yield its URL; stop it afterwards."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
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


@pytest.fixture(scope="session")
def app_url():
    """Serve app.py on a free port for the whole session; stop it afterwards."""
    port = free_port()
    with serve(streamlit_cmd(port), port, ROOT / "artifacts" / "streamlit-browser-test.log") as url:
        yield url


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nScreenshots are saved in {SCREENSHOTS}")
    return SCREENSHOTS
