"""The trained-head draft (models.head) on tiny random Llamas: features, binding, exactness.

The head here is random (trained heads only change how often drafts are accepted); what is
tested is the plumbing a trained one relies on: the target session's features equal a fresh
prefill's, the drafting session computes exactly what training's unrolled pass computes
(the feature-uncertainty trap), greedy output is the target's own, and a head refuses a
target it was not trained for.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.models import HFCausalLM
from specdec_core.models.head import EagleHead, HeadConfig, HeadDraft, HeadMismatchError, save_head
from specdec_core.sampling import SamplingConfig
from train.fit import unrolled_features

GREEDY = SamplingConfig(temperature=0)


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


@pytest.fixture(scope="module")
def head_file(tiny, tmp_path_factory):
    torch.manual_seed(3)
    head = EagleHead(HeadConfig.for_target(tiny.module, tiny.name))
    for p in head.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.2)
    vocab = torch.arange(0, tiny.vocab_size, 2)  # half the vocabulary: the rest is never proposed
    path = tmp_path_factory.mktemp("head") / "tiny-head.safetensors"
    save_head(head, vocab, path, {"steps": 0})
    return path


def _prefill_hidden(model: HFCausalLM, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        return model.module.model(torch.tensor([ids])).last_hidden_state[0]


@pytest.mark.parametrize("fast", [True, False])
def test_target_session_features_equal_a_fresh_prefill_after_rollback(tiny_hf_folders, fast):
    model = HFCausalLM.load(tiny_hf_folders["target"], device="cpu", fast=fast)
    ids = model.encode("the quick brown fox jumps over the lazy dog")
    s = model.session(ids[:5])
    s.extend(ids[5:9])
    s.truncate(7)
    s.extend(ids[7:])
    expected = _prefill_hidden(model, ids)
    assert torch.allclose(s.features(0, len(ids)), expected, atol=1e-4)
    with pytest.raises(ValueError, match="outside"):
        s.features(0, len(ids) + 1)


def test_drafting_session_matches_training_unrolled_pass(tiny, head_file):
    """Depth s of the unrolled pass = what the session computes drafting s tokens ahead."""
    draft = HeadDraft(tiny, head_file)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog and the cat")
    f = _prefill_hidden(tiny, ids)[None]
    emb = tiny.module.get_input_embeddings().weight[torch.tensor([ids])].detach()
    with torch.no_grad():
        steps = unrolled_features(draft.head, f, emb, steps=3)
    rows = [(feat[0] @ draft.lm_rows.T) for feat in steps]
    m = 6  # the target has fed ids[:m]; the head drafts ids[m+1], ids[m+2] after ids[m]
    t_sess = tiny.session(ids[:m])
    d_sess = draft.session(ids[:m])
    d_sess.bind_target(t_sess)
    for depth, token in enumerate(ids[m : m + 3], start=1):
        row = d_sess.logits([token], last_only=True)[0, draft.vocab_ids]
        assert torch.allclose(row, rows[depth - 1][m + depth - 1], atol=1e-4), depth


def test_greedy_output_is_the_targets_and_rows_outside_the_vocabulary_are_never_proposed(tiny, head_file):
    draft = HeadDraft(tiny, head_file)
    ids = tiny.encode("the lazy dog")
    base = [t for e in autoregressive(tiny, ids, GREEDY, 24, 0) for t in e.committed]
    spec = [t for e in generate(tiny, draft, ids, GREEDY, 3, 24, 0) for t in e.committed]
    assert spec == base
    events = list(generate(tiny, draft, ids, SamplingConfig(temperature=1.0), 3, 24, 1))
    drafted = [t for e in events for t in e.draft_tokens]
    assert drafted and all(t % 2 == 0 for t in drafted)


def test_refeeds_its_own_guesses_with_the_targets_features(tiny, head_file):
    """After the target catches up, cache entries made from guesses are redone from features."""
    draft = HeadDraft(tiny, head_file)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog")
    t_sess = tiny.session(ids[:4])
    d_sess = draft.session(ids[:4])
    d_sess.bind_target(t_sess)
    d_sess.logits(ids[4:8])  # 5, 6, 7 read guesses: the target has fed only 4 tokens
    assert d_sess.exact == [True] * 5 + [False] * 3
    t_sess.extend(ids[4:8])
    last = d_sess.logits(ids[8:9], last_only=True)
    assert all(d_sess.exact)
    fresh_t = tiny.session(ids[:8])
    fresh = draft.session(ids[:8])
    fresh.bind_target(fresh_t)
    assert torch.allclose(last, fresh.logits(ids[8:9], last_only=True), atol=1e-5)


def test_refuses_a_target_it_was_not_trained_for(tiny_hf_folders, head_file):
    other = HFCausalLM.load(tiny_hf_folders["draft"], device="cpu")  # 2 layers, other weights
    with pytest.raises(HeadMismatchError, match="trained for"):
        HeadDraft(other, head_file)


def test_needs_a_bound_target(tiny, head_file):
    s = HeadDraft(tiny, head_file).session([1, 2])
    with pytest.raises(RuntimeError, match="bind_target"):
        s.logits([3])


def test_tree_rounds_with_the_head_give_the_targets_greedy_output(tiny, head_file):
    draft = HeadDraft(tiny, head_file)
    ids = tiny.encode("the quick brown fox")
    base = [t for e in autoregressive(tiny, ids, GREEDY, 30, 0) for t in e.committed]
    events = list(generate(tiny, draft, ids, GREEDY, 3, 30, 0, tree=(3, 2, 1)))
    assert [t for e in events for t in e.committed] == base
    assert events[0].tree is not None and events[0].extra["tree_nodes"] == 3 + 6 + 6
    sampled = list(generate(tiny, draft, ids, SamplingConfig(temperature=1.0), 3, 30, 2, tree=(2, 2)))
    drafted = [t for e in sampled for t in e.tree["tokens"][1:]]
    assert drafted and all(t % 2 == 0 for t in drafted)  # only the head's vocabulary is proposed


def test_tree_forward_rows_equal_chain_rows_along_each_branch(tiny, head_file):
    """A tree node's row is what a chain session computes for the same path (the tree mask
    and depth positions are right), and compaction leaves the chain's cache."""
    draft = HeadDraft(tiny, head_file)
    ids = tiny.encode("the quick brown fox jumps over the lazy dog")
    m = 5
    t_sess = tiny.session(ids[:m])
    tree_sess = draft.session(ids[:m])
    tree_sess.bind_target(t_sess)
    root_rows = tree_sess.extend_tree([ids[m]], [-1])
    kids = [ids[m + 1], 7, 12]
    level = tree_sess.extend_tree(kids, [0, 0, 0])
    grand = tree_sess.extend_tree([20, 21], [1, 3])  # under the first and third child
    for path, row in [([ids[m]], root_rows[0]), ([ids[m], 7], level[1]), ([ids[m], 12, 21], grand[1])]:
        chain = draft.session(ids[:m])
        chain.bind_target(t_sess)
        expect = chain.extend(path)[-1]
        finite = torch.isfinite(torch.from_numpy(expect))
        assert torch.allclose(torch.from_numpy(row)[finite], torch.from_numpy(expect)[finite], atol=1e-4)
    tree_sess.compact([0, 3, 5])  # root, third child, its child
    assert tree_sess.tokens == [*ids[:m], ids[m], 12, 21]
    after = tree_sess.logits([30], last_only=True)
    chain = draft.session(ids[:m])
    chain.bind_target(t_sess)
    assert torch.allclose(after, chain.logits([ids[m], 12, 21, 30], last_only=True), atol=1e-4)


def test_the_gamma_controller_prices_the_head_at_its_cards_measured_cost(tiny, head_file, tmp_path):
    from specdec_core.engine.gamma import UNKNOWN_COST_RATIO, estimate_cost_ratio

    unmeasured = HeadDraft(tiny, head_file)  # its card has no cost_ratio
    assert unmeasured.cost_ratio is None
    assert estimate_cost_ratio(tiny, unmeasured) == UNKNOWN_COST_RATIO
    head = EagleHead(HeadConfig.for_target(tiny.module, tiny.name))
    path = tmp_path / "measured.safetensors"
    save_head(head, torch.arange(0, tiny.vocab_size, 2), path, {"steps": 0, "cost_ratio": 0.0888})
    assert estimate_cost_ratio(tiny, HeadDraft(tiny, path)) == pytest.approx(0.0888)


def test_the_drafting_head_runs_on_the_few_row_kernels_with_the_same_weights(tiny, head_file):
    """The draft's head uses RowLinear twins of the loaded layers (a quarter off a draft step,
    bench/RESULTS.md), which give the same numbers."""
    from specdec_core.models.head import load_head
    from specdec_core.models.hf.kernels import RowLinear

    draft = HeadDraft(tiny, head_file)
    plain, _, _ = load_head(head_file)
    linears = [n for n, c in plain.named_children() if isinstance(c, torch.nn.Linear)]
    assert linears and all(type(getattr(draft.head, n)) is RowLinear for n in linears)
    x = torch.randn(3, 2 * plain.cfg.hidden)
    with torch.inference_mode():
        assert torch.allclose(draft.head.fc(x), plain.fc(x), atol=1e-5)


def _floored(tiny, head_file, floor: float) -> HeadDraft:
    draft = HeadDraft(tiny, head_file)
    draft.confidence_floor = floor
    return draft


@pytest.mark.parametrize("floor", [0.0, 0.05, 0.3, 1.0])
def test_a_confidence_floor_keeps_greedy_output_and_fast_equal_to_reference(tiny, head_file, floor):
    draft = _floored(tiny, head_file, floor)
    ids = tiny.encode("the quick brown fox")
    base = [t for e in autoregressive(tiny, ids, GREEDY, 24, 0) for t in e.committed]
    assert [t for e in generate(tiny, draft, ids, GREEDY, 4, 24, 0) for t in e.committed] == base
    hot = SamplingConfig(temperature=1.0)
    fast = [(e.committed, e.draft_tokens) for e in generate(tiny, draft, ids, hot, 4, 24, 7)]
    ref = [
        (e.committed, e.draft_tokens)
        for e in generate(tiny, draft, ids, hot, 4, 24, 7, options=RunOptions(reference=True))
    ]
    assert fast == ref
    drafts = [len(e.draft_tokens) for e in generate(tiny, draft, ids, GREEDY, 4, 24, 0)]
    if floor == 1.0:  # no chain of two is certain: every round drafts its first token alone
        assert set(drafts) == {0, 1}  # (0: the last round, with one token left to make)
    if floor == 0.0:
        assert max(drafts) == 4


def test_the_floor_stops_a_chain_where_its_confidence_product_drops(tiny, head_file):
    from specdec_core.engine.drafters import ModelDrafter
    from specdec_core.engine.processing import token_probability
    from specdec_core.engine.rows import RunMaths

    ids = tiny.encode("the quick brown fox jumps")
    free = ModelDrafter(_floored(tiny, head_file, 0.0), ids, tiny.session(ids[:-1]))
    sess = free.session
    tokens, chain, products = [], 1.0, []
    feed = free.pending
    for _ in range(5):  # the unfloored chain, with the head's own confidence of each draft
        row = sess.logits(feed, last_only=True)
        x = int(row.argmax())
        chain *= token_probability(row, x)
        tokens.append(x)
        products.append(chain)
        feed = [x]
    floor = (products[1] + products[2]) / 2  # keeps two drafts, stops at the third
    assert products[2] < floor <= products[1]
    drafter = ModelDrafter(_floored(tiny, head_file, floor), ids, tiny.session(ids[:-1]))
    drafts, _, forwards = drafter.propose(5, RunMaths(GREEDY, 0, 0, False))
    assert drafts == tokens[:2] and forwards == 3


@pytest.mark.parametrize("accepted", [0, 1, 2])
def test_after_an_early_stop_the_heads_cache_is_the_committed_text(tiny, head_file, accepted):
    """The stopped chain's drafts were all read by the head; a commit keeps those accepted."""
    from specdec_core.engine.drafters import ModelDrafter
    from specdec_core.engine.rows import RunMaths

    ids = tiny.encode("the quick brown fox jumps over")
    run = RunMaths(GREEDY, 0, 0, False)
    t_sess = tiny.session(ids[:-1])
    drafter = ModelDrafter(_floored(tiny, head_file, 1.0), ids, t_sess)
    first, _, _ = drafter.propose(1, run)  # a round of one draft, as the engine starts
    drafter.commit(first, 1, 7)
    t_sess.extend([ids[-1], first[0]])
    drafts, _, forwards = drafter.propose(4, run)
    assert len(drafts) == 1 and forwards == 2  # floor 1.0: the second draft is priced, then left out
    drafts = drafts + [11][: max(accepted - 1, 0)]  # a second accepted token where the test wants one
    kept = drafts[:accepted]
    drafter.commit(drafts, accepted, 5)
    t_sess.extend([7, *kept])
    text = [*ids, first[0], 7, *kept, 5]
    fresh = ModelDrafter(_floored(tiny, head_file, 1.0), text, tiny.session(text[:-1]))
    fresh.session.bind_target(t_sess)
    got = drafter.session.logits(drafter.pending, last_only=True)
    want = fresh.session.logits(fresh.pending, last_only=True)
    assert torch.allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("floor", [0.0, 0.05, 0.3])
def test_the_inspector_says_which_rounds_the_floor_cut_short(tiny, head_file, floor):
    """A round the floor ended is told apart from one that drafted its γ (live inspector):
    under T = 1 a kept chain's q product stays at or above the floor after its first draft
    (the first is always kept)."""
    from specdec_core.live.inspector import short_chain

    ids = tiny.encode("the quick brown fox")
    events = list(
        generate(tiny, _floored(tiny, head_file, floor), ids, SamplingConfig(temperature=1.0), 4, 40, 3)
    )
    reasons = [short_chain(e) for e in events]
    assert set(reasons) <= {None, "confidence"}
    for e, why in zip(events, reasons, strict=True):
        if why == "confidence":
            assert 0 < len(e.draft_tokens) < e.gamma
            assert len(e.draft_tokens) == 1 or float(np.prod(e.draft_q)) >= floor
        elif e.draft_tokens:
            assert len(e.draft_tokens) == e.gamma
    assert ("confidence" in reasons) == (floor > 0)
