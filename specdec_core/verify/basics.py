"""What verifying one draft (``one_draft``) and several candidates (``candidates``) at one position share.

The type of a distribution, the inverse-CDF draw every sampler uses, and the node of a
probability tree (proposal → accept / reject → residual draw), so that neither module
has to import the other's internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Dist = Sequence[float] | np.ndarray


def inverse_cdf(dist: np.ndarray, u: float | np.ndarray) -> np.intp | np.ndarray:
    """The index (or indices) that uniform draw(s) `u` in [0, 1) pick from a float64
    distribution (weights need not sum to 1); a zero-probability entry is never picked."""
    cdf = np.cumsum(dist)
    return np.searchsorted(cdf, u * cdf[-1], side="right")


def sample(dist: np.ndarray, rng: np.random.Generator) -> int:
    """Inverse-CDF draw from a float64 distribution; a zero-probability entry is never drawn."""
    return int(inverse_cdf(dist, rng.random()))


@dataclass(frozen=True)
class TreeNode:
    """One node of the probability tree; ``edge_prob`` is P(this | parent), ``mass`` the path mass."""

    id: int
    parent: int | None
    kind: str  # "root", "proposal", "accept", "reject", "resample"
    token: int | None  # None for the root, the reject node and an "other" bucket
    label: str
    edge_prob: float
    mass: float
    group: int | None = None  # index into ProbabilityTree.labels; None for the root and reject nodes

    @property
    def is_leaf(self) -> bool:
        return self.kind in ("accept", "resample")
