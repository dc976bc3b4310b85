"""Input validation shared by the core modules: plain-language ValueErrors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: How far from 1 a distribution may sum and still count as normalised.
SUM_TOL = 1e-9


def as_distribution(values: Sequence[float] | np.ndarray, name: str = "p") -> np.ndarray:
    """Return `values` as a float64 vector after checking it is a probability distribution."""
    arr = as_vector(values, name)
    if np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(
            f"{name} has a negative probability ({arr[bad]:g} at position {bad}); "
            "probabilities must be 0 or more."
        )
    total = float(arr.sum())
    if abs(total - 1.0) > SUM_TOL:
        raise ValueError(
            f"{name} sums to {total:.12g}, not 1: a probability distribution must add up to 1 "
            "(normalise it first)."
        )
    return arr


def as_vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    """Return a non-empty 1-D float64 copy of `values` with no NaN and no +inf."""
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a list of numbers ({exc}).") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat list of numbers, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: it needs at least one entry.")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} contains NaN (not a number); every entry must be a real number.")
    if np.any(np.isposinf(arr)):
        raise ValueError(f"{name} contains +infinity; every entry must be finite.")
    return arr


def same_length(a: np.ndarray, b: np.ndarray, names: str = "p and q") -> None:
    """Raise unless two vectors cover the same vocabulary."""
    if a.shape != b.shape:
        raise ValueError(
            f"{names} must have the same length (one entry per token), got {a.size} and {b.size}."
        )


def token_index(token: int, size: int, name: str = "token") -> int:
    """Check that `token` is a valid index into a vocabulary of `size` tokens."""
    if isinstance(token, bool) or not isinstance(token, int | np.integer):
        raise ValueError(f"{name} must be a whole-number token id, got {token!r}.")
    if not 0 <= int(token) < size:
        raise ValueError(f"{name} {int(token)} is outside the vocabulary 0 … {size - 1}.")
    return int(token)
