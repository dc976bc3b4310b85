"""Telling a numerical near-tie from a bug when greedy outputs are compared (DESIGN: known traps).

Chunked verification runs other matmul kernels than one-token decoding, so logits differ by
~1e-6; two greedy runs may then part ways only where the target's two best logits are
closer than `tol`. Anything else is a bug.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NEAR_TIE = 1e-4


def top2_gap(model, ids: Sequence[int]) -> float:
    """Gap between the two largest logits for the token after `ids` (fresh prefill)."""
    row = np.sort(model.session([]).extend(list(ids))[-1])
    return float(row[-1] - row[-2])


def assert_same_greedy_output(
    model, prompt: Sequence[int], expected: list[int], got: list[int], tol: float = NEAR_TIE
) -> int:
    """Pass when `got` equals `expected`, or first differs at a near-tie; returns tokens compared."""
    n = min(len(expected), len(got))
    for i in range(n):
        if expected[i] != got[i]:
            gap = top2_gap(model, [*prompt, *expected[:i]])
            assert gap < tol, (
                f"greedy outputs differ at new token {i} ({expected[i]} vs {got[i]}) but the "
                f"target's top-2 logits differ by {gap:.3g} ≥ {tol}: not a near-tie, a bug."
            )
            return i
    assert len(expected) == len(got), f"lengths differ: {len(expected)} vs {len(got)}"
    return n


#: The prompts of the real-model greedy-equality tests (chains and trees).
PROMPTS = {
    "fact": "What is the capital of France? Answer in two sentences.",
    "chat": "Hi! Can you suggest a fun weekend activity for a family with two kids?",
    "code": "Write a Python function that returns the n-th Fibonacci number.",
}
