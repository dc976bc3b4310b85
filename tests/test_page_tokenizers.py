"""The tokenizers lesson: both shipped tokenizers split a sentence, twins are marked, the
overlap is counted from the tokenizers, and (slow) one real position is measured."""

from __future__ import annotations

import pytest

from specdec_core.live.tokenizer_view import misread, overlap, split
from support.apptest import open_page, rerun


def test_two_tiny_families_split_mark_twins_and_misread(tiny_hf_folders):
    from transformers import AutoTokenizer

    a = AutoTokenizer.from_pretrained(tiny_hf_folders["target"])
    b = AutoTokenizer.from_pretrained(tiny_hf_folders["other"])
    pieces = split(a, b, "the cat sat")
    assert "".join(p.text for p in pieces) == "the cat sat"
    both = overlap(a, b)
    assert 0 < both.shared < both.draft_size and both.share == both.shared / both.draft_size
    assert misread(b, a, "the cat sat") != "the cat sat"  # the same ids mean other text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_splits_a_sentence_in_both_shipped_families(lang):
    at = open_page("tokenizers", lang, query={"tok_text": "The cat's <b>bold</b> idea."}, timeout=180)
    html = "".join(h.proto.body for h in at.get("html"))
    assert "&lt;b&gt;" in html and "<b>" not in html.replace("<b>bold", "")  # token text escaped
    assert html.count("class='sd-toks'") == 2
    assert any("Gemma token with the same text" in i.value or "Gemma" in i.value for i in at.info)


@pytest.mark.slow
def test_one_real_position_respects_the_bound():
    at = open_page("tokenizers", query={"tok_text": "The capital of France is"}, timeout=300)
    at.button(key="tok_measure").click()
    rerun(at)  # waits for the measurement, a job of the run service
    _, result = at.session_state["_tok_next"]
    assert 0.0 < result.coverage <= 1.0
    assert 0.0 <= result.alpha <= result.image_mass + 1e-12
    assert len(at.table) == 1
