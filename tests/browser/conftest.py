"""What the browser tests share beyond the served app and Chromium (those are in the root
conftest.py, from support/browser.py): stale elements, and where screenshots go."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.browser import ROOT

SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def stale_texts(page) -> list[str]:
    """The text of every element Streamlit marks stale (not yet redrawn by the run going on),
    empty ones left out: a run's own placeholders are stale and empty until it writes them."""
    texts = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-stale=true]')).map(e => e.textContent.trim())"
    )
    return [t for t in texts if t]


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nScreenshots are saved in {SCREENSHOTS}")
    return SCREENSHOTS
