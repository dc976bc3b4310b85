"""The three test tiers, told apart by marker: ``slow`` loads the real bundled model, ``browser``
drives the served app in Chromium (every test under tests/browser/ is one), ``fast`` is every
other test. pyproject.toml's ``-m fast`` makes a bare ``pytest`` run the fast tier alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("fast", "slow", "browser")
BROWSER_DIR = ROOT / "tests" / "browser"


def tier(markers: Iterable[str], path: Path) -> str:
    """The tier of a test with these marker names, defined in the file at `path`."""
    names = set(markers)
    if "browser" in names or BROWSER_DIR in path.parents:
        return "browser"
    return "slow" if "slow" in names else "fast"


def mark_tiers(items: Sequence[pytest.Item]) -> None:
    """Give every collected test its tier's marker, so ``-m`` can pick tiers by name."""
    for item in items:
        names = {mark.name for mark in item.iter_markers()}
        name = tier(names, item.path)
        if name not in names:
            item.add_marker(getattr(pytest.mark, name))
