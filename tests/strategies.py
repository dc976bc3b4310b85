"""Hypothesis strategies for probability distributions, zeros and one-hots included."""

import numpy as np
from hypothesis import strategies as st


@st.composite
def distributions(draw, size: int | None = None, min_size: int = 1, max_size: int = 12):
    """A float64 distribution: random weights with some exact zeros, or a one-hot."""
    n = size if size is not None else draw(st.integers(min_size, max_size))
    if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
        out = np.zeros(n)
        out[draw(st.integers(0, n - 1))] = 1.0
        return out
    weights = np.array(draw(st.lists(st.floats(0, 10), min_size=n, max_size=n)))
    zeros = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    weights[zeros] = 0.0
    if weights.sum() <= 0:
        weights[draw(st.integers(0, n - 1))] = 1.0
    return weights / weights.sum()


@st.composite
def pairs(draw, max_size: int = 12):
    """(p, q) on one vocabulary; sometimes identical, sometimes disjoint-ish."""
    n = draw(st.integers(1, max_size))
    p = draw(distributions(size=n))
    q = p.copy() if draw(st.integers(0, 5)) == 0 else draw(distributions(size=n))
    return p, q
