"""The home page's course map in a real browser: every card shows its whole title, and the cards
of one row are equally tall, on a 1024- and a 1280-pixel window, in both languages."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from pages.common.nav import PAGES

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
TIMEOUT = 45_000

#: Per card of the map (the bordered block around each page link): its title's text, whether
#: that text is cut (wider than its box, or drawn past the card's edge) and the card's box.
_CARDS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stPageLink"]'))
  .map(link => {
    const title = link.querySelector('[data-testid="stMarkdownContainer"] p') || link;
    const card = link.closest('[data-testid="stVerticalBlock"]').getBoundingClientRect();
    const box = title.getBoundingClientRect();
    const style = getComputedStyle(title);
    const cut = title.scrollWidth > title.clientWidth + 1 || title.scrollHeight > title.clientHeight + 1
      || box.right > card.right + 1 || box.left < card.left - 1;
    return {text: title.innerText.trim(), cut, ellipsis: style.textOverflow === 'ellipsis',
            top: Math.round(card.top), height: card.height};
  })"""


def _titles(lang: str) -> list[str]:
    table = tomllib.loads((LESSONS / lang / "common.toml").read_text("utf-8"))
    return [table["nav"][p.key]["title"] for p in PAGES if p.key != "home"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_course_map_cards_show_whole_titles_and_share_their_rows_height(page: Page, app_url: str, lang: str):
    for width in (1024, 1280):
        # tall enough that the whole map is in view and laid out (blocks out of view are skipped)
        page.set_viewport_size({"width": width, "height": 4000})
        page.goto(f"{app_url}/?lang={lang}")
        expect(page.get_by_test_id("stMain").get_by_test_id("stPageLink")).to_have_count(
            len(PAGES) - 1, timeout=TIMEOUT
        )
        page.wait_for_function(
            '() => !document.querySelector(\'[data-testid="stStatusWidget"], [data-stale="true"]\')',
            timeout=TIMEOUT,
        )
        cards = page.evaluate(_CARDS)
        assert [c["text"] for c in cards] == _titles(lang), width
        assert [c["text"] for c in cards if c["cut"] or c["ellipsis"]] == [], width
        rows: dict[int, list[float]] = {}
        for card in cards:
            rows.setdefault(card["top"], []).append(card["height"])
        assert any(len(heights) > 1 for heights in rows.values()), "no row holds two cards"
        uneven = {top: heights for top, heights in rows.items() if max(heights) - min(heights) > 1}
        assert uneven == {}, (width, lang)
