"""Token-tree drafts, round by round, on the lesson's Markov pair (lesson "Tree drafts"), as a tree
engine runs it: the draft grows the tree breadth first (b_d distinct children per node of depth
d − 1, its most likely at temperature 0), the target reads the root and every node in ONE forward,
``verify_candidates`` walks from the root, and compaction keeps the prefix, root and accepted path.

A MarkovChainLM's rows depend only on the token itself, so its "tree forward" needs no mask; the
mask and position ids are shown as the transformer would get them. Also here: the exact expected
tokens per round of any tree shape, so shapes with one node budget compare exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from specdec_core.course.block import draft_chain, target_chain
from specdec_core.models.markov import MarkovChainLM, MarkovSession
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.token_tree import (
    TreeLayout,
    check_branching,
    distinct_children,
    layout_from_parents,
    node_budget,
    shapes_with_budget,
    top_children,
)
from specdec_core.verify import (
    CandidateTree,
    acceptance_curve,
    candidate_tree,
    greedy_candidates,
    multi_draft_split,
    sample,
    verify_candidates,
)

#: The one-position example of the multi-candidate probability tree (the seed's A/B/C pair).
EXAMPLE_TOKENS = ("A", "B", "C")
EXAMPLE_P = (0.2, 0.4, 0.4)
EXAMPLE_Q = (0.1, 0.1, 0.8)


@dataclass(frozen=True)
class VerifyStep:
    """Verification at one node of the accepted path: its children and what happened to them.

    ``acceptance_probs[i]`` is min(1, p_i/q_i) of each child tried, in order (greedy: 1 for
    the argmax child, 0 for the others); ``accepted`` the index among ``children`` that stood.
    """

    node: int
    children: list[int]
    acceptance_probs: list[float]
    accepted: int | None
    emitted: int


@dataclass(frozen=True)
class TreeRound:
    """One tree round as plain data (node 0 is the root, the last committed token).

    ``tokens[i]``, ``layout`` (parents, depths) and the processed rows ``q_rows[i]`` (the
    draft's law of node i's children) and ``p_rows[i]`` (the target's row at node i).
    ``status[i]``: "root", "accepted" (on the committed path), "rejected" (tried and
    turned down), or "unexamined" (never reached). ``committed`` / ``kinds`` are what the
    round adds; ``path`` the accepted nodes root first. Cache lengths: before the round,
    after the tree forward (prefix + every node) and after compaction; ``kept_slots`` are
    the flattened tree positions (0 = root) whose entries the compaction keeps.
    """

    index: int
    tokens: list[int]
    layout: TreeLayout
    q_rows: np.ndarray = field(repr=False)
    p_rows: np.ndarray = field(repr=False)
    steps: list[VerifyStep]
    status: list[str]
    path: list[int]
    committed: list[int]
    kinds: list[str]
    prefix_length: int
    cache_peak: int
    cache_after: int
    kept_slots: list[int]
    length_after: int

    @property
    def nodes(self) -> int:
        """Drafted nodes (the root excluded)."""
        return self.layout.size - 1

    @property
    def position_ids(self) -> np.ndarray:
        return self.layout.position_ids(self.prefix_length)


class TreeDemo:
    """Tree speculative decoding on two Markov chains, advanced one round at a time."""

    def __init__(
        self,
        target: MarkovChainLM,
        draft: MarkovChainLM,
        prompt: Sequence[int],
        branching: Sequence[int],
        seed: int,
        sampling: SamplingConfig | None = None,
    ) -> None:
        if draft.vocab_size != target.vocab_size:
            raise ValueError("the draft and the target must share one vocabulary.")
        if not prompt:
            raise ValueError("the prompt needs at least one token to start from.")
        self.target, self.draft = target, draft
        self.branching = check_branching(branching)
        self.sampling = sampling or SamplingConfig()
        self.greedy = self.sampling.temperature == 0
        self.rng = np.random.default_rng(seed)
        self.prompt = list(prompt)
        self.committed = list(prompt)
        self.target_session: MarkovSession = target.session(self.prompt[:-1])
        self.rounds: list[TreeRound] = []
        self._q_rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._p_rows: dict[bytes, np.ndarray] = {}

    def _q(self, token: int) -> tuple[np.ndarray, np.ndarray]:
        """The draft's logits and processed row after `token` (a Markov row: computed once)."""
        if token not in self._q_rows:
            logits = self.draft.next_logits(token)
            self._q_rows[token] = (logits, apply(logits, self.sampling).probs)
        return self._q_rows[token]

    def _p(self, row: np.ndarray) -> np.ndarray:
        key = row.tobytes()
        if key not in self._p_rows:
            self._p_rows[key] = apply(row, self.sampling).probs
        return self._p_rows[key]

    def _draft_tree(self, anchor: int) -> tuple[list[int], list[int], list[np.ndarray]]:
        """Grow the tree breadth first; returns tokens, parents and each node's q row."""
        tokens, parents, q_rows = [anchor], [-1], []
        level = [0]
        for b in self.branching:
            nxt = []
            for node in level:
                logits, q = self._q(tokens[node])
                q_rows.append(q)
                kids = top_children(logits, b) if self.greedy else distinct_children(q, b, self.rng)
                for x in kids:
                    tokens.append(x)
                    parents.append(node)
                    nxt.append(len(tokens) - 1)
            level = nxt
        for node in level:  # leaves: their q row is never used; kept for a uniform table
            q_rows.append(self._q(tokens[node])[1])
        return tokens, parents, q_rows  # levels were walked in node order: q_rows[i] is node i's

    def step(self) -> TreeRound:
        """Draft a tree, score it in one target forward, verify from the root, compact caches."""
        anchor = self.committed[-1]
        prefix = self.target_session.length
        tokens, parents, q_rows = self._draft_tree(anchor)
        layout = layout_from_parents(parents)
        logits = self.target_session.extend(tokens)  # one forward over root + every node
        p_rows = np.array([self._p(row) for row in logits])
        peak = self.target_session.length
        status = ["root"] + ["unexamined"] * (len(tokens) - 1)
        steps: list[VerifyStep] = []
        committed, kinds, node = [], [], 0
        while True:
            kids = layout.children(node)
            if not kids:
                bonus = int(np.argmax(p_rows[node])) if self.greedy else sample(p_rows[node], self.rng)
                committed.append(bonus)
                kinds.append("bonus")
                break
            cands = [tokens[c] for c in kids]
            if self.greedy:
                res = greedy_candidates(logits[node], cands)
            else:
                res = verify_candidates(p_rows[node], q_rows[node], cands, self.rng, replacement=False)
            for c in kids[: res.tried]:
                status[c] = "rejected"
            steps.append(VerifyStep(node, kids, res.acceptance_probs, res.accepted_index, res.token))
            committed.append(res.token)
            if res.accepted_index is None:
                kinds.append("corrected")
                break
            node = kids[res.accepted_index]
            status[node] = "accepted"
            kinds.append("accepted")
        path = layout.path(node)
        # Compaction: keep the prefix, the root and the accepted nodes, in path order.
        self.target_session.truncate(prefix)
        self.target_session.extend([tokens[i] for i in path])
        self.committed += committed
        return self._record(
            tokens, layout, q_rows, p_rows, steps, status, path, committed, kinds, prefix, peak
        )

    def _record(self, tokens, layout, q_rows, p_rows, steps, status, path, committed, kinds, prefix, peak):
        rnd = TreeRound(
            index=len(self.rounds) + 1,
            tokens=tokens,
            layout=layout,
            q_rows=np.array(q_rows),
            p_rows=p_rows,
            steps=steps,
            status=status,
            path=path,
            committed=committed,
            kinds=kinds,
            prefix_length=prefix,
            cache_peak=peak,
            cache_after=self.target_session.length,
            kept_slots=path,
            length_after=len(self.committed),
        )
        self.rounds.append(rnd)
        return rnd


@cache
def lesson_shapes(chain: str, draft: str, budget: int, temperature: float) -> ShapeComparison:
    """:func:`compare_shapes` for the lesson's pair (depth ≤ 6, width ≤ 3), kept once computed."""
    target, draft_lm = lesson_pair(chain, draft)
    return compare_shapes(target, draft_lm, budget, SamplingConfig(temperature=temperature), max_depth=6)


def lesson_pair(chain: str, draft: str) -> tuple[MarkovChainLM, MarkovChainLM]:
    """The block lesson's target chain and draft (the same ten words)."""
    target = target_chain(chain)
    return target, draft_chain(target, draft)


def stationary(chain: MarkovChainLM) -> np.ndarray:
    """The chain's long-run law of the last token (power iteration, float64)."""
    return _stationary(_chain_key(chain)).copy()


def _chain_key(chain: MarkovChainLM) -> tuple[tuple[int, ...], bytes]:
    rows = np.ascontiguousarray(chain.transitions, dtype=np.float64)
    return rows.shape, rows.tobytes()


@lru_cache(maxsize=16)
def _stationary(key: tuple[tuple[int, ...], bytes]) -> np.ndarray:
    """:func:`stationary` of the chain whose transitions are `key`, kept (every shape asks)."""
    shape, data = key
    rows = np.frombuffer(data, dtype=np.float64).reshape(shape)
    law = np.full(shape[0], 1.0 / shape[0])
    for _ in range(2000):
        law = 0.5 * law + 0.5 * (law @ rows)  # lazy steps: converges on periodic chains too
    return law / law.sum()


def expected_tokens_tree(
    target: MarkovChainLM,
    draft: MarkovChainLM,
    branching: Sequence[int],
    sampling: SamplingConfig | None = None,
    anchor_law: np.ndarray | None = None,
) -> float:
    """Exact expected tokens a round commits with tree `branching` (a chain is (1, …, 1)).

    Recursion over the tree, all tokens at once: a node of token t at depth d < D commits
    one token (its child or, when none stands, a corrected one) plus what its standing
    child y commits, so with A_b[t, y] the law of the child that stands among b candidates
    after t (``multi_draft_split``'s accepted part, without replacement; greedy: the argmax
    if it is among the draft's top b), the tokens from depth d are 1 + A_{b_d} · (tokens from
    d + 1), and a node at depth D commits its bonus (1). Averaged over `anchor_law`
    (default: the target's stationary law).
    """
    shape = check_branching(branching)
    cfg = sampling or SamplingConfig()
    tokens = np.ones(target.vocab_size)
    for width in reversed(shape):
        tokens = 1.0 + _accepted_matrix(target, draft, cfg, width) @ tokens
    law = stationary(target) if anchor_law is None else np.asarray(anchor_law, dtype=np.float64)
    return float(law @ tokens)


def _accepted_matrix(
    target: MarkovChainLM, draft: MarkovChainLM, cfg: SamplingConfig, width: int
) -> np.ndarray:
    """A[t, y]: the law of the child that stands among `width` candidates after token t (zero
    where none does), for this pair and sampling; kept, so every shape compared with the same
    pair reads the same rows."""
    return _accepted_for(_chain_key(target), _chain_key(draft), cfg, width)


@lru_cache(maxsize=64)
def _accepted_for(
    target_key: tuple[tuple[int, ...], bytes],
    draft_key: tuple[tuple[int, ...], bytes],
    cfg: SamplingConfig,
    width: int,
) -> np.ndarray:
    target, draft = (MarkovChainLM(np.frombuffer(d).reshape(sh)) for sh, d in (target_key, draft_key))
    size = target.vocab_size
    rows = np.zeros((size, size))
    if cfg.temperature == 0:
        for t in range(size):
            best = int(np.argmax(target.next_logits(t)))
            rows[t, best] = 1.0 if best in top_children(draft.next_logits(t), width) else 0.0
    else:
        p_rows, q_rows = _processed_rows(target_key, draft_key, cfg)
        for t in range(size):
            rows[t] = multi_draft_split(p_rows[t], q_rows[t], width, replacement=False).accepted
    rows.setflags(write=False)
    return rows


@lru_cache(maxsize=16)
def _processed_rows(
    target_key: tuple[tuple[int, ...], bytes], draft_key: tuple[tuple[int, ...], bytes], cfg: SamplingConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Every row of the target and the draft after the sampling transforms (one pass for all
    widths)."""
    target, draft = (MarkovChainLM(np.frombuffer(d).reshape(sh)) for sh, d in (target_key, draft_key))
    p_rows, q_rows = (
        np.array([apply(m.next_logits(t), cfg).probs for t in range(m.vocab_size)]) for m in (target, draft)
    )
    p_rows.setflags(write=False)
    q_rows.setflags(write=False)
    return p_rows, q_rows


@dataclass(frozen=True)
class ShapeComparison:
    """Exact expected tokens per round of every tree shape with one node budget."""

    budget: int
    shapes: list[tuple[int, ...]]
    expected: list[float]

    @property
    def chain(self) -> float:
        return self.expected[self.shapes.index((1,) * self.budget)]

    @property
    def best(self) -> tuple[tuple[int, ...], float]:
        i = int(np.argmax(self.expected))
        return self.shapes[i], self.expected[i]


def compare_shapes(
    target: MarkovChainLM,
    draft: MarkovChainLM,
    budget: int,
    sampling: SamplingConfig | None = None,
    max_depth: int | None = None,
) -> ShapeComparison:
    """Every shape whose full tree has `budget` nodes, with its exact expected tokens per round.

    At most 3 children per node: the exact law without replacement enumerates rejection orders,
    which grows like V!/(V − b)!."""
    shapes = shapes_with_budget(budget, max_depth, 3)
    chain = (1,) * budget
    if chain not in shapes:
        shapes.insert(0, chain)
    values = [expected_tokens_tree(target, draft, s, sampling) for s in shapes]
    return ShapeComparison(budget, shapes, values)


@dataclass(frozen=True)
class OnePosition:
    """The lesson's one-position example: its k-candidate tree and the exact acceptance curves."""

    tree: CandidateTree
    curves: dict[str, np.ndarray]
    k_max: int


def one_position(k: int, replacement: bool, k_max: int = 3) -> OnePosition:
    """The seed pair's k-candidate probability tree and P(accept) for k = 0 … k_max, both ways."""
    p, q = np.array(EXAMPLE_P), np.array(EXAMPLE_Q)
    tree = candidate_tree(p, q, k, replacement, EXAMPLE_TOKENS)
    curves = {"with": acceptance_curve(p, q, k_max, True), "without": acceptance_curve(p, q, k_max, False)}
    return OnePosition(tree, curves, k_max)


def shape_label(branching: Sequence[int]) -> str:
    """(2, 2, 1) → "2-2-1": how the lesson and the bench name a tree."""
    return "-".join(str(b) for b in branching)


__all__ = [
    "EXAMPLE_P",
    "EXAMPLE_Q",
    "EXAMPLE_TOKENS",
    "OnePosition",
    "ShapeComparison",
    "TreeDemo",
    "TreeRound",
    "VerifyStep",
    "compare_shapes",
    "expected_tokens_tree",
    "lesson_pair",
    "lesson_shapes",
    "node_budget",
    "one_position",
    "shape_label",
    "stationary",
]
