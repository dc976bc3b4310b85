"""Opening pages under Streamlit's AppTest, honestly.

Streamlit 1.67's AppTest runs ``app.py`` only on a first run without ``switch_page``;
with ``switch_page`` (or on any later run) it executes the page file alone. Every page
therefore sets itself up (language, style, URL state) through ``pages.common.page.start``,
and each scenario here starts a fresh AppTest with its language, URL and state given
*before* the first run — nothing relies on state carried over from app.py. The entry
script itself is covered by tests/test_app_shell.py and the browser tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def open_page(
    page: str,
    lang: str = "en",
    query: dict[str, str] | None = None,
    state: dict[str, Any] | None = None,
    timeout: float = 60,
) -> AppTest:
    """A fresh AppTest showing pages/<page>.py, already run once; asserts no exception."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["lang"] = lang
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rerun(at: AppTest) -> AppTest:
    """Run again and assert the page raised nothing."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
