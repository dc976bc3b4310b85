"""A draft over another tokenizer: its own pieces for each committed target token are kept in the
live trace (so a saved run shows them), escaped when drawn, and twins are marked."""

from __future__ import annotations

import pytest

from specdec_core.engine import generate
from specdec_core.live.draft_pieces import META_KEY, draft_pieces
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.settings import LiveSettings
from specdec_core.live.trace import RunRecord, build, from_json, to_json
from specdec_core.models import HFCausalLM, NGramDraft, paired_draft
from specdec_core.viz.draft_pieces import pieces_html

TEXT = {"no_twin": "no twin", "apart": "apart"}


@pytest.fixture(scope="module")
def pair(tiny_hf_folders):
    target = HFCausalLM.load(tiny_hf_folders["target"], device="cpu")
    draft = HFCausalLM.load(tiny_hf_folders["other"], device="cpu")  # another tokenizer
    return target, paired_draft(target, draft)


def test_a_cross_vocabulary_run_keeps_the_drafts_pieces_in_its_trace(pair):
    target, cross = pair
    settings = LiveSettings(
        TargetSpec("custom", "t"), DraftSpec("custom", source="d"), chat=False, max_new_tokens=12
    )
    ids = target.encode("the cat sat on the mat")
    events = list(generate(target, cross, ids, settings.sampling(), 3, 12, 0))
    trace = build(settings, "the cat", ids, target, cross, RunRecord(events, 0.1))
    pieces = trace.meta[META_KEY]
    assert set(pieces) == {str(t) for t in trace.speculative.tokens}
    for t in trace.speculative.tokens:
        spelling = cross.to_draft([t])  # the draft's own ids for this target token
        assert len(pieces[str(t)]) == len(spelling)
        assert [twin for _, twin in pieces[str(t)]] == [cross.twin(i) is not None for i in spelling]
    assert from_json(to_json(trace)).meta[META_KEY] == pieces  # a saved run shows them too


def test_a_draft_over_the_targets_own_tokens_has_no_pieces(pair):
    target, _ = pair
    assert draft_pieces(NGramDraft.for_model(target), [1, 2, 3]) == {}


def test_pieces_are_escaped_and_marked():
    html = pieces_html([("<b>", [["<", True], ["b>", False]]), (" the", [[" the", True]])], TEXT)
    assert "<b>" not in html and "&lt;" in html and "b&gt;" in html
    assert html.count("sd-piece-alone") == 1 and html.count("sd-piece-apart") == 1
    assert "␣the" in html
