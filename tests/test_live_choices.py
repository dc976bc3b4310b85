"""The live pages' model catalogue: the toy pair, draft choices, build-once shelf, presets."""

import numpy as np
import pytest

from specdec_core.live import job_models
from specdec_core.live.model_choices import (
    ChoiceError,
    DraftSpec,
    TargetSpec,
    drafts_for,
    load_draft,
    load_target,
    target_key,
)
from specdec_core.live.presets import PRESETS, preset_prompt
from specdec_core.live.shelf import ModelShelf
from specdec_core.models import (
    CrossVocabularyDraft,
    ModelNotAvailableError,
    NGramDraft,
    TokenizerMismatchError,
)
from specdec_core.models.toy_words import TOY_WORDS, toy_draft, toy_target
from tests.conftest import build_alien_tokenizer, build_tiny_model


def test_toy_pair_is_a_valid_word_chain_with_html_in_its_vocabulary():
    target, draft = toy_target(), toy_draft()
    assert target.vocab_size == draft.vocab_size == len(TOY_WORDS)
    assert "<script>" in TOY_WORDS
    np.testing.assert_allclose(target.transitions.sum(axis=1), 1.0)
    np.testing.assert_allclose(draft.transitions.sum(axis=1), 1.0)
    assert not np.allclose(target.transitions, draft.transitions)
    ids = target.encode("the cat <script>")
    assert target.token_texts(ids) == [" the", " cat", " <script>"]
    assert target.decode(ids) == "the cat <script>"


def test_every_preset_has_both_languages_and_a_toy_text_in_toy_words():
    target = toy_target()
    for key in PRESETS:
        assert preset_prompt(key, "en") != preset_prompt(key, "zh")
        assert target.encode(preset_prompt(key, "en", toy=True))  # only toy words
    assert preset_prompt("copy", "fr") == preset_prompt("copy", "en")
    with pytest.raises(ValueError, match="unknown preset"):
        preset_prompt("poem", "en")


def test_drafts_fit_their_target_kind():
    assert "toy_draft" in drafts_for("toy") and "bf16" not in drafts_for("toy")
    assert {"ngram", "bf16", "layerskip", "head", "medusa", "custom"} == set(drafts_for("bundled"))
    toy = load_target(TargetSpec("toy"))
    assert isinstance(load_draft(toy, DraftSpec("ngram")), NGramDraft)
    with pytest.raises(ChoiceError, match="transformer target"):
        load_draft(toy, DraftSpec("layerskip", 2))
    with pytest.raises(ChoiceError, match="transformer target's features"):
        load_draft(toy, DraftSpec("head"))
    with pytest.raises(ChoiceError, match="transformer target's features"):
        load_draft(toy, DraftSpec("medusa"))
    with pytest.raises(ChoiceError, match="custom draft"):
        load_draft(toy, DraftSpec("custom", source="  "))
    with pytest.raises(ChoiceError, match="custom target"):
        load_target(TargetSpec("custom"))


def test_a_missing_custom_model_says_so(tmp_path):
    with pytest.raises(ModelNotAvailableError, match="does not exist"):
        load_target(TargetSpec("custom", str(tmp_path / "nowhere" / "model")))


def test_custom_draft_with_another_tokenizer_drafts_across_and_one_sharing_nothing_is_refused(
    tiny_hf_folders, tmp_path
):
    target = load_target(TargetSpec("custom", str(tiny_hf_folders["target"])))
    assert (
        load_draft(target, DraftSpec("custom", source=str(tiny_hf_folders["draft"]))).vocab_size
        == target.vocab_size
    )
    crossed = load_draft(target, DraftSpec("custom", source=str(tiny_hf_folders["other"])))
    assert isinstance(crossed, CrossVocabularyDraft) and crossed.vocab_size == target.vocab_size
    alien = build_tiny_model(tmp_path / "alien", build_alien_tokenizer(), layers=1)
    with pytest.raises(TokenizerMismatchError, match="share no token"):
        load_draft(target, DraftSpec("custom", source=str(alien)))
    skip = load_draft(target, DraftSpec("layerskip", 2))
    assert skip.num_layers == 2
    with pytest.raises(ValueError, match="between 1 and 4"):
        load_draft(target, DraftSpec("layerskip", 9))


def test_a_job_builds_a_model_once_and_keeps_no_failed_build():
    shelf = ModelShelf()
    first = job_models.target(shelf, None, TargetSpec("toy"))
    assert job_models.target(shelf, None, TargetSpec("toy")) is first and len(shelf.loaded()) == 1
    missing = TargetSpec("custom", "/no/such/model/folder")
    with pytest.raises(ModelNotAvailableError):
        job_models.target(shelf, None, missing)
    assert not shelf.cached(target_key(missing)) and shelf.cached(target_key(TargetSpec("toy")))


def test_shelf_release_forgets_every_model_and_the_next_get_builds_again():
    import gc
    import weakref

    class Model:
        pass

    shelf = ModelShelf()
    first = shelf.put("a", Model())
    shelf.put("b", Model())
    assert len(shelf.loaded()) == 2 and shelf.loaded()[0] is first
    gone = weakref.ref(first)
    del first
    assert shelf.release() == 2 and shelf.loaded() == [] and not shelf.cached("a")
    gc.collect()
    assert gone() is None, "nothing else keeps a released model alive"
    assert shelf.get("a") is None
    again = shelf.put("a", Model())
    assert shelf.loaded() == [again] and shelf.release() == 1 and shelf.release() == 0
