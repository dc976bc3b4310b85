"""Classroom mode offers only what the teacher loaded (issue 64): every page with a target or
draft choice (live, race, law lab, Compare) offers exactly the preloaded models and their
drafts, and no free-text model box; the tokenizers page offers no model at all.

The teacher's models here are the toy pair and a tiny transformer folder (as in
tests/test_page_classroom.py), so Gemma and the bundled model must not be offered.
"""

from __future__ import annotations

import pytest

from support.apptest import open_page, rerun

SOURCE_KEYS = ("live_target_src", "live_draft_src", "race_target_src", "race_draft_src", "cmp_source")


pytestmark = pytest.mark.usefixtures("fresh_shelf")


def _no_free_text(at) -> None:
    assert not [t.key for t in at.text_input if t.key in SOURCE_KEYS]


def test_live_offers_the_teachers_targets_and_their_drafts(classroom_models):
    at = open_page("live")
    assert len(at.selectbox(key="live_target").options) == 2  # toy and the teacher's folder
    assert at.selectbox(key="live_target").value == "toy"
    _no_free_text(at)
    at.selectbox(key="live_draft").set_value("custom")  # a draft of the teacher's list, chosen from it
    rerun(at)
    assert at.selectbox(key="live_draft_src").options == [classroom_models]
    _no_free_text(at)


def test_race_offers_the_teachers_targets(classroom_models):
    at = open_page("race")
    assert len(at.selectbox(key="race_target").options) == 2
    _no_free_text(at)


def test_law_lab_offers_only_preloaded_targets(classroom_models):
    at = open_page("law_live")
    offered = at.selectbox(key="law_target").options
    assert offered and not any("Gemma" in o or "SmolLM2" in o for o in offered)
    _no_free_text(at)


def test_compare_offers_the_teachers_targets_and_no_free_text_box(classroom_models):
    at = open_page("compare")
    targets = at.multiselect(key="cmp_targets")
    assert targets.value == ["custom"]  # the default (the bundled model) is not the teacher's
    assert len(targets.options) == 1 and "Gemma" not in " ".join(targets.options)
    # the teacher's folder, chosen from a list
    assert at.selectbox(key="cmp_source").value == classroom_models
    _no_free_text(at)


def test_compare_outside_classroom_keeps_the_free_text_box():
    at = open_page("compare")
    assert [t.key for t in at.text_input if t.key == "cmp_source"] == ["cmp_source"]
    assert len(at.multiselect(key="cmp_targets").options) >= 2


def test_tokenizers_offers_no_model_to_choose(classroom_models):
    at = open_page("tokenizers")
    assert not at.selectbox and not at.multiselect
    _no_free_text(at)
