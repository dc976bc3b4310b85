"""Tree forwards in the model sessions: mask by ancestry, position ids by depth, compaction.

Every node's row must equal the row a fresh prefill of its own path gives, and after
compaction the next row must equal a fresh prefill of the committed text (within 1e-4).
"""

import copy

import numpy as np
import pytest

from specdec_core.models.hf import HFCausalLM
from specdec_core.models.markov import MarkovChainLM

TOKENS = [5, 9, 14, 3, 22, 7, 11]  # root, then six nodes
PARENTS = [-1, 0, 0, 1, 1, 2, 3]  # a 2-2 tree plus one node at depth 3


def _path(i):
    out = [i]
    while PARENTS[out[-1]] >= 0:
        out.append(PARENTS[out[-1]])
    return out[::-1]


def _variants(model: HFCausalLM) -> dict[str, HFCausalLM]:
    own = copy.copy(model)
    own.fast = None
    return {"lean": model, "own forward": own}


@pytest.fixture(scope="module")
def tiny(tiny_hf_folders) -> HFCausalLM:
    return HFCausalLM.load(tiny_hf_folders["target"], device="cpu")


def _check_tree(model, prompt, split):
    sess = model.session(prompt)
    rows = [sess.extend_tree(TOKENS[:split], PARENTS[:split])]
    if split < len(TOKENS):  # a draft feeds its tree level by level
        rows.append(sess.extend_tree(TOKENS[split:], PARENTS[split:]))
    rows = np.concatenate(rows)
    for i in range(len(TOKENS)):
        fresh = model.session(prompt).extend([TOKENS[j] for j in _path(i)])[-1]
        np.testing.assert_allclose(rows[i], fresh, atol=1e-4, err_msg=f"node {i}")
    keep = _path(6)
    sess.compact(keep)
    committed = prompt + [TOKENS[j] for j in keep]
    assert sess.length == len(committed) and sess.token_ids == committed
    after = sess.extend([17, 2])
    fresh = model.session(committed).extend([17, 2])
    np.testing.assert_allclose(after, fresh, atol=1e-4)


@pytest.mark.parametrize("split", [len(TOKENS), 3])
def test_every_body_scores_a_tree_like_its_paths_and_compacts_to_the_path(tiny, split):
    prompt = [1, 4, 8, 12, 30, 31]
    for name, model in _variants(tiny).items():
        try:
            _check_tree(model, prompt, split)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_the_flat_index_as_position_would_be_caught(tiny):
    """The check above fails when siblings get consecutive positions (the tree-attention trap)."""
    prompt = [1, 4, 8]
    sess = tiny.session(prompt)
    rows = sess.extend_tree(TOKENS[:3], PARENTS[:3])
    wrong = tiny.session(prompt).extend([TOKENS[0], TOKENS[1], TOKENS[2]])[-1]  # flat: 2 after 1
    right = tiny.session(prompt).extend([TOKENS[0], TOKENS[2]])[-1]
    np.testing.assert_allclose(rows[2], right, atol=1e-4)
    assert np.abs(rows[2] - wrong).max() > 1e-3


def test_a_markov_session_compacts_its_token_list():
    chain = MarkovChainLM.random(32, seed=0)
    sess = chain.session([1, 2])
    rows = sess.extend_tree(TOKENS, PARENTS)
    np.testing.assert_allclose(rows, chain.session([]).extend(TOKENS))
    sess.compact(_path(6))
    assert sess.tokens == [1, 2] + [TOKENS[j] for j in _path(6)]
    with pytest.raises(ValueError, match="no tree"):
        sess.compact([0])
