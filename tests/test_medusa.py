"""Medusa heads (models.medusa) on tiny random Llamas: rows, exactness, trees, training labels.

The heads here are random (training only changes how often drafts are accepted); what is
tested is what trained ones rely on: head k's row is head k applied to the target's last
feature, rows for positions the target has run are its own law, greedy output is the
target's (chains and trees), tree rows equal chain rows, a file for another target or of
another kind is refused, and training's label for head k at f_j is the law at j + k.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec_core.engine import autoregressive, generate
from specdec_core.engine.gamma import estimate_cost_ratio
from specdec_core.models import HFCausalLM
from specdec_core.models.head import EagleHead, HeadConfig, HeadDraft, HeadMismatchError, save_head
from specdec_core.models.medusa import MedusaDraft, MedusaHeads, load_medusa, save_medusa
from specdec_core.sampling import SamplingConfig
from train import medusa as medusa_train
from train import paths

GREEDY = SamplingConfig(temperature=0)


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def _random_heads(model: HFCausalLM, count: int = 3, seed: int = 5) -> MedusaHeads:
    torch.manual_seed(seed)
    heads = MedusaHeads(HeadConfig.for_target(model.module, model.name), count)
    with torch.no_grad():
        for p in heads.parameters():
            p.normal_(std=0.3)
    return heads


@pytest.fixture(scope="module")
def medusa_file(tiny, tmp_path_factory):
    path = tmp_path_factory.mktemp("medusa") / "tiny-medusa.safetensors"
    save_medusa(_random_heads(tiny), torch.arange(0, tiny.vocab_size, 2), path, {"cost_ratio": 0.03})
    return path


def _hidden(model: HFCausalLM, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        return model.module.model(torch.tensor([ids])).last_hidden_state[0]


def test_head_k_reads_the_targets_last_feature_and_the_last_head_serves_beyond(tiny, medusa_file):
    draft = MedusaDraft(tiny, medusa_file)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog and the cat")
    m = 6
    t_sess = tiny.session(ids[:m])  # features f_0 … f_(m-1)
    d_sess = draft.session(ids[:m])
    d_sess.bind_target(t_sess)
    f_last = _hidden(tiny, ids[:m])[m - 1]
    with torch.no_grad():
        expect = draft.heads(f_last[None]) @ draft.lm_rows.T  # (heads, 1, vocab)
    rows = d_sess.logits(ids[m : m + 5])  # positions m … m+4: heads 1, 2, 3, 3, 3
    for i, k in enumerate((1, 2, 3, 3, 3)):
        got = rows[i, draft.vocab_ids]
        assert torch.allclose(got, expect[k - 1, 0], atol=1e-4), (i, k)
    outside = torch.ones(tiny.vocab_size, dtype=torch.bool)
    outside[draft.vocab_ids] = False
    assert torch.isinf(rows[:, outside]).all()
    # rows for positions the target has run are its own law there (the LM head on f_j)
    own = draft.session(ids[:2])
    own.bind_target(t_sess)
    rows = own.logits(ids[2:m])
    full = _hidden(tiny, ids[:m])[2:m] @ draft.lm_rows.T
    assert torch.allclose(rows[:, draft.vocab_ids], full, atol=1e-4)


def test_greedy_output_is_the_targets_and_only_the_head_vocabulary_is_proposed(tiny, medusa_file):
    draft = MedusaDraft(tiny, medusa_file)
    ids = tiny.encode("the lazy dog")
    base = [t for e in autoregressive(tiny, ids, GREEDY, 24, 0) for t in e.committed]
    assert [t for e in generate(tiny, draft, ids, GREEDY, 3, 24, 0) for t in e.committed] == base
    tree = list(generate(tiny, draft, ids, GREEDY, 3, 24, 0, tree=(3, 2, 1)))
    assert [t for e in tree for t in e.committed] == base
    sampled = list(generate(tiny, draft, ids, SamplingConfig(temperature=1.0), 3, 24, 1))
    drafted = [t for e in sampled for t in e.draft_tokens]
    assert drafted and all(t % 2 == 0 for t in drafted)


def test_tree_rows_equal_chain_rows_and_compaction_keeps_one_path(tiny, medusa_file):
    draft = MedusaDraft(tiny, medusa_file)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog")
    m = 5
    t_sess = tiny.session(ids[:m])
    tree = draft.session(ids[:m])
    tree.bind_target(t_sess)
    root = tree.extend_tree([ids[m]], [-1])
    level = tree.extend_tree([ids[m + 1], 7, 12], [0, 0, 0])
    grand = tree.extend_tree([20, 21], [1, 3])
    chain = draft.session(ids[:m])
    chain.bind_target(t_sess)
    rows = chain.extend([ids[m], 7, 21])  # a Medusa row depends on the position only
    np.testing.assert_allclose(root[0], rows[0], atol=1e-5)
    np.testing.assert_allclose(level[1], rows[1], atol=1e-5)
    np.testing.assert_allclose(level[2], rows[1], atol=1e-5)
    np.testing.assert_allclose(grand[1], rows[2], atol=1e-5)
    tree.compact([0, 3, 5])
    assert tree.tokens == [*ids[:m], ids[m], 12, 21]
    tree.extend_tree([1], [-1])
    tree.extend_tree([2, 3], [0, 0])
    with pytest.raises(ValueError, match="one path"):
        tree.compact([0, 1, 2])  # node 2 is a sibling of node 1, not its child


def test_refuses_another_target_another_file_kind_and_an_unbound_session(
    tiny_hf_folders, tiny, medusa_file, tmp_path
):
    other = HFCausalLM.load(tiny_hf_folders["draft"], device="cpu")
    with pytest.raises(HeadMismatchError, match="trained for"):
        MedusaDraft(other, medusa_file)
    eagle = tmp_path / "eagle.safetensors"
    save_head(EagleHead(HeadConfig.for_target(tiny.module, tiny.name)), torch.arange(4), eagle)
    with pytest.raises(HeadMismatchError, match="not a Medusa"):
        MedusaDraft(tiny, eagle)
    with pytest.raises(HeadMismatchError, match="holds Medusa heads"):
        HeadDraft(tiny, medusa_file)
    with pytest.raises(FileNotFoundError, match="train medusa"):
        MedusaDraft(tiny, tmp_path / "absent.safetensors")
    s = MedusaDraft(tiny, medusa_file).session([1, 2])
    with pytest.raises(RuntimeError, match="bind_target"):
        s.logits([3])


def test_saved_heads_load_back_in_float16_and_are_priced_at_the_cards_cost(tiny, medusa_file):
    heads, vocab, card = load_medusa(medusa_file)
    original = _random_heads(tiny)
    f = torch.randn(4, original.cfg.hidden)
    with torch.no_grad():
        assert torch.allclose(heads(f), original(f), atol=2e-2)  # float16 storage
        which = torch.tensor([2, 0, 1, 2])
        picked = heads(f, which)
        assert torch.allclose(picked, heads(f)[which, torch.arange(4)], atol=1e-5)
    assert vocab.tolist() == list(range(0, tiny.vocab_size, 2))
    assert card["cost_ratio"] == 0.03
    assert estimate_cost_ratio(tiny, MedusaDraft(tiny, medusa_file)) == pytest.approx(0.03)


def _shard(features: np.ndarray, lse: np.ndarray, starts: list[int], lengths: list[int]) -> dict:
    return {
        "features": features.astype(np.float16),
        "tokens": np.zeros(len(features), dtype=np.int32),
        "lse": lse.astype(np.float32),
        "argmax": np.zeros(len(features), dtype=np.int32),
        "answer_start": np.asarray(starts, dtype=np.int32),
        "length": np.asarray(lengths, dtype=np.int32),
    }


def test_training_anchors_stay_inside_each_answer_and_head_k_learns_the_law_k_ahead(tmp_path, monkeypatch):
    """Two sequences in one shard: anchors start at the last prompt token, never cross into
    the next sequence, and head k's loss at f_j is the cross-entropy against the law at j + k."""
    rng = np.random.default_rng(0)
    h, v = 8, 16
    feats = rng.normal(size=(12, h))
    lm_rows = torch.from_numpy(rng.normal(size=(v, h))).float()
    lse = torch.logsumexp(
        torch.from_numpy(feats.astype(np.float16).astype(np.float32)) @ lm_rows.T, -1
    ).numpy()
    folder = tmp_path / "features" / "train"
    folder.mkdir(parents=True)
    np.savez(folder / "shard_0000.npz", **_shard(feats, lse, [3, 2], [7, 5]))
    monkeypatch.setattr(paths, "WORK", tmp_path)
    flat = medusa_train.Flat(("train",))
    assert flat.anchors.tolist() == [2, 3, 4, 5, 8, 9, 10]  # answer from start - 1, one token left after
    assert flat.ends.tolist() == [7] * 7 + [12] * 5
    cfg = HeadConfig(h, 1, 1, h, h, 1e4, 1e-6, "tiny", v, 1, 0.0)
    heads = MedusaHeads(cfg, 2)  # zero blocks: every head is the LM head on f_j
    anchors = np.asarray([2, 5, 9])
    loss, _ = medusa_train.head_loss(heads, lm_rows, flat, anchors)
    f = torch.from_numpy(flat.features.astype(np.float32))
    logq = torch.log_softmax(f @ lm_rows.T, -1)
    p = torch.softmax(f @ lm_rows.T, -1)
    expect = 0.0
    for k, weight in ((1, 1.0), (2, medusa_train.LOSS_DECAY)):
        pairs = [(j, j + k) for j in anchors.tolist() if j + k < flat.ends[j]]  # 5 + 2 = 7 is past its end
        ce = [-(p[t] * logq[j]).sum() for j, t in pairs]
        expect += weight * float(sum(ce)) / len(pairs)
    assert float(loss.detach()) == pytest.approx(expect, rel=1e-4)


def test_training_can_keep_to_the_first_answer_shards(tmp_path, monkeypatch):
    """--train-shards N reads only the first N answer shards (the data a card was trained on)."""
    folder = tmp_path / "features" / "train"
    folder.mkdir(parents=True)
    for i, n in enumerate((5, 7)):
        np.savez(folder / f"shard_{i:04d}.npz", **_shard(np.ones((n, 4)), np.zeros(n), [2], [n]))
    monkeypatch.setattr(paths, "WORK", tmp_path)
    assert medusa_train.Flat(("train",)).summary()["positions"] == 12
    assert medusa_train.Flat(("train",), train_shards=1).summary()["positions"] == 5
