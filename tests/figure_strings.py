"""Figure strings for the tests, read from lessons/<lang>/<page>.toml as the pages read them.

pages/common/i18n.py needs streamlit; this reads the same files with tomllib: a dotted key is
looked up in the page's table, then in common.toml, in one language only (the app falls back
to English, the tests must not), so a key missing in either language fails a test.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
LANGS = ("en", "zh")

#: Each figure-string source: the page and the table its figures are given.
TABLES: dict[str, tuple[str, str]] = {
    "answers": ("answers", "fig"),
    "block": ("block", "fig"),
    "compare": ("compare", "fig"),
    "cost": ("cost", "fig"),
    "overlap.overlap": ("overlap", "chart.overlap"),
    "overlap.conservation": ("overlap", "chart.conservation"),
    "overlap.residual": ("overlap", "chart.residual"),
    "overlap.emitted": ("overlap", "chart.emitted"),
    "overlap.comparison": ("overlap", "chart.comparison"),
    "overlap.alpha_temperature": ("overlap", "chart.alpha_temperature"),
    "sampling_lab": ("sampling_lab", "chart"),
    "tree": ("tree", "chart"),
    "tree_drafts": ("tree_drafts", "fig"),
    "self_spec": ("self_spec", "fig"),
    "live": ("live", "fig"),
    "live.histogram": ("live", "fig_hist"),
    "race": ("race", "fig"),
    "live.tree": ("live", "fig_tree"),
    "live.pieces": ("live", "pieces"),
    "law_live": ("law_live", "fig"),
    "round": ("round", "fig"),
    "roofline": ("roofline", "fig"),
}

#: The token kinds the live page adds to its ``[fig]`` table (pages/live_parts/tokens.py).
LIVE_KINDS = ("accepted", "rejected", "corrected", "bonus", "target")


@cache
def table(lang: str, name: str) -> dict[str, Any]:
    """lessons/<lang>/<name>.toml, parsed."""
    with (LESSONS / lang / f"{name}.toml").open("rb") as f:
        return tomllib.load(f)


def string(lang: str, page: str, key: str) -> Any:
    """The value of dotted `key` for `page` in `lang`: the page's table, then common.toml."""
    for name in (page, "common"):
        node: Any = table(lang, name)
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
        else:
            return node
    raise KeyError(f"no string {key!r} for page {page!r} in {lang!r}")


def figure_text(source: str, lang: str = "en") -> dict[str, str]:
    """The mapping the page passes to the figures of `source` (a key of :data:`TABLES`)."""
    page, key = TABLES[source]
    text = dict(string(lang, page, key))
    if source == "live":  # the live page adds the kinds and "not examined"
        text |= {kind: string(lang, "live", f"kinds.{kind}") for kind in LIVE_KINDS}
        text["void"] = string(lang, "live", "void")
    return text
