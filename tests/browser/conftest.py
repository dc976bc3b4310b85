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


def copy_link(page) -> str:
    """Press the sidebar's "Copy link to this setup" and return the link it shows (the address
    now holds it too): the one way a page's settings reach its address. Each press draws its
    link in a new block (``shared_link_<n>``), so an earlier link is never read for this one."""
    blocks = page.get_by_test_id("stSidebar").locator('[class*="st-key-shared_link_"]')
    before = blocks.count() and blocks.first.get_attribute("class")
    page.locator(".st-key-_share_link button").click()
    page.wait_for_function(
        """before => {
            const b = document.querySelector('[data-testid=stSidebar] [class*="st-key-shared_link_"]');
            return b && b.getAttribute("class") !== before && b.querySelector("[data-testid=stCode]");
        }""",
        arg=before or "",
        timeout=45_000,
    )
    return (blocks.first.get_by_test_id("stCode").text_content() or "").strip()
