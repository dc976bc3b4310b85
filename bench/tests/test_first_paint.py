"""bench/first_paint.py's page list and summary (its timing needs a browser and is not checked here)."""

from __future__ import annotations

import pytest

from bench.first_paint import lesson_pages, summary
from pages.common.nav import PAGES


def test_the_lesson_pages_are_those_with_lesson_text_in_the_course_order():
    pages = lesson_pages()
    order = [p.key for p in PAGES]
    assert pages == sorted(pages, key=order.index)
    assert {"home", "overlap", "live", "cost"} <= set(pages)
    assert not {"answers", "exercises"} & set(pages)  # tools without lesson text


def test_summary_takes_each_pages_median_then_the_median_and_worst_over_pages():
    out = summary({"a": [0.2, 0.4, 3.0], "b": [0.9], "c": [1.5, 2.5]})
    assert out["pages"] == {"a": 0.4, "b": 0.9, "c": 2.0}
    assert (out["median_s"], out["worst_s"], out["worst_page"]) == (0.9, 2.0, "c")
    assert out["median_goal_met"] and out["worst_goal_met"]
    late = summary({"a": [1.2], "b": [2.1]})
    assert (late["median_s"], late["median_goal_met"], late["worst_goal_met"]) == (1.65, False, False)


@pytest.mark.parametrize("seconds", [{}, {"a": [0.3], "b": []}])
def test_summary_refuses_a_page_without_a_timed_visit(seconds):
    with pytest.raises(ValueError):
        summary(seconds)
