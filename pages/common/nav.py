"""The course map: every page, its section and icon. app.py and the home page read it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    """``key`` names the page's strings (``nav.<key>`` in common.toml, ``<key>.toml``)."""

    key: str
    section: str
    icon: str

    @property
    def file(self) -> str:
        return f"pages/{self.key}.py"


SECTIONS = ("start", "sampling", "speculative", "live", "teaching", "about")

PAGES: tuple[PageInfo, ...] = (
    PageInfo("home", "start", ":material/school:"),
    PageInfo("notation", "start", ":material/functions:"),
    PageInfo("sampling_lab", "sampling", ":material/tune:"),
    PageInfo("overlap", "speculative", ":material/stacked_bar_chart:"),
    PageInfo("tree", "speculative", ":material/account_tree:"),
    PageInfo("block", "speculative", ":material/view_week:"),
    PageInfo("tree_drafts", "speculative", ":material/schema:"),
    PageInfo("cost", "speculative", ":material/speed:"),
    PageInfo("roofline", "speculative", ":material/roofing:"),
    PageInfo("self_spec", "speculative", ":material/psychology:"),
    PageInfo("live", "live", ":material/bolt:"),
    PageInfo("round", "live", ":material/timeline:"),
    PageInfo("race", "live", ":material/sports_score:"),
    PageInfo("tokenizers", "live", ":material/translate:"),
    PageInfo("compare", "live", ":material/grid_on:"),
    PageInfo("law_live", "live", ":material/fact_check:"),
    PageInfo("teach", "teaching", ":material/co_present:"),
    PageInfo("handouts", "teaching", ":material/print:"),
    PageInfo("exercises", "teaching", ":material/assignment:"),
    PageInfo("answers", "teaching", ":material/how_to_vote:"),
    PageInfo("about", "about", ":material/info:"),
)
