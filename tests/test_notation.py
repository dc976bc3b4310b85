"""One notation and one vocabulary across the course: the zh lessons use one term per concept."""

from __future__ import annotations

import pytest

from pages.common.i18n import LESSONS

#: chosen term → the variants the zh course once mixed with it
ZH_TERMS = {
    "贪心": ("贪婪",),
    "树形草稿": ("树状草稿",),
    "奖励 token": ("bonus token", "bonus 词"),
    "提前退出": ("早退",),
}


def _zh_files() -> list:
    return sorted(p for p in (LESSONS / "zh").iterdir() if p.suffix in (".md", ".toml"))


@pytest.mark.parametrize(("chosen", "variants"), ZH_TERMS.items())
def test_zh_lessons_use_only_the_chosen_term(chosen, variants):
    texts = {p.name: p.read_text("utf-8") for p in _zh_files()}
    assert any(chosen in t for t in texts.values()), chosen
    stray = {name: v for name, t in texts.items() for v in variants if v in t.lower()}
    assert not stray, f"use {chosen}: {stray}"
