"""Data behind the probability-tree figures: groups, layout, paths, mass flows and a path tally.

:func:`tree_view` wraps :func:`specdec_core.verify.tree` and records which real tokens stand
behind each shown label (the top N, then one exact "other" bucket), so a sampled token, a
rejection flow or a tally can be placed on the collapsed tree without losing any mass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from specdec_core.verify import (
    Dist,
    ProbabilityTree,
    StepResult,
    decompose,
    rejection_flows,
    speculative_step,
    tree,
)

#: Column of each node kind in the drawing: start, proposal, verdict, emitted token.
COLUMN = {"root": 0.0, "proposal": 1.0, "reject": 2.0, "accept": 3.0, "resample": 3.0}


@dataclass(frozen=True)
class TreeView:
    """A probability tree plus the real token ids behind each shown label.

    ``groups[g]`` lists the tokens merged into ``tree.labels[g]``; ``node_group[i]`` is the
    label index of node i (None for the start and reject nodes); ``other`` is the index of
    the merged bucket, if there is one.
    """

    tree: ProbabilityTree
    p: np.ndarray
    q: np.ndarray

    @property
    def labels(self) -> list[str]:
        return self.tree.labels

    @property
    def groups(self) -> tuple[np.ndarray, ...]:
        return tuple(self.tree.groups)

    @property
    def node_group(self) -> tuple[int | None, ...]:
        return tuple(node.group for node in self.tree.nodes)

    @property
    def other(self) -> int | None:
        groups = self.tree.groups
        return len(groups) - 1 if groups[-1].size > 1 else None

    @property
    def token_group(self) -> np.ndarray:
        """Label index of every real token."""
        return _token_group(self.groups, self.p.size)

    def aggregate(self, values: np.ndarray) -> np.ndarray:
        """Sum a per-token vector over each shown label."""
        return np.array([values[g].sum() for g in self.groups])


def _token_group(groups: Sequence[np.ndarray], size: int) -> np.ndarray:
    out = np.empty(size, dtype=np.int64)
    for g, members in enumerate(groups):
        out[members] = g
    return out


def tree_view(p: Dist, q: Dist, labels: Sequence[str] | None = None, top_n: int | None = None) -> TreeView:
    """The tree of one speculative step, with tokens outside the top N merged into "other"."""
    t = tree(p, q, labels, top_n)
    return TreeView(t, np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))


def children(t: ProbabilityTree) -> dict[int, list[int]]:
    """Child ids of every node, in the tree's order."""
    out: dict[int, list[int]] = {n.id: [] for n in t.nodes}
    for n in t.nodes:
        if n.parent is not None:
            out[n.parent].append(n.id)
    return out


@dataclass(frozen=True)
class LeafSplit:
    """Per shown label: mass of its direct (accept) leaf, of its redraw leaves, and its p."""

    direct: np.ndarray
    via_reject: np.ndarray
    p: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.direct + self.via_reject

    @property
    def gap(self) -> np.ndarray:
        """Sum of the leaves minus p: zero up to float64 rounding."""
        return self.total - self.p


def leaf_split(view: TreeView) -> LeafSplit:
    """How each label's leaves add up: accepted when proposed, plus redrawn after rejections."""
    direct = np.zeros(len(view.labels))
    via = np.zeros(len(view.labels))
    for node, g in zip(view.tree.nodes, view.node_group, strict=True):
        if node.kind == "accept":
            direct[g] += node.mass
        elif node.kind == "resample":
            via[g] += node.mass
    return LeafSplit(direct, via, view.tree.p)


@dataclass(frozen=True)
class TreeLayout:
    """Drawing positions: ``x``/``y`` per node id (leaves on rows 0, 1, …) and one row per label
    for the column of emitted-token totals (``total_y``)."""

    x: np.ndarray
    y: np.ndarray
    total_y: np.ndarray

    @property
    def rows(self) -> int:
        return round(float(self.y.max())) + 1 if self.y.size else 0


def layout(view: TreeView) -> TreeLayout:
    """Left-to-right positions: each leaf gets its own row, a parent sits between its children."""
    t = view.tree
    kids = children(t)
    x = np.array([COLUMN[n.kind] for n in t.nodes])
    y = np.zeros(len(t.nodes))
    next_row = 0

    def place(i: int) -> float:
        nonlocal next_row
        if not kids[i]:
            y[i] = next_row
            next_row += 1
        else:
            y[i] = float(np.mean([place(c) for c in kids[i]]))
        return y[i]

    place(0)
    last = max(next_row - 1, 0)
    count = len(view.labels)
    # One row per total at least: a small tree (e.g. one greedy rejection) must not stack them.
    total_y = np.linspace(0.0, max(last, count - 1), count) if count > 1 else np.array([last / 2])
    return TreeLayout(x, y, total_y)


@dataclass(frozen=True)
class MassFlows:
    """Where all probability goes, per shown label: ``accepted[x]`` stays x; ``rejected[x, y]``
    is rejected at x and redrawn as y. Rows of both add up to q, columns to p."""

    q: np.ndarray
    p: np.ndarray
    accepted: np.ndarray
    rejected: np.ndarray


def mass_flows(view: TreeView) -> MassFlows:
    """Exact flows between the shown labels (merged tokens are summed, never averaged)."""
    d = decompose(view.p, view.q)
    member = np.zeros((len(view.groups), view.p.size))
    for g, tokens in enumerate(view.groups):
        member[g, tokens] = 1.0
    flows = rejection_flows(view.p, view.q)
    return MassFlows(
        q=member @ view.q,
        p=member @ view.p,
        accepted=member @ d.overlap,
        rejected=member @ flows @ member.T,
    )


def path_nodes(view: TreeView, step: StepResult) -> tuple[int, ...]:
    """Node ids from the start to the leaf that one speculative step went through."""
    t, kids, groups = view.tree, children(view.tree), view.token_group

    def child(parent: int, kind: str, token: int | None = None) -> int:
        for c in kids[parent]:
            if t.nodes[c].kind == kind and (token is None or view.node_group[c] == groups[token]):
                return c
        raise ValueError(
            f"this step ({step}) has no {kind} branch in the tree: it is not a step of this p and q."
        )

    proposal = child(0, "proposal", step.proposed)
    if step.accepted:
        return (0, proposal, child(proposal, "accept"))
    reject = child(proposal, "reject")
    return (0, proposal, reject, child(reject, "resample", step.token))


Outcome = tuple[int, bool, int]  # (proposed, accepted, emitted)


@dataclass(frozen=True)
class SampleRun:
    """A reproducible sequence of speculative steps: the seed, the generator's state now, how
    often each (proposed, accepted, emitted) outcome happened and the latest step."""

    seed: int
    size: int
    state: dict
    outcomes: dict[Outcome, int] = field(default_factory=dict)
    last: StepResult | None = None

    @property
    def n(self) -> int:
        return sum(self.outcomes.values())

    @property
    def emitted(self) -> np.ndarray:
        """How many times each real token was emitted."""
        counts = np.zeros(self.size, dtype=np.int64)
        for (_, _, token), k in self.outcomes.items():
            counts[token] += k
        return counts


def start_run(size: int, seed: int) -> SampleRun:
    """An empty run over a `size`-token vocabulary whose draws follow from `seed`."""
    return SampleRun(seed=seed, size=size, state=np.random.default_rng(seed).bit_generator.state)


def draw(run: SampleRun, p: Dist, q: Dist, n: int = 1) -> SampleRun:
    """`n` more speculative steps (propose, verify, maybe redraw), continuing the run's generator."""
    rng = np.random.default_rng()
    rng.bit_generator.state = run.state
    outcomes = dict(run.outcomes)
    step = run.last
    for _ in range(n):
        step = speculative_step(p, q, rng)
        key = (step.proposed, step.accepted, step.token)
        outcomes[key] = outcomes.get(key, 0) + 1
    return SampleRun(run.seed, run.size, rng.bit_generator.state, outcomes, step)


@dataclass(frozen=True)
class Tally:
    """Sampled paths against the exact law, per shown label and per leaf.

    ``band`` is two standard errors of each share if the emitted law is p (zero before any
    draw); ``tv`` is the total-variation distance between the shares and p.
    """

    n: int
    counts: np.ndarray
    share: np.ndarray
    p: np.ndarray
    band: np.ndarray
    tv: float
    leaf_counts: dict[int, int]


def tally(view: TreeView, run: SampleRun) -> Tally:
    """Count a run's emitted tokens per label and its paths per leaf of `view`."""
    if run.size != view.p.size:
        raise ValueError(f"the run covers {run.size} tokens but the tree {view.p.size}.")
    n = run.n
    counts = view.aggregate(run.emitted)
    p = view.tree.p
    share = counts / n if n else np.zeros_like(p)
    band = 2 * np.sqrt(p * (1 - p) / n) if n else np.zeros_like(p)
    leaf_counts: dict[int, int] = {}
    for (proposed, accepted, token), k in run.outcomes.items():
        leaf = path_nodes(view, StepResult(proposed, accepted, token))[-1]
        leaf_counts[leaf] = leaf_counts.get(leaf, 0) + k
    tv = 0.5 * float(np.abs(share - p).sum()) if n else 0.0
    return Tally(n, counts, share, p, band, tv, leaf_counts)
