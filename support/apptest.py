"""Opening pages under Streamlit's AppTest, honestly.

Streamlit 1.67 treats a ``pages/`` folder as a legacy multipage app until a run calls
``st.navigation``, and AppTest resets that flag before every run: with ``switch_page``
(and on every later run) it executes the page file alone, without ``app.py``. (In the
real server ``pages.common.page.start`` reroutes such a run through ``app.py``; under
AppTest it cannot, because a rerun would swallow button clicks.) Every page therefore
sets itself up — language, style, URL state — through ``start``, and each scenario here
starts a fresh AppTest with its language, URL and state given *before* the first run, so
nothing relies on state carried over from ``app.py``. The entry script is covered by
tests/test_app_shell.py (first runs without ``switch_page``) and by the browser tests,
which also open pages by their own URL. Importing this module makes AppTest scan the installed
packages for components once per process (:func:`scan_components_once`).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def scan_components_once() -> None:
    """Keep the first scan for installed v2 components for the rest of the process: each new
    AppTest's registry reads the metadata of every installed distribution (hundreds here),
    about a third of a page's first run in CPU time, and they do not change while tests run
    (tests/test_apptest_scan.py fails if AppTest stops calling ``manifest_scanner``'s scan)."""
    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


scan_components_once()


def open_page(
    page: str,
    lang: str = "en",
    query: dict[str, str] | None = None,
    state: dict[str, Any] | None = None,
    timeout: float = 60,
    secrets: dict[str, Any] | None = None,
) -> AppTest:
    """A fresh AppTest showing pages/<page>.py, already run once; asserts no exception.
    `secrets`: what ``.streamlit/secrets.toml`` would hold (read as TOML) for this session."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.secrets.update(secrets or {})
    at.query_params["lang"] = lang
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rerun(at: AppTest, settle: bool = True) -> AppTest:
    """Run again and assert the page raised nothing; with `settle`, until a run it started in
    the run service has ended and been collected (:func:`until_runs_end`), as a learner who
    waits for it sees the page."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return until_runs_end(at) if settle else at


def _tickets(at: AppTest) -> list[str]:
    return [k for k in at.session_state if k.startswith("_") and k.endswith("_ticket")]


def until_runs_end(at: AppTest, timeout: float = 300.0, poll: float = 0.01) -> AppTest:
    """Rerun `at` until no job of its page is left in the run service (session keys
    ``_<prefix>_ticket``). AppTest does not run the watching fragment on its timer: this reads
    the service's snapshots of the page's tickets and reruns the page once each has ended (a
    page rerun per poll would cost far more than the toy runs it waits for)."""
    from pages.common.models import run_service  # the process's service, as the page's runs use it

    deadline = time.monotonic() + timeout
    service = run_service()
    while tickets := _tickets(at):
        while not all(_ended(service, at.session_state[t]) for t in tickets):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{', '.join(tickets)} did not end within {timeout:.0f} s")
            time.sleep(poll)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def _ended(service: Any, ticket: str) -> bool:
    """Whether `ticket`'s run has ended (or the service no longer knows it: the page forgets it)."""
    try:
        return service.snapshot(ticket).ended_already
    except KeyError:
        return True


def shared_link(at: AppTest) -> dict[str, str]:
    """Press the sidebar's "copy link to this setup" (the only time a page writes its address)
    and return the query it wrote, one value per key."""
    at.button(key="_share_link").click()
    rerun(at, settle=False)
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
