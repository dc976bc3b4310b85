"""models.vocab_map: twins between two real tokenizers by token text, and re-spelling.

The synthetic tokenizer is SentencePiece-style (Metaspace "▁", byte fallback pieces), built
here; the byte-level BPE ones are the tiny tokenizers of tests/conftest.py and (slow) the
bundled SmolLM2's.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.models import HFCausalLM, TokenizerMismatchError, check_compatible, paired_draft
from specdec_core.models.cross import CrossVocabularyDraft
from specdec_core.models.vocab_map import Respeller, token_texts, vocabulary_map
from specdec_core.sampling import SamplingConfig
from tests.conftest import build_alien_tokenizer, build_tiny_model, build_tiny_tokenizer

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def build_sentencepiece_tokenizer():
    """A Gemma-like tokenizer: spaces become "▁", unknown bytes fall back to <0xNN> pieces."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pieces = ["<pad>", "<eos>", "<bos>"] + [f"<0x{b:02X}>" for b in range(256)]
    pieces += ["▁", *LETTERS, ".", "ï"]
    merges = [("▁", "t"), ("▁t", "h"), ("▁th", "e"), ("▁", "f"), ("o", "x"), ("▁f", "ox"), ("v", "e")]
    pieces += ["".join(m) for m in merges]
    vocab = {p: i for i, p in enumerate(pieces)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=True, fuse_unk=False))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split("▁", behavior="merged_with_next")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>"
    )


@pytest.fixture(scope="module")
def sp():
    return build_sentencepiece_tokenizer()


@pytest.fixture(scope="module")
def bpe():
    return build_tiny_tokenizer()


def test_token_texts_are_decoded_text_never_raw_pieces(sp, bpe):
    texts = token_texts(sp)
    assert texts[sp.convert_tokens_to_ids("▁the")] == " the"
    assert texts[sp.convert_tokens_to_ids("<0x0A>")] is None  # byte fallback: no text of its own
    assert texts[sp.convert_tokens_to_ids("<eos>")] is None  # special: matched by content instead
    assert sp.decode(sp.encode("the fox\n", add_special_tokens=False)) == "the fox\n"
    b_texts = token_texts(bpe)
    ids = bpe.encode(" quick brown", add_special_tokens=False)
    pieces = bpe.convert_ids_to_tokens(ids)
    assert "".join(b_texts[i] for i in ids) == " quick brown"
    split = bpe.encode(" naïve", add_special_tokens=False)  # "ï" cut between two tokens here
    assert [b_texts[i] for i in split] == [None, None]
    partial = [i for i, p in enumerate(bpe.convert_ids_to_tokens(list(range(len(bpe))))) if p == "Ã"]
    assert partial and b_texts[partial[0]] is None  # the first byte of "ï" alone is no text
    assert pieces[0].startswith("Ġ") and b_texts[ids[0]].startswith(" ")


def test_a_sentencepiece_draft_maps_onto_a_byte_level_target(sp, bpe):
    m = vocabulary_map(bpe, sp, len(sp) + 4, len(bpe))
    assert m.shape == (len(sp) + 4,) and np.all(m[len(sp) :] == -1)  # padding rows: no twin
    bpe_texts = token_texts(bpe)
    for piece in ("▁the", "▁fox", "a", "."):
        twin = m[sp.convert_tokens_to_ids(piece)]
        assert twin >= 0 and bpe_texts[twin] == piece.replace("▁", " ")
    assert m[sp.convert_tokens_to_ids("<0x41>")] == -1
    assert m[sp.convert_tokens_to_ids("<eos>")] == -1  # "<eos>" is no special token of the target
    back = vocabulary_map(sp, bpe, len(bpe), len(sp))
    assert back[bpe.convert_tokens_to_ids("Ġthe")] == sp.convert_tokens_to_ids("▁the")
    assert back[bpe.convert_tokens_to_ids("<|im_end|>")] == -1
    assert np.all(back < len(sp))
    narrow = vocabulary_map(bpe, sp, len(sp), 10)  # twins past the target's logits are dropped
    assert np.all(narrow < 10)


def test_respelling_keeps_the_text_and_maps_specials_by_content(sp, bpe):
    to_sp = Respeller(bpe, sp)
    ids = bpe.encode("the quick fox. the lazy dog", add_special_tokens=False)
    assert sp.decode(to_sp(ids)) == "the quick fox. the lazy dog"
    tail = ids[3:]  # a tail that starts with a space keeps it
    assert sp.decode(to_sp(tail)) == bpe.decode(tail)
    im_start = bpe.convert_tokens_to_ids("<|im_start|>")
    assert to_sp([im_start, *ids]) == to_sp(ids)  # no twin: the draft reads the text alone
    same = Respeller(bpe, bpe)
    assert same([im_start, *ids]) == [im_start, *ids]


def test_a_pair_with_two_tokenizers_drafts_across_them(tiny_hf_folders):
    target = HFCausalLM.load(tiny_hf_folders["target"])
    other = HFCausalLM.load(tiny_hf_folders["other"])
    with pytest.raises(TokenizerMismatchError):
        check_compatible(target, other)
    crossed = paired_draft(target, other)
    assert isinstance(crossed, CrossVocabularyDraft) and crossed.vocab_size == target.vocab_size
    assert crossed.draft is other
    ids = target.encode("the quick brown fox")
    greedy = SamplingConfig(temperature=0)
    want = [t for e in autoregressive(target, ids, greedy, 24) for t in e.committed]
    for gamma in (1, 3):
        got = [t for e in generate(target, other, ids, greedy, gamma, 24) for t in e.committed]
        assert got == want
    events = list(generate(target, other, ids, SamplingConfig(temperature=0.9, top_k=20), 3, 24, 1))
    assert sum(len(e.committed) for e in events) == 24
    twins = set(np.flatnonzero(np.isin(np.arange(target.vocab_size), crossed.to_target)))
    assert {t for e in events for t in e.draft_tokens} <= twins


def test_a_pair_that_shares_no_token_is_refused(tmp_path):
    alien = build_alien_tokenizer()
    target = HFCausalLM.load(build_tiny_model(tmp_path / "t", build_tiny_tokenizer(), layers=1))
    draft = HFCausalLM.load(build_tiny_model(tmp_path / "d", alien, layers=1))
    with pytest.raises(TokenizerMismatchError, match="share no token"):
        paired_draft(target, draft)
    with pytest.raises(TokenizerMismatchError, match="share no token"):
        generate(target, draft, target.encode("the"), SamplingConfig(temperature=0), 2, 4)


@pytest.mark.slow
def test_the_bundled_tokenizer_against_itself_and_a_sentencepiece_one(bundled_model, sp):
    tok = bundled_model.tokenizer
    n = len(tok)
    m = vocabulary_map(tok, tok, n, n)
    texts = token_texts(tok)
    has_text = np.array([t is not None for t in texts])
    assert np.all(m[has_text] == np.arange(n)[has_text])  # every token with a text is its own twin
    ids = bundled_model.encode("Explain the naïve fox: 中文?", chat=True)
    assert Respeller(tok, tok)(ids) == ids
    assert m[tok.convert_tokens_to_ids("<|im_end|>")] == tok.convert_tokens_to_ids("<|im_end|>")
    to_smol = vocabulary_map(tok, sp, len(sp), n)
    assert texts[to_smol[sp.convert_tokens_to_ids("▁the")]] == " the"
    assert to_smol[sp.convert_tokens_to_ids("<0x0A>")] == -1
    to_sp = Respeller(tok, sp)
    plain = tok.encode("the fox. the ox", add_special_tokens=False)
    assert sp.decode(to_sp(plain)) == "the fox. the ox"
