"""Fast paths of the exact maths, tested equal to ``specdec_core.sampling`` / ``verify``.

* :func:`process_rows` runs ``sampling.apply``'s transforms on a block of logit rows at once,
  with the same numpy float64 operations (so the same numbers), without keeping every
  stage. Top-p normally sorts the whole vocabulary; here each row first looks at its 1024
  most likely tokens and skips the sort when that provably gives the same cut (otherwise
  it calls the reference ``sampling.top_p_removed``).
* :func:`verify_greedy` makes exactly the decisions ``verify.verify_block`` makes on one-hot
  rows (the temperature-0 switch) and draws the same random numbers, without building rows;
  :func:`greedy_choices` reads the target's argmax only as far as those decisions look.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from specdec_core.sampling import SamplingConfig, top_p_removed
from specdec_core.verify import BlockResult

if TYPE_CHECKING:
    import torch

#: Most likely tokens a top-p row examines before it falls back to a full sort.
_TOP_P_WINDOW = 1024
#: Bound on the rounding error of a float64 sum of ≤ 10^6 probabilities (≈ n·eps), with room.
_SUM_MARGIN = 1e-9


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    """``sampling.softmax`` row by row (the same operations, so the same float64 results)."""
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def _is_tensor(x: object) -> bool:
    """Whether `x` is a torch tensor, without importing torch (no tensor exists before it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def float64_rows(logits: torch.Tensor | np.ndarray) -> np.ndarray:
    """Logit rows (torch or numpy, one row or several) as a float64 numpy array (n, V)."""
    if _is_tensor(logits):
        logits = logits.detach().to("cpu", sys.modules["torch"].float64).numpy()
    z = np.asarray(logits, dtype=np.float64)
    return z.reshape(-1, z.shape[-1])


def token_probability(row: torch.Tensor | np.ndarray, token: int) -> float:
    """The plain softmax (T = 1, nothing cut) probability of `token` in one logit row, in
    float64 from the row's own values, so the fast and the reference path agree exactly."""
    z = float64_rows(row)[-1]
    return float(_softmax_rows(z[None])[0, token])


def top_probability(row: torch.Tensor | np.ndarray) -> float:
    """The plain softmax probability of the most likely token of one logit row (as above)."""
    z = float64_rows(row)[-1]
    return float(_softmax_rows(z[None])[0].max())


def process_rows(logits: torch.Tensor | np.ndarray, config: SamplingConfig) -> np.ndarray:
    """Final float64 distributions of each row of `logits` (n, V), as ``sampling.apply``.

    ``temperature == 0`` gives one-hot rows at the argmax (lowest index on ties).
    """
    z = float64_rows(logits)
    if config.is_greedy_switch:
        out = np.zeros_like(z)
        out[np.arange(z.shape[0]), np.argmax(z, axis=1)] = 1.0
        return out
    scores = z.copy()
    probs = _softmax_rows(z)
    for name in config.order:
        if name == "temperature":
            finite = np.isfinite(scores)
            scores = np.where(
                finite, (scores - np.max(scores, axis=1, keepdims=True)) / config.temperature, -np.inf
            )
            probs = _softmax_rows(scores)
            continue
        if name == "top_k" and config.top_k > 0:
            k = min(max(config.top_k, config.min_tokens_to_keep), z.shape[1])
            threshold = np.partition(probs, z.shape[1] - k, axis=1)[:, z.shape[1] - k : z.shape[1] - k + 1]
            cut = probs < threshold
        elif name == "top_p" and config.top_p < 1.0:
            cut = np.stack([_top_p_cut(row, config.top_p, config.min_tokens_to_keep) for row in probs])
        else:
            continue
        cut &= probs > 0
        scores = np.where(cut, -np.inf, scores)
        probs = _softmax_rows(scores)
    return probs


def _top_p_cut(probs: np.ndarray, top_p: float, min_keep: int) -> np.ndarray:
    """``sampling.top_p_removed``, skipping the full sort when the window decides for sure.

    top-p sorts ascending (stable: among equal tokens the highest index comes last) and
    removes a token when the cumulative mass up to it is ≤ 1 - top_p. If the mass outside
    the window is clearly below that line, every outside token is removed, and the
    window's own sums decide the rest unless one lands within rounding distance of the
    line; then the exact reference runs. Tokens at probability 0
    add exactly 0.0 to every sum, so they are set aside first (they count as removed, which
    the caller's ``cut &= probs > 0`` makes irrelevant).
    """
    n = probs.size
    nonzero = np.flatnonzero(probs)
    if nonzero.size < n:
        remove = np.ones(n, dtype=bool)
        remove[nonzero] = _top_p_cut(probs[nonzero], top_p, min_keep)
        return remove
    w = _TOP_P_WINDOW
    if n <= 2 * w or min_keep >= w:
        return top_p_removed(probs, top_p, min_keep)
    top = np.argpartition(probs, n - w)[n - w :]
    vals = probs[top]
    edge = vals.min()
    line = 1 - top_p
    outside = float(probs.sum() - vals.sum())
    if np.count_nonzero(probs >= edge) != w or outside > line - _SUM_MARGIN:
        return top_p_removed(probs, top_p, min_keep)
    order = np.lexsort((top, vals))  # ascending; among equals the highest index last
    idx, sorted_vals = top[order], vals[order]
    cum = outside + np.cumsum(sorted_vals)
    if np.any(np.abs(cum - line) <= _SUM_MARGIN):
        return top_p_removed(probs, top_p, min_keep)
    remove_sorted = cum <= line
    remove_sorted[w - min_keep :] = False
    remove = np.ones(n, dtype=bool)
    remove[idx] = remove_sorted
    return remove


def argmax_rows(rows: torch.Tensor | np.ndarray) -> list[int]:
    """Index of each row's largest logit, lowest index on ties (like ``sampling.greedy``)."""
    if _is_tensor(rows):
        return sys.modules["torch"].argmax(rows, dim=-1).tolist()
    return np.argmax(rows, axis=-1).tolist()


def verify_greedy(
    target_choice: Sequence[int], draft_tokens: Sequence[int], rng: np.random.Generator
) -> BlockResult:
    """``verify_block`` for one-hot p (at `target_choice[i]`) and one-hot q (at each draft).

    Same decisions and the same random draws: one uniform per examined draft, one more for
    the corrected token or the bonus token.
    """
    tokens: list[int] = []
    kinds: list[str] = []
    alphas: list[float] = []
    for i, x in enumerate(draft_tokens):
        alpha = 1.0 if int(x) == int(target_choice[i]) else 0.0
        alphas.append(alpha)
        if rng.random() < alpha:
            tokens.append(int(x))
            kinds.append("accepted")
            continue
        rng.random()  # the residual draw; the residual is one-hot at the target's choice
        tokens.append(int(target_choice[i]))
        kinds.append("corrected")
        return BlockResult(accepted=i, tokens=tokens, kinds=kinds, acceptance_probs=alphas)
    rng.random()  # the bonus draw from a one-hot row
    tokens.append(int(target_choice[len(draft_tokens)]))
    kinds.append("bonus")
    return BlockResult(accepted=len(draft_tokens), tokens=tokens, kinds=kinds, acceptance_probs=alphas)


def greedy_choices(row: Callable[[int], torch.Tensor | np.ndarray], draft_tokens: Sequence[int]) -> list[int]:
    """The target's argmax at each position :func:`verify_greedy` examines.

    `row(i)` gives the logits (1, V) after fed token i; rows are read left to right and
    reading stops at the first draft that differs from the target's choice (its choice is
    the corrected token), or after all K+1 (the last is the bonus token).
    """
    choice: list[int] = []
    for i in range(len(draft_tokens) + 1):
        choice.append(argmax_rows(row(i))[0])
        if i < len(draft_tokens) and int(draft_tokens[i]) != choice[i]:
            break
    return choice
