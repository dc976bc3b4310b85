"""Errors a reviewer found in the lessons (issue 52), each pinned so it cannot come back: numbers
are recomputed from specdec_core, claims are checked against the rule they describe."""

from __future__ import annotations

import re
import tomllib

import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from specdec_core.engine.drafters import keeps_draft
from tests.test_confidence_floor_law import FLOOR, Q_ROWS

LANGS = ("en", "zh")


def _md(lang: str, page: str) -> str:
    """The lesson text with each line break inside a paragraph read as a space."""
    return re.sub(r"(?<=\S)\n(?=\S)", " ", (LESSONS / lang / f"{page}.md").read_text("utf-8"))


def _section(lang: str, page: str, section: str) -> str:
    text = parse((LESSONS / lang / f"{page}.md").read_text("utf-8")).sections[section]
    return re.sub(r"(?<=\S)\n(?=\S)", " ", text)


def _toml(lang: str, page: str) -> dict:
    return tomllib.loads((LESSONS / lang / f"{page}.toml").read_text("utf-8"))


# ---------------------------------------------------------------- item 2: the whole-sequence proof
@pytest.mark.parametrize("lang", LANGS)
def test_the_proofs_history_holds_stop_decisions_not_the_rounds_gamma(lang):
    proof = _section(lang, "block", "proof")
    for stale in ("each round's γ", "γ was set before the round", "每一轮的 γ", "γ 在本轮开始前就定了"):
        assert stale not in proof, stale
    a, b = Q_ROWS[0]
    assert f"$q = ({a:g}, {b:g})$" in proof and f"${FLOOR:g}$" in proof
    # the example's claim: a second draft follows A, not B (tests/test_confidence_floor_law.py
    # enumerates the whole law)
    assert keeps_draft(a * max(a, b), 1, FLOOR) and not keeps_draft(b * max(a, b), 1, FLOOR)
    assert f"q(y_1) \\times {max(a, b):g} \\ge {FLOOR:g}" in proof
