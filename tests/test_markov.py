"""MarkovChainLM: exact logits, sessions that extend and roll back, validation."""

import numpy as np
import pytest

from specdec_core.models import LanguageModel, MarkovChainLM, Session
from specdec_core.sampling import softmax

T = np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])


def test_rows_are_the_next_token_laws():
    lm = MarkovChainLM(T, labels=["a", "b", "c"])
    assert isinstance(lm, LanguageModel) and lm.vocab_size == 3
    s = lm.session([0])
    assert isinstance(s, Session) and s.length == 1
    rows = s.extend([1, 2])
    assert rows.shape == (2, 3) and rows.dtype == np.float64
    np.testing.assert_allclose(softmax(rows[0]), T[1], atol=1e-15)
    np.testing.assert_allclose(softmax(rows[1]), T[2], atol=1e-15)
    assert np.isneginf(lm.next_logits(0)[2])


def test_truncate_rolls_back_the_context():
    s = MarkovChainLM(T).session([0, 1, 2])
    s.truncate(1)
    assert s.length == 1 and s.tokens == [0]
    with pytest.raises(ValueError):
        s.truncate(5)


def test_random_and_blend():
    a = MarkovChainLM.random(5, seed=1)
    b = MarkovChainLM.random(5, seed=2)
    np.testing.assert_allclose(a.transitions.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(a.blend(b, 0.0).transitions, a.transitions, atol=1e-15)
    np.testing.assert_allclose(
        a.blend(b, 0.25).transitions, 0.75 * a.transitions + 0.25 * b.transitions, atol=1e-12
    )
    np.testing.assert_array_equal(MarkovChainLM.random(5, seed=1).transitions, a.transitions)


@pytest.mark.parametrize(
    "bad", [np.ones((2, 3)) / 3, np.array([[0.5, 0.6], [0.5, 0.5]]), np.array([[1.5, -0.5], [0.5, 0.5]])]
)
def test_bad_chains_raise(bad):
    with pytest.raises(ValueError):
        MarkovChainLM(bad)


def test_bad_tokens_raise():
    s = MarkovChainLM(T).session([])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        s.extend([3])
    with pytest.raises(ValueError, match="at least one"):
        s.extend([])
