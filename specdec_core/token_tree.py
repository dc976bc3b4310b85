"""The shape of a token-tree draft: nodes, tree attention mask, position ids, node budget.

A round's tree has a root, node 0, the last committed token (the first input of the
verification forward, like x in a chain round), and drafted nodes 1 … N in breadth-first
order, each with its parent's index. A node's row of the target is the law of the token
after the path root → node, so N + 1 inputs give N + 1 rows and a leaf's row is its bonus.

In the flattened forward every node attends to the cached prefix and to its own ancestors
(itself included) only, and its position id is prefix length + depth, not its index in the
flattened list (the tree-attention trap of DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

import numpy as np

from specdec_core.verify import inverse_cdf


def check_branching(branching: Sequence[int]) -> tuple[int, ...]:
    """`branching` (b_1, …, b_D) as whole numbers ≥ 1, D ≥ 1; ValueError otherwise."""
    shape = tuple(branching)
    if not shape:
        raise ValueError("a tree needs at least one depth: give (b_1, …, b_D) with D ≥ 1.")
    for d, b in enumerate(shape, start=1):
        if isinstance(b, bool) or not isinstance(b, int | np.integer) or b < 1:
            raise ValueError(f"b_{d} (children per node at depth {d}) must be a whole number ≥ 1, got {b!r}.")
    return tuple(int(b) for b in shape)


def node_budget(branching: Sequence[int]) -> int:
    """Drafted nodes of a full tree: Σ_d b_1 ⋯ b_d (a chain of γ has γ)."""
    return int(sum(accumulate(check_branching(branching), lambda a, b: a * b)))


def shapes_with_budget(
    budget: int, max_depth: int | None = None, max_width: int | None = None
) -> list[tuple[int, ...]]:
    """Every branching (b_1, …, b_D) whose full tree has exactly `budget` nodes (chain first),
    optionally with at most `max_depth` levels and at most `max_width` children per node."""
    if budget < 1:
        raise ValueError(f"a node budget must be at least 1, got {budget}.")
    out: list[tuple[int, ...]] = []

    def grow(prefix: tuple[int, ...], width: int, left: int) -> None:
        if left == 0:
            out.append(prefix)
            return
        if max_depth is not None and len(prefix) >= max_depth:
            return
        top = left // width if max_width is None else min(max_width, left // width)
        for b in range(1, top + 1):
            if width * b <= left:
                grow((*prefix, b), width * b, left - width * b)

    grow((), 1, budget)
    return sorted(out, key=lambda s: (max(s), -len(s), s))


@dataclass(frozen=True)
class TreeLayout:
    """Parents and depths of nodes 0 … N (node 0 the root); ``parents[0]`` is -1."""

    parents: tuple[int, ...]
    depths: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.parents)

    def children(self, node: int) -> list[int]:
        return [i for i, par in enumerate(self.parents) if par == node]

    def path(self, node: int) -> list[int]:
        """Nodes root → `node`, both included."""
        out = [node]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out[::-1]

    def attention_mask(self) -> np.ndarray:
        """allowed[i, j]: node i may attend to node j (j is i or one of its ancestors)."""
        allowed = np.zeros((self.size, self.size), dtype=bool)
        for i in range(self.size):
            allowed[i, self.path(i)] = True
        return allowed

    def position_ids(self, prefix_length: int) -> np.ndarray:
        """Each node's position: the cached prefix length plus its depth."""
        return prefix_length + np.asarray(self.depths, dtype=np.int64)


def layout_from_parents(parents: Sequence[int]) -> TreeLayout:
    """A layout from parent indices (root first with -1; every parent before its children)."""
    pars = tuple(int(x) for x in parents)
    if not pars or pars[0] != -1:
        raise ValueError("node 0 must be the root, with parent -1.")
    depths = [0]
    for i, par in enumerate(pars[1:], start=1):
        if not 0 <= par < i:
            raise ValueError(f"node {i} has parent {par}: a parent must come before its children.")
        depths.append(depths[par] + 1)
    return TreeLayout(pars, tuple(depths))


def distinct_children(q: np.ndarray, b: int, rng: np.random.Generator) -> list[int]:
    """Up to b distinct tokens drawn from q without replacement (q renormalised after each).

    Exactly the law ``verify_candidates(..., replacement=False)`` verifies against; fewer
    than b when q has fewer tokens with positive probability. One uniform draw per child.
    """
    rest = np.array(q, dtype=np.float64)
    out: list[int] = []
    for _ in range(b):
        total = float(rest.sum())
        if total <= 0:
            break
        x = int(inverse_cdf(rest, rng.random()))
        out.append(x)
        rest[x] = 0.0
    return out


def top_children(scores: np.ndarray, b: int) -> list[int]:
    """The b highest-scoring tokens, best first, lower index first on a tie (greedy trees)."""
    arr = np.asarray(scores, dtype=np.float64).reshape(-1)
    k = min(b, arr.size)
    if k < arr.size:  # only the k largest (and every tie with the k-th) can be among them
        cut = np.partition(arr, arr.size - k)[arr.size - k]
        idx = np.flatnonzero(arr >= cut)
    else:
        idx = np.arange(arr.size)
    order = idx[np.lexsort((idx, -arr[idx]))]
    return [int(i) for i in order[:k]]


class TreeSegment:
    """Book-keeping of a tree being fed into a session's cache, possibly over several calls.

    The tree's root sits at cache position ``root``; tree node i at ``root + i`` in feed
    order. :meth:`add` takes the parents (tree indices, -1 for the root) of the next nodes
    and returns their position ids (root + depth) and their attention mask over the cache
    (prefix, every tree node so far, themselves): each sees the prefix and its ancestors.
    """

    def __init__(self, root: int) -> None:
        self.root = int(root)
        self.parents: list[int] = []
        self.depths: list[int] = []

    def add(self, parents: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        first = len(self.parents)
        for par in parents:
            i = len(self.parents)
            par = int(par)
            if (i == 0) != (par == -1) or par >= i:
                raise ValueError(
                    f"tree node {i} has parent {par}: only the root has -1, others an earlier node."
                )
            self.parents.append(par)
            self.depths.append(0 if par < 0 else self.depths[par] + 1)
        size = len(self.parents)
        mask = np.zeros((size - first, self.root + size), dtype=bool)
        mask[:, : self.root] = True
        for r, i in enumerate(range(first, size)):
            j = i
            while j >= 0:
                mask[r, self.root + j] = True
                j = self.parents[j]
        positions = self.root + np.asarray(self.depths[first:], dtype=np.int64)
        return positions, mask

    def kept(self, keep: Sequence[int]) -> list[int]:
        """Cache positions to keep: the prefix, then tree nodes `keep` (a root-first path)."""
        nodes = [int(k) for k in keep]
        if not nodes or nodes[0] != 0 or any(self.parents[b] != a for a, b in pairwise(nodes)):
            raise ValueError("compaction keeps one path of the tree, from the root (node 0) down.")
        return list(range(self.root)) + [self.root + k for k in nodes]
