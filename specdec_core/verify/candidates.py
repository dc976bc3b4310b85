"""Several draft candidates at one position: recursive rejection sampling (token-tree drafts).

A tree draft offers k candidates x_1 … x_k for the next token. They are tried in order:
x_i stands with probability min(1, p_i(x_i) / q_i(x_i)), where p_1 = p, q_1 = q; after a
rejection the target moves to its residual p_{i+1} = norm((p_i − q_i)+). With replacement
the candidates are i.i.d. from q (q_{i+1} = q); without, they are distinct, each drawn from
q with the earlier ones removed and renormalised. A 2-D q gives every candidate its own
law (independent drafts, e.g. the point masses of an n-gram draft). When every candidate
falls, one token is drawn from the last residual. Each step emits exactly its p_i, so the
emitted token follows p for every k (SpecInfer, Miao et al. 2024, §4).

Everything is float64; a ratio is never formed where q_i(x) = 0 and no residual is built
when its mass is 0 (rejection is then impossible).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from specdec_core.checks import as_distribution, same_length, token_index
from specdec_core.verify.basics import Dist, TreeNode, sample

#: Most states the exact law without replacement may enumerate before it refuses.
MAX_STATES = 200_000
#: Most cells (orders × vocabulary) one batch of ``_orders`` holds.
_BATCH_CELLS = 1 << 20


@dataclass(frozen=True)
class CandidateResult:
    """What one position of a tree emitted: ``token``, and which candidate stood.

    ``accepted_index`` is None when every candidate was rejected (the token then comes from
    the last residual); ``acceptance_probs[i]`` is min(1, p_i/q_i) of each candidate tried.
    """

    token: int
    accepted_index: int | None
    acceptance_probs: list[float]

    @property
    def tried(self) -> int:
        return len(self.acceptance_probs)


@dataclass(frozen=True)
class CandidateSplit:
    """The exact law of the emitted token split by how it was emitted.

    ``accepted[y]``: probability that a candidate equal to y stood; ``residual[y]``: that every
    candidate fell and y was drawn from the last residual. They add up to p.
    ``reached[i]`` is the probability that candidate i + 1 is tried (``reached[0] = 1``).
    """

    accepted: np.ndarray
    residual: np.ndarray
    reached: np.ndarray

    @property
    def law(self) -> np.ndarray:
        return self.accepted + self.residual

    @property
    def acceptance(self) -> float:
        """P(some candidate stands)."""
        return float(self.accepted.sum())


def _rows(
    p: Dist, q: Dist | np.ndarray, replacement: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(p, q or None, q rows or None-shaped): validate p and either one q or one q per candidate."""
    p_arr = as_distribution(p, "p (target)")
    q_raw = np.asarray(q, dtype=np.float64) if not isinstance(q, np.ndarray) else q
    if q_raw.ndim == 2:
        if not replacement:
            raise ValueError(
                "replacement=False removes earlier candidates from one q; with one q row per "
                "candidate, pass each candidate's own law and replacement=True."
            )
        checked = [as_distribution(r, f"q row {i}") for i, r in enumerate(q_raw)]
        rows = np.stack(checked) if checked else np.empty((0, p_arr.size))
        for i, r in enumerate(rows):
            same_length(p_arr, r, f"p (target) and q row {i}")
        return p_arr, None, rows
    q_arr = as_distribution(q_raw, "q (draft)")
    same_length(p_arr, q_arr, "p (target) and q (draft)")
    return p_arr, q_arr, np.empty((0, p_arr.size))


def _residual(p: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """norm((p − q)+), or None when that mass is 0 (q covers p: rejection impossible)."""
    deficit = np.maximum(p - q, 0.0)
    total = float(deficit.sum())
    return deficit / total if total > 0 else None


def _without(q: np.ndarray, x: int) -> np.ndarray | None:
    """q with token x removed and renormalised; None when nothing is left to draw."""
    rest = q.copy()
    rest[x] = 0.0
    total = float(rest.sum())
    return rest / total if total > 0 else None


def verify_candidates(
    p: Dist,
    q: Dist | np.ndarray,
    candidates: Sequence[int],
    rng: np.random.Generator,
    replacement: bool = True,
) -> CandidateResult:
    """Try `candidates` in order against p and its residuals; the emitted token follows p.

    `q` is the draft's law the candidates were drawn from (1-D), or one row per candidate
    (2-D: independent drafts such as an n-gram draft's point masses). ``replacement=False``
    means the candidates are distinct and each was drawn from q without the earlier ones.
    One uniform draw per candidate tried, then one residual draw if all fell.
    """
    p_i, q_i, rows = _rows(p, q, replacement)
    per_row = q_i is None
    if per_row and len(candidates) > len(rows):
        raise ValueError(f"{len(candidates)} candidates but only {len(rows)} q rows: one row per candidate.")
    xs = [token_index(x, p_i.size, f"candidate {i}") for i, x in enumerate(candidates)]
    if not replacement and len(set(xs)) != len(xs):
        raise ValueError("replacement=False needs distinct candidates, but a token is repeated.")
    alphas: list[float] = []
    for i, x in enumerate(xs):
        law = rows[i] if per_row else q_i
        if law is None or law[x] <= 0:
            raise ValueError(
                f"candidate {i} is token {x}, which its q gives probability 0: a draft must "
                "sample from exactly the q it reports."
            )
        alpha = 1.0 if p_i[x] >= law[x] else float(p_i[x] / law[x])
        alphas.append(alpha)
        accept = rng.random() < alpha
        nxt = None if accept else _residual(p_i, law)
        if accept or nxt is None:  # R = 0: rejection impossible in exact arithmetic
            return CandidateResult(token=x, accepted_index=i, acceptance_probs=alphas)
        p_i = nxt
        if not per_row and not replacement:
            q_i = _without(q_i, x)
    return CandidateResult(token=sample(p_i, rng), accepted_index=None, acceptance_probs=alphas)


def greedy_candidates(scores: Dist | np.ndarray, candidates: Sequence[int]) -> CandidateResult:
    """Greedy tree verification: the child equal to the target's argmax stands.

    `scores` are the target's logits or probabilities; the argmax takes the lowest index on
    a tie (like ``torch.argmax``). The emitted token is that argmax either way.
    """
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or np.any(np.isnan(arr)):
        raise ValueError("scores must be a flat, non-empty list of numbers without NaN.")
    best = int(np.argmax(arr))
    xs = [token_index(x, arr.size, f"candidate {i}") for i, x in enumerate(candidates)]
    hit = xs.index(best) if best in xs else None
    tried = len(xs) if hit is None else hit + 1
    probs = [1.0 if i == hit else 0.0 for i in range(tried)]
    return CandidateResult(token=best, accepted_index=hit, acceptance_probs=probs)


def multi_draft_split(p: Dist, q: Dist | np.ndarray, k: int, replacement: bool = True) -> CandidateSplit:
    """The exact law of the emitted token with k candidates, split into accepted / residual parts.

    With replacement (or one q row per candidate) the residual chain p_1, p_2, … does not
    depend on which token fell, so this is k vector steps. Without replacement q_{i+1}
    depends on the fallen tokens, so every order of rejected tokens is enumerated (exact;
    only tokens that can be rejected branch) — meant for lesson-sized vocabularies.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise ValueError(f"k (the number of candidates) must be a whole number ≥ 0, got {k!r}.")
    p_arr, q_arr, rows = _rows(p, q, replacement)
    if q_arr is None and k > len(rows):
        raise ValueError(f"k = {k} candidates but only {len(rows)} q rows: one row per candidate.")
    accepted = np.zeros_like(p_arr)
    residual = np.zeros_like(p_arr)
    reached = np.zeros(k + 1)
    if q_arr is None or replacement:
        p_i, mass = p_arr, 1.0
        for i in range(k):
            reached[i] = mass
            law = rows[i] if q_arr is None else q_arr
            accepted += mass * np.minimum(p_i, law)
            nxt = _residual(p_i, law)
            if nxt is None:
                return CandidateSplit(accepted, residual, reached)
            mass *= float(np.maximum(p_i - law, 0.0).sum())
            p_i = nxt
        reached[k] = mass
        residual += mass * p_i
        return CandidateSplit(accepted, residual, reached)
    if k == 0:
        return CandidateSplit(accepted, p_arr.copy(), np.array([1.0]))
    counted = [1]  # the root
    _orders(p_arr[None, :], q_arr[None, :], np.ones(1), 0, k, accepted, residual, reached, counted)
    return CandidateSplit(accepted, residual, reached)


def _orders(
    p_rows: np.ndarray,
    q_rows: np.ndarray,
    mass: np.ndarray,
    i: int,
    k: int,
    accepted: np.ndarray,
    residual: np.ndarray,
    reached: np.ndarray,
    counted: list[int],
) -> None:
    """Candidate i of every rejection order in a batch, without replacement, then its children.

    Row s is one order of rejected tokens so far: its target law p_i, its draft law q_i (the
    rejected tokens removed) and its mass. Only tokens with q_i(x) > p_i(x) can fall, so only
    they branch; after the last candidate every order draws from its residual, whichever
    token fell. Children are taken a bounded batch at a time (memory stays O(k · batch · V)).
    """
    reached[i] += float(mass.sum())
    accepted += mass @ np.minimum(p_rows, q_rows)
    deficit = np.maximum(p_rows - q_rows, 0.0)
    total = deficit.sum(axis=1)
    live = total > 0  # no deficit: q_i covers p_i and rejection is impossible
    rows, fell = np.nonzero((q_rows > p_rows) & live[:, None])
    counted[0] += rows.size
    if counted[0] > MAX_STATES:
        raise ValueError(
            f"the exact law without replacement would enumerate more than {MAX_STATES} "
            "rejection orders; use a smaller vocabulary or fewer candidates."
        )
    if rows.size == 0:
        return
    nxt = np.zeros_like(deficit)
    nxt[live] = deficit[live] / total[live, None]
    leaf = mass[rows] * (q_rows[rows, fell] - p_rows[rows, fell])
    if i + 1 == k:  # the last rejection: each order ends drawing from its residual
        reached[k] += float(leaf.sum())
        residual += leaf @ nxt[rows]
        return
    batch = max(1, _BATCH_CELLS // p_rows.shape[1])
    for lo in range(0, rows.size, batch):
        r, x, m = rows[lo : lo + batch], fell[lo : lo + batch], leaf[lo : lo + batch]
        q_next = q_rows[r].copy()
        q_next[np.arange(r.size), x] = 0.0
        left = q_next.sum(axis=1)
        empty = left <= 0  # the fallen token was all q had: the residual is drawn at once
        if empty.any():
            residual += m[empty] @ nxt[r[empty]]
        keep = ~empty
        if keep.any():
            q_keep = q_next[keep] / left[keep, None]
            _orders(nxt[r[keep]], q_keep, m[keep], i + 1, k, accepted, residual, reached, counted)


def multi_draft_distribution(p: Dist, q: Dist | np.ndarray, k: int, replacement: bool = True) -> np.ndarray:
    """The exact law of the token emitted when k candidates are drafted and verified; equals p."""
    return multi_draft_split(p, q, k, replacement).law


def candidate_acceptance(p: Dist, q: Dist | np.ndarray, k: int, replacement: bool = True) -> float:
    """P(one of k candidates stands), exactly; k = 1 is Σ min(p, q). Non-decreasing in k."""
    return multi_draft_split(p, q, k, replacement).acceptance


def acceptance_curve(p: Dist, q: Dist, k_max: int, replacement: bool = True) -> np.ndarray:
    """[P(accept) for k = 0 … k_max]: the curve the Tree drafts lesson plots."""
    return np.array([candidate_acceptance(p, q, k, replacement) for k in range(k_max + 1)])


@dataclass(frozen=True)
class CandidateTree:
    """The multi-candidate probability tree of one position, with exact path masses.

    Nodes (``basics.TreeNode``): "root" → "proposal" (candidate i is token x) → "accept" or
    "reject" → the next "proposal", …, and after the last rejection a "resample" leaf per
    token of the residual. ``residuals[node id]`` is the target law p_{i+1} a reject node
    passes on. ``leaf_totals[y]`` sums the leaves that emit token y; it equals p.
    """

    nodes: list[TreeNode]
    labels: list[str]
    k: int
    replacement: bool
    residuals: dict[int, np.ndarray]
    leaf_totals: np.ndarray

    @property
    def leaves(self) -> list[TreeNode]:
        return [n for n in self.nodes if n.is_leaf]


def candidate_tree(
    p: Dist,
    q: Dist,
    k: int,
    replacement: bool = True,
    labels: Sequence[str] | None = None,
    max_nodes: int = 2000,
) -> CandidateTree:
    """Every branch of k-candidate verification at one position (zero-mass branches left out).

    Meant for a lesson's small vocabulary: refuses (ValueError) past `max_nodes` nodes.
    """
    p_arr, q_arr, _ = _rows(p, q, replacement)
    if q_arr is None:
        raise ValueError("candidate_tree draws one q; pass a 1-D q.")
    names = [str(i) for i in range(p_arr.size)] if labels is None else [str(s) for s in labels]
    if len(names) != p_arr.size:
        raise ValueError(f"labels must name every token: {p_arr.size} tokens but {len(names)} labels.")
    nodes = [TreeNode(0, None, "root", None, "start", 1.0, 1.0)]
    residuals: dict[int, np.ndarray] = {}
    totals = np.zeros_like(p_arr)

    def add(parent: int, kind: str, token: int | None, edge: float, mass: float) -> int:
        if len(nodes) >= max_nodes:
            raise ValueError(
                f"the tree would have more than {max_nodes} nodes; use fewer tokens or candidates."
            )
        label = "reject" if token is None else names[token]
        nodes.append(TreeNode(len(nodes), parent, kind, token, label, edge, mass, token))
        return len(nodes) - 1

    def grow(parent: int, p_i: np.ndarray, q_i: np.ndarray | None, mass: float, i: int) -> None:
        if i == k or q_i is None:
            for y in np.flatnonzero(p_i > 0):
                add(parent, "resample", int(y), float(p_i[y]), mass * float(p_i[y]))
                totals[y] += mass * p_i[y]
            return
        nxt = _residual(p_i, q_i)
        for x in np.flatnonzero(q_i > 0):
            x = int(x)
            m_prop = mass * float(q_i[x])
            prop = add(parent, "proposal", x, float(q_i[x]), m_prop)
            alpha = 1.0 if p_i[x] >= q_i[x] or nxt is None else float(p_i[x] / q_i[x])
            if alpha > 0:
                add(prop, "accept", x, alpha, m_prop * alpha)
                totals[x] += m_prop * alpha
            if alpha < 1:
                rej = add(prop, "reject", None, 1.0 - alpha, m_prop * (1.0 - alpha))
                residuals[rej] = nxt
                grow(rej, nxt, q_i if replacement else _without(q_i, x), m_prop * (1.0 - alpha), i + 1)

    grow(0, p_arr, q_arr, 1.0, 0)
    return CandidateTree(nodes, names, k, replacement, residuals, totals)
