"""Exact speculative sampling at one position, and verification of a block of drafts.

A draft proposes x ~ q; the target accepts it with probability min(1, p(x)/q(x)); on a
rejection a replacement is drawn from the residual (p - q)+ / R. The emitted token then
follows p exactly. Everything is float64; no ratio is ever formed where q(x) = 0 and the
residual is never built when R = 0 (rejection is then impossible).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from specdec_core.checks import as_distribution, same_length, token_index
from specdec_core.verify.basics import Dist, TreeNode, sample


@dataclass(frozen=True)
class Decomposition:
    """Where p and q overlap, where q falls short (deficit) and where it overshoots (surplus)."""

    p: np.ndarray
    q: np.ndarray
    overlap: np.ndarray
    deficit: np.ndarray
    surplus: np.ndarray
    rejection_mass: float
    acceptance_rate: float
    residual: np.ndarray | None

    @property
    def deficit_set(self) -> np.ndarray:
        """D: tokens the draft under-proposes (p > q)."""
        return np.flatnonzero(self.deficit > 0)

    @property
    def surplus_set(self) -> np.ndarray:
        """S: tokens the draft over-proposes (q > p)."""
        return np.flatnonzero(self.surplus > 0)


@dataclass(frozen=True)
class StepResult:
    """One speculative step: what the draft proposed, whether it stood, what was emitted."""

    proposed: int
    accepted: bool
    token: int


@dataclass(frozen=True)
class BlockResult:
    """Verification of K drafts: ``accepted`` of them stood; ``tokens`` (1 … K+1) are committed.

    ``kinds[i]`` is "accepted", "corrected" or "bonus"; ``acceptance_probs[i]`` is
    min(1, p/q) at each draft position that was examined.
    """

    accepted: int
    tokens: list[int]
    kinds: list[str]
    acceptance_probs: list[float]


def _pair(p: Dist, q: Dist) -> tuple[np.ndarray, np.ndarray]:
    p_arr = as_distribution(p, "p (target)")
    q_arr = as_distribution(q, "q (draft)")
    same_length(p_arr, q_arr, "p (target) and q (draft)")
    return p_arr, q_arr


def decompose(p: Dist, q: Dist) -> Decomposition:
    """Split p and q into min(p, q), (p - q)+ and (q - p)+, with R and the residual."""
    p_arr, q_arr = _pair(p, q)
    overlap = np.minimum(p_arr, q_arr)
    deficit = np.maximum(p_arr - q_arr, 0.0)
    surplus = np.maximum(q_arr - p_arr, 0.0)
    r = float(deficit.sum())
    residual = deficit / r if r > 0 else None
    return Decomposition(
        p=p_arr,
        q=q_arr,
        overlap=overlap,
        deficit=deficit,
        surplus=surplus,
        rejection_mass=r,
        acceptance_rate=float(overlap.sum()),
        residual=residual,
    )


def _alpha(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    out = np.zeros_like(p)
    out[(q > 0) & (p >= q)] = 1.0
    below = (q > 0) & (p < q)  # only here is p/q < 1, so the division cannot overflow
    out[below] = p[below] / q[below]
    return out


def acceptance_probs(p: Dist, q: Dist) -> np.ndarray:
    """min(1, p/q) where q > 0; 0 where q = 0 (the draft never proposes those tokens)."""
    return _alpha(*_pair(p, q))


def output_distribution(p: Dist, q: Dist) -> np.ndarray:
    """The exact law of the emitted token, built path by path from the algorithm.

    Direct path q(x)·α(x) plus the rejection mass routed through the residual. It equals p:
    this is the losslessness the lessons prove on screen.
    """
    d = decompose(p, q)
    accepted = d.q * _alpha(d.p, d.q)
    if d.residual is None:
        return accepted + (d.q - accepted)  # rejection impossible: every proposal stands
    rejected = float(np.sum(d.q - accepted))
    return accepted + rejected * d.residual


def _step(p: np.ndarray, q: np.ndarray, x: int, rng: np.random.Generator) -> tuple[bool, int, float]:
    """Accept/reject an already proposed x; returns (accepted, emitted token, α(x))."""
    if q[x] <= 0:
        raise ValueError(
            f"the draft proposed token {x} but its q gives it probability 0: a draft must "
            "sample from exactly the q it reports."
        )
    alpha = 1.0 if p[x] >= q[x] else float(p[x] / q[x])
    if rng.random() < alpha:
        return True, x, alpha
    deficit = np.maximum(p - q, 0.0)
    total = deficit.sum()
    if total <= 0:  # R = 0: rejection is impossible in exact arithmetic; skip the residual
        return True, x, alpha
    return False, sample(deficit / total, rng), alpha


def speculative_step(p: Dist, q: Dist, rng: np.random.Generator) -> StepResult:
    """Propose x ~ q, accept with min(1, p/q), else draw from the residual."""
    p_arr, q_arr = _pair(p, q)
    proposed = sample(q_arr, rng)
    accepted, token, _ = _step(p_arr, q_arr, proposed, rng)
    return StepResult(proposed=proposed, accepted=accepted, token=token)


def verify_block(
    p_rows: Sequence[Dist] | np.ndarray,
    q_rows: Sequence[Dist] | np.ndarray,
    draft_tokens: Sequence[int],
    rng: np.random.Generator,
) -> BlockResult:
    """Verify K drafts left to right with K+1 target rows.

    Stops at the first rejection (its corrected token is still committed); after K
    acceptances one bonus token is drawn from the last target row.
    """
    k = len(draft_tokens)
    if len(p_rows) != k + 1:
        raise ValueError(f"verify_block needs K+1 = {k + 1} target rows for {k} drafts, got {len(p_rows)}.")
    if len(q_rows) != k:
        raise ValueError(f"verify_block needs one draft row per draft token ({k}), got {len(q_rows)}.")
    ps = [as_distribution(row, f"p row {i}") for i, row in enumerate(p_rows)]
    qs = [as_distribution(row, f"q row {i}") for i, row in enumerate(q_rows)]
    for i, q_row in enumerate(qs):
        same_length(ps[i], q_row, f"p row {i} and q row {i}")
    result, _ = _verify_left_to_right(
        ps.__getitem__, qs, draft_tokens, rng, lambda i, x: token_index(x, ps[i].size, f"draft token {i}")
    )
    return result


def verify_rows(
    p_row: Callable[[int], np.ndarray],
    q_rows: Sequence[np.ndarray],
    draft_tokens: Sequence[int],
    rng: np.random.Generator,
) -> tuple[BlockResult, list[np.ndarray]]:
    """:func:`verify_block` reading the processed target row `p_row(i)` only when needed.

    For a caller whose rows are already valid float64 distributions (the engine: rows past
    the first rejection are then never computed). Returns the result and the p rows it
    read (one per committed token: the examined drafts' rows, then the bonus row if every
    draft was accepted). Same decisions and the same random draws as ``verify_block``.
    """
    return _verify_left_to_right(
        p_row, [np.asarray(q, dtype=np.float64) for q in q_rows], draft_tokens, rng, lambda i, x: int(x)
    )


def _verify_left_to_right(
    p_row: Callable[[int], np.ndarray],
    q_rows: Sequence[np.ndarray],
    draft_tokens: Sequence[int],
    rng: np.random.Generator,
    to_index: Callable[[int, int], int],
) -> tuple[BlockResult, list[np.ndarray]]:
    """The verification loop of both entry points; `to_index(i, x)` checks draft token i."""
    tokens: list[int] = []
    kinds: list[str] = []
    alphas: list[float] = []
    used: list[np.ndarray] = []
    for i, x in enumerate(draft_tokens):
        p = p_row(i)
        used.append(p)
        accepted, token, alpha = _step(p, q_rows[i], to_index(i, x), rng)
        alphas.append(alpha)
        tokens.append(token)
        if not accepted:
            kinds.append("corrected")
            return BlockResult(accepted=i, tokens=tokens, kinds=kinds, acceptance_probs=alphas), used
        kinds.append("accepted")
    p = p_row(len(draft_tokens))
    used.append(p)
    tokens.append(sample(p, rng))
    kinds.append("bonus")
    return BlockResult(accepted=len(draft_tokens), tokens=tokens, kinds=kinds, acceptance_probs=alphas), used


@dataclass(frozen=True)
class ProbabilityTree:
    """Proposal → accept / reject → residual draw, with exact path masses.

    ``leaf_totals[i]`` sums the leaves that emit ``labels[i]``; it equals p of that label.
    With ``top_n`` the tokens outside the top N are merged into one "other" label without
    losing exactness: the merged masses are sums over the real tokens. ``groups[i]`` lists
    the token ids behind ``labels[i]``.
    """

    nodes: list[TreeNode]
    labels: list[str]
    groups: list[np.ndarray]
    p: np.ndarray
    q: np.ndarray
    leaf_totals: np.ndarray
    deficit_set: list[int]
    surplus_set: list[int]
    rejection_mass: float

    @property
    def edges(self) -> list[tuple[int, int, float, float]]:
        """(parent id, child id, conditional probability, path mass) for every edge."""
        return [(n.parent, n.id, n.edge_prob, n.mass) for n in self.nodes if n.parent is not None]

    @property
    def leaves(self) -> list[TreeNode]:
        return [n for n in self.nodes if n.is_leaf]


def _groups(d: Decomposition, top_n: int | None) -> list[np.ndarray]:
    """Token indices behind each displayed label: singletons, then one "other" bucket."""
    size = d.p.size
    if top_n is None or top_n >= size:
        return [np.array([i]) for i in range(size)]
    order = np.lexsort((np.arange(size), -np.maximum(d.p, d.q)))
    return [np.array([i]) for i in order[:top_n]] + [np.sort(order[top_n:])]


def tree(p: Dist, q: Dist, labels: Sequence[str] | None = None, top_n: int | None = None) -> ProbabilityTree:
    """The proposal → accept/reject → residual tree of one speculative step.

    Branches of zero mass are left out. `labels` names the tokens (default "0", "1", …);
    `top_n` keeps the N tokens with the largest max(p, q) and merges the rest into "other".
    """
    d = decompose(p, q)
    size = d.p.size
    names = [str(i) for i in range(size)] if labels is None else [str(s) for s in labels]
    if len(names) != size:
        raise ValueError(f"labels must name every token: {size} tokens but {len(names)} labels.")
    if top_n is not None and top_n < 1:
        raise ValueError(f"top_n must be at least 1, got {top_n}.")
    groups = _groups(d, top_n)
    shown = [names[g[0]] if g.size == 1 else "other" for g in groups]

    def agg(vec: np.ndarray) -> np.ndarray:
        return np.array([vec[g].sum() for g in groups])

    gp, gq, g_over, g_sur, g_def = (agg(v) for v in (d.p, d.q, d.overlap, d.surplus, d.deficit))
    g_res = agg(d.residual) if d.residual is not None else np.zeros(len(groups))
    nodes = [TreeNode(0, None, "root", None, "start", 1.0, 1.0)]
    totals = np.zeros(len(groups))
    for gi, g in enumerate(groups):
        if gq[gi] <= 0:
            continue
        token = int(g[0]) if g.size == 1 else None
        prop = TreeNode(len(nodes), 0, "proposal", token, shown[gi], float(gq[gi]), float(gq[gi]), gi)
        nodes.append(prop)
        if g_over[gi] > 0:
            nodes.append(
                TreeNode(
                    len(nodes),
                    prop.id,
                    "accept",
                    token,
                    shown[gi],
                    float(g_over[gi] / gq[gi]),
                    float(g_over[gi]),
                    gi,
                )
            )
            totals[gi] += g_over[gi]
        if g_sur[gi] > 0 and d.residual is not None:
            rej = TreeNode(
                len(nodes), prop.id, "reject", None, "reject", float(g_sur[gi] / gq[gi]), float(g_sur[gi])
            )
            nodes.append(rej)
            for gj, gr in enumerate(g_res):
                if gr > 0:
                    mass = float(g_sur[gi] * gr)
                    tok = int(groups[gj][0]) if groups[gj].size == 1 else None
                    nodes.append(
                        TreeNode(len(nodes), rej.id, "resample", tok, shown[gj], float(gr), mass, gj)
                    )
                    totals[gj] += mass
    return ProbabilityTree(
        nodes=nodes,
        labels=shown,
        groups=groups,
        p=gp,
        q=gq,
        leaf_totals=totals,
        deficit_set=[int(i) for i in np.flatnonzero(g_def > 0)],
        surplus_set=[int(i) for i in np.flatnonzero(g_sur > 0)],
        rejection_mass=d.rejection_mass,
    )


def rejection_flows(p: Dist, q: Dist) -> np.ndarray:
    """flows[x, y]: mass rejected at surplus token x and redrawn as deficit token y.

    Row sums are the surplus (q - p)+, column sums the deficit (p - q)+.
    """
    d = decompose(p, q)
    if d.residual is None:
        return np.zeros((d.p.size, d.p.size))
    return np.outer(d.surplus, d.residual)
