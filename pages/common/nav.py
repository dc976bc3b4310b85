"""The course map: every page, its section and icon. app.py and the home page read it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class PageInfo:
    """``key`` names the page's strings (``nav.<key>`` in common.toml, ``<key>.toml``)."""

    key: str
    section: str
    icon: str

    @property
    def file(self) -> str:
        return f"pages/{self.key}.py"


SECTIONS = ("start", "sampling", "speculative", "live", "about")

PAGES: tuple[PageInfo, ...] = (
    PageInfo("home", "start", ":material/school:"),
    PageInfo("sampling_lab", "sampling", ":material/tune:"),
    PageInfo("overlap", "speculative", ":material/stacked_bar_chart:"),
    PageInfo("tree", "speculative", ":material/account_tree:"),
    PageInfo("block", "speculative", ":material/view_week:"),
    PageInfo("cost", "speculative", ":material/speed:"),
    PageInfo("live", "live", ":material/bolt:"),
    PageInfo("race", "live", ":material/sports_score:"),
    PageInfo("about", "about", ":material/info:"),
)


def available() -> list[PageInfo]:
    """Pages whose file exists (all of them once the course is complete)."""
    return [p for p in PAGES if (ROOT / p.file).is_file()]
