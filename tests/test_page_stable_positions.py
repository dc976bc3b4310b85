"""A control change must not move the lesson's text to another place in the page.

Streamlit's frontend matches the elements of a rerun to those on screen by position. When a
note that comes and goes sits in the flow, every element after it lands one place further
on, and the browser mounts all of them afresh: on the overlap lesson that was 30 of 65
elements, KaTeX text included, and more than doubled its redraw in Chromium
(bench/RESULTS.md). Every element that comes and goes therefore sits in a container that
is always there; these scenarios check that each text keeps its place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.apptest import open_page, rerun

TEXT_TYPES = {"markdown", "caption", "header", "subheader", "title", "heading"}


def _walk(node: Any, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], str, Any]]:
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for i, child in children.items():
            yield from _walk(child, (*path, i))
    else:
        yield path, getattr(node, "type", ""), getattr(node, "value", None)


def _text_places(at: Any) -> dict[str, tuple[int, ...]]:
    """Each text shown once on the page → where it sits (its index path in the page tree)."""
    seen: dict[str, list[tuple[int, ...]]] = {}
    for path, kind, value in _walk(at.main):
        if kind in TEXT_TYPES and isinstance(value, str):
            seen.setdefault(value, []).append(path)
    return {text: paths[0] for text, paths in seen.items() if len(paths) == 1}


#: page → (query, [(widget kind, key, values set one after another; a button is clicked)])
SCENARIOS: dict[str, tuple[dict[str, str], list[tuple[str, str, list[Any]]]]] = {
    "overlap": (
        {},
        [
            ("selectbox", "ov_preset", ["disjoint", "random", "abc", "equal", "edge"]),
            ("radio", "ov_variant", ["argmax_match", "draft_mismatch", "resample_from_p"]),
        ],
    ),
    "sampling_lab": (
        {},
        [
            ("toggle", "T0", [True, False]),
            ("slider", "k", [1, 0]),
            ("button_group", "preset", ["random", "peaked"]),
        ],
    ),
    "tree": (
        {"tree_preset": "random"},
        [("slider", "tree_top_n", [1, 2, 5]), ("button", "tree_sample_one", [None, None])],
    ),
    "block": (
        {"block_round": "10"},
        [("slider", "block_k", [2, 5]), ("slider", "block_t", [0.0, 1.0]), ("button", "block_next", [None])],
    ),
    "cost": ({}, [("slider", "cost_alpha", [0.1, 0.5, 0.99]), ("slider", "cost_gamma", [1, 8])]),
    "tree_drafts": (
        {},
        [
            ("slider", "trd_t", [0.0, 1.0]),
            ("slider", "trd_budget", [2, 10]),
            ("button", "trd_next", [None, None]),
        ],
    ),
    "exercises": (
        {},
        [
            ("toggle", "ex_key", [True, False]),
            ("slider", "ex_n", [2, 1]),
            ("multiselect", "ex_topics", [["block"], [], ["tokens", "story"]]),
        ],
    ),
}


@pytest.mark.parametrize("page", list(SCENARIOS))
def test_a_control_change_leaves_every_text_in_its_place(page):
    query, changes = SCENARIOS[page]
    at = open_page(page, query=query)
    before = _text_places(at)
    assert len(before) > 5
    for kind, key, values in changes:
        for value in values:
            widget = getattr(at, kind)(key=key)
            widget.click() if kind == "button" else widget.set_value(value)
            rerun(at)
            now = _text_places(at)
            moved = [(text[:50], before[text], now[text]) for text in before.keys() & now.keys()]
            moved = [m for m in moved if m[1] != m[2]]
            assert not moved, (key, value, moved[:3])
