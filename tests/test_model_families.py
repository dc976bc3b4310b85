"""The model registry: the built-in families as the pages offered them, and a third family
registered in one place, which then appears on the live page, the draft race and the Compare
page, and runs on each, with no other change."""

from __future__ import annotations

import pytest

from specdec_core.live.compare import target_keys
from specdec_core.live.model_choices import (
    TargetSpec,
    drafts_for,
    load_target,
    plain_targets,
    target_layers,
    targets,
)
from specdec_core.models import families
from specdec_core.models.hf import HFCausalLM
from support.apptest import open_page, rerun

PROMPT = "the quick brown fox jumps over the lazy dog. the quick brown fox"


def test_the_built_in_families_are_what_the_pages_offered():
    assert targets() == ("bundled", "gemma", "toy", "custom")
    assert plain_targets() == ("gemma", "toy")
    assert [f.key for f in families.families() if f.needs_source] == ["custom"]
    assert target_keys() == ("bundled", "gemma", "custom")  # the toy chain encodes only its words
    assert drafts_for("toy") == ("toy_draft", "ngram", "custom")
    assert target_layers(TargetSpec("toy")) is None
    with pytest.raises(KeyError, match="unknown target 'nope'"):
        families.family("nope")


@pytest.fixture
def third_family(tiny_hf_folders):
    """A family of tiny random Llamas, registered the way a new family is: one call."""
    folder = tiny_hf_folders["target"]
    families.register(
        families.Family(
            "tinyfam",
            "Tiny test family",
            lambda source, progress: HFCausalLM.load(folder, device="cpu"),
            lambda source: 4,
            ("ngram", "bf16"),
            chat=False,
        )
    )
    yield "tinyfam"
    families.unregister("tinyfam")


def test_a_third_family_is_offered_everywhere_and_loads(third_family):
    assert third_family in targets() and targets()[-1] == "custom"  # custom stays last
    assert third_family in plain_targets() and third_family in target_keys()
    assert drafts_for(third_family) == ("ngram", "bf16")
    assert target_layers(TargetSpec(third_family)) == 4
    assert isinstance(load_target(TargetSpec(third_family)), HFCausalLM)


def test_a_third_family_runs_on_the_live_page(third_family):
    state = {"live_target": third_family, "live_draft": "ngram", "live_max": 12, "live_prompt": PROMPT}
    at = open_page("live", state=state)
    assert "Tiny test family" in at.selectbox(key="live_target").options  # its own label, no strings
    at.button(key="live_generate").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["live_trace"].speculative.events


def test_a_third_family_runs_in_the_race(third_family):
    state = {"race_target": third_family, "race_drafts": ["ngram"], "race_max": 12, "race_prompt": PROMPT}
    at = open_page("race", state=state)
    assert "Tiny test family" in at.selectbox(key="race_target").options
    at.button(key="race_run").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    assert set(at.session_state["race_results"][at.session_state["_race_last"]].records) == {
        "baseline",
        "ngram",
    }


def test_a_third_family_runs_on_the_compare_page(third_family):
    state = {"cmp_targets": [third_family], "cmp_drafts": ["ngram"], "cmp_cats": ["copy"], "cmp_max": 8}
    at = open_page("compare", state=state)
    assert third_family in at.multiselect(key="cmp_targets").options
    at.button(key="cmp_run").click()
    rerun(at)
    assert not at.error, [e.value for e in at.error]
    result = at.session_state["_cmp_result"]
    assert result.complete and {r.target for r in result.runs} == {third_family}
