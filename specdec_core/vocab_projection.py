"""A draft over another vocabulary, seen in the target's: restrict its law to tokens with a twin.

A draft whose tokens differ from the target's (another tokenizer, or a head cut down to the
target's most frequent tokens) can still be verified exactly: it samples from q restricted
to the tokens that have a target twin, renormalised and mapped to the twins' ids, and the
target verifies against exactly that law. Speculative verification is exact for any law the
draft samples from, so this is lossless; what the restriction throws away (1 − coverage)
only lowers acceptance. Timor et al., ICML 2025 (the token-level intersection rule).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from specdec_core.checks import as_distribution

Dist = Sequence[float] | np.ndarray


def check_vocabulary_map(to_target: Sequence[int] | np.ndarray, target_size: int) -> np.ndarray:
    """`to_target` as an int64 array after checking each id lies in [−1, target_size)."""
    if isinstance(target_size, bool) or not isinstance(target_size, int | np.integer) or target_size < 1:
        raise ValueError(f"target_size must be a whole number of tokens ≥ 1, got {target_size!r}.")
    arr = np.asarray(to_target)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"to_target must be a flat, non-empty list of token ids, got shape {arr.shape}.")
    whole = arr.dtype.kind in "iu" or (
        arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr))) and not np.any(arr != np.round(arr))
    )
    if not whole:
        raise ValueError("to_target must hold whole-number token ids (−1 for a token without a twin).")
    ids = arr.astype(np.int64)
    bad = np.flatnonzero((ids < -1) | (ids >= target_size))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"to_target[{i}] = {int(ids[i])} is outside −1 … {int(target_size) - 1} "
            "(a target token id, or −1 for a draft token without a twin)."
        )
    return ids


def _checked(q: Dist, to_target: Sequence[int] | np.ndarray, target_size: int | None) -> tuple:
    q_arr = as_distribution(q, "q (draft)")
    ids = check_vocabulary_map(to_target, target_size if target_size is not None else 1 << 62)
    if ids.size != q_arr.size:
        raise ValueError(
            f"q (draft) and to_target must have the same length (one entry per draft token), "
            f"got {q_arr.size} and {ids.size}."
        )
    return q_arr, ids


def coverage(q: Dist, to_target: Sequence[int] | np.ndarray) -> float:
    """The mass q puts on draft tokens with a target twin (1 − coverage is thrown away)."""
    q_arr, ids = _checked(q, to_target, None)
    return float(min(1.0, q_arr[ids >= 0].sum()))


def project(q: Dist, to_target: Sequence[int] | np.ndarray, target_size: int) -> np.ndarray:
    """The target-vocabulary law of "draw from q restricted to mapped tokens, renormalised, then map".

    Entry j is Σ_{i: to_target[i] = j} q[i] / Σ_{i: to_target[i] ≥ 0} q[i]; zero off the image.
    """
    q_arr, ids = _checked(q, to_target, target_size)
    mapped = ids >= 0
    mass = float(q_arr[mapped].sum())
    if mass <= 0.0:
        raise ValueError("q (draft) puts no mass on tokens the target has: there is nothing it may propose.")
    return project_unchecked(q_arr, ids, int(target_size))


def project_unchecked(q: np.ndarray, to_target: np.ndarray, target_size: int) -> np.ndarray:
    """:func:`project` for inputs already checked (the draft wrapper's per-step path).

    `q` may be any non-negative float64 weights (it is normalised over the mapped tokens).
    """
    mapped = to_target >= 0
    out = np.bincount(to_target[mapped], weights=q[mapped], minlength=target_size).astype(np.float64)
    total = out.sum()
    if not total > 0.0:
        raise ValueError("q (draft) puts no mass on tokens the target has: there is nothing it may propose.")
    return out / total
