"""pytest for the whole checkout (tests/ and bench/tests/): each test's tier marker, and the app
served to Debian's Chromium for the browser tests."""

from __future__ import annotations

from specdec_core.models.omp import prefer_passive_wait

prefer_passive_wait()  # first: libgomp reads its wait policy once, when torch loads (models/omp.py)

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from support import tiers  # noqa: E402
from support.browser import ARGS, CHROMIUM, ROOT, VIEWPORT, free_port, serve, streamlit_cmd  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before `-m` picks the tiers to run
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tiers.mark_tiers(items)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `bash .ci/setup.sh --test` (it installs Debian's chromium).")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Serve app.py on a free port for the whole session; stop it afterwards."""
    port = free_port()
    with serve(streamlit_cmd(port), port, ROOT / "artifacts" / "streamlit-browser-test.log") as url:
        yield url
