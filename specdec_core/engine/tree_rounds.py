"""Token-tree rounds of ``generate(..., tree=(b_1, …, b_D))``: draft a token tree, verify it in one pass.

One round:

1. the drafter grows the tree breadth first, b_d children under every node of depth d − 1.
   A draft model feeds each level in one tree forward of its own session and draws the
   children of a node without replacement from its processed q there (greedy: its b_d
   most likely tokens); the n-gram draft proposes up to b_d distinct continuations of a
   node's text from different earlier matches, each a point mass;
2. the target scores the root (the last committed token) and every node in ONE forward
   with a tree attention mask and position ids by depth (``lazy_tree_logits`` /
   ``extend_tree`` of the sessions); its rows are computed and processed as read;
3. verification walks from the root: at each node ``verify_candidates`` over its children
   (greedy: the child equal to the target's argmax), until all children fall (a corrected
   token) or a leaf is accepted (a bonus token from its row): 1 … D + 1 tokens;
4. both caches are compacted to exactly the committed text (``compact``).

The round's event reads like a chain round along the accepted path (its drafts, q/p rows,
acceptance probabilities; a rejection shows the first child tried at the stop node) and
carries the whole tree in ``RoundEvent.tree``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from specdec_core.engine.events import RoundEvent
from specdec_core.engine.processing import argmax_rows, float64_rows
from specdec_core.engine.rows import EagerRows, RowSource, RunMaths
from specdec_core.engine.stopping import eos_set, finish_round
from specdec_core.models.base import Draft, LanguageModel, Proposer
from specdec_core.models.locking import hold
from specdec_core.sampling import one_hot
from specdec_core.token_tree import check_branching, distinct_children, top_children
from specdec_core.verify import sample, verify_candidates


def tree_rows(session: Any, ids: list[int], parents: list[int]) -> RowSource:
    """One tree forward: an HF session's rows on demand, else every row at once."""
    lazy = getattr(session, "lazy_tree_logits", None)
    if lazy is not None:
        return lazy(ids, parents)
    extend = getattr(session, "extend_tree", None)
    if extend is None:
        raise ValueError(f"{type(session).__name__} cannot score a tree in one forward (no extend_tree).")
    return EagerRows(np.asarray(extend(ids, parents), dtype=np.float64))


class Tree:
    """A round's tree: ``tokens[0]`` is the root; ``parents`` / ``depths`` per node, breadth first.

    ``q[i]``: the law node i's children were drawn from (a processed row; for point-mass
    children one one-hot row per child, see ``point_mass``; None when greedy).
    """

    def __init__(self, root: int) -> None:
        self.tokens = [int(root)]
        self.parents = [-1]
        self.depths = [0]
        self.q: list[np.ndarray | None] = [None]
        self.children: list[list[int]] = [[]]

    def add(self, parent: int, token: int) -> int:
        self.tokens.append(int(token))
        self.parents.append(parent)
        self.depths.append(self.depths[parent] + 1)
        self.q.append(None)
        self.children.append([])
        self.children[parent].append(len(self.tokens) - 1)
        return len(self.tokens) - 1

    @property
    def size(self) -> int:
        return len(self.tokens)


class ModelTreeDrafter:
    """A draft model growing the tree level by level, each level one tree forward."""

    point_mass = False

    def __init__(self, draft: LanguageModel, prompt: list[int], target_session: object = None) -> None:
        self.session: Any = draft.session(prompt[:-1])
        bind = getattr(self.session, "bind_target", None)
        if bind is not None:  # a trained head drafts from the target's features (models.head)
            bind(target_session)
        self.pending = [prompt[-1]]

    def propose(self, shape: Sequence[int], run: RunMaths) -> tuple[Tree, int]:
        forwards = 0
        if len(self.pending) > 1:  # committed tokens it has not seen, before the root
            self.session.extend(self.pending[:-1])
            forwards += 1
        tree = Tree(self.pending[-1])
        level = [0]
        for b in shape:
            rows = tree_rows(self.session, [tree.tokens[i] for i in level], [tree.parents[i] for i in level])
            forwards += 1
            nxt: list[int] = []
            for j, node in enumerate(level):
                row = rows.row(j)
                if run.greedy and not run.reference:
                    kids = top_children(float64_rows(row)[0], b)
                else:
                    q = run.probs(row)[0]
                    tree.q[node] = q
                    kids = distinct_children(q, b, run.rng)
                nxt += [tree.add(node, x) for x in kids]
            level = nxt
        self.depth = len(shape)
        return tree, forwards

    def commit(self, tree: Tree, path: list[int], last: int) -> None:
        fed = [i for i in path if tree.depths[i] < self.depth]  # leaves were never fed
        if fed:  # an empty shape fed no tree at all
            self.session.compact(fed)
        self.pending = [tree.tokens[i] for i in path if tree.depths[i] == self.depth] + [last]


def continuations(draft: Proposer, context: Sequence[int], k: int) -> list[int]:
    """Up to k distinct next tokens after the context's tail, from different earlier matches.

    For a prompt-lookup draft (``max_ngram`` / ``min_ngram``): the longest n-gram first,
    latest match first; a draft offering ``continuations`` itself is asked; any other
    proposer gives its one proposal.
    """
    own = getattr(draft, "continuations", None)
    if own is not None:
        return [int(t) for t in own(context, k)][:k]
    if not hasattr(draft, "max_ngram"):
        return [int(t) for t in draft.propose(context, 1)][:1]
    arr = np.asarray(context, dtype=np.int64)
    n_ctx = arr.size
    out: list[int] = []
    for n in range(min(draft.max_ngram, n_ctx - 1), draft.min_ngram - 1, -1):
        tail = arr[n_ctx - n :]
        hits = arr[: n_ctx - n] == tail[0]
        for j in range(1, n):
            hits &= arr[j : n_ctx - n + j] == tail[j]
        for s in np.flatnonzero(hits)[::-1]:
            x = int(arr[s + n])
            if x not in out:
                out.append(x)
                if len(out) == k:
                    return out
    return out


class LookupTreeDrafter:
    """A proposer's tree: each node's children are point masses on distinct continuations."""

    point_mass = True

    def __init__(self, draft: Proposer, prompt: list[int]) -> None:
        self.draft = draft
        self.context = list(prompt)

    def propose(self, shape: Sequence[int], run: RunMaths) -> tuple[Tree, int]:
        tree = Tree(self.context[-1])
        level = [0]
        for b in shape:
            nxt: list[int] = []
            for node in level:
                path = _path(tree, node)[1:]
                kids = continuations(self.draft, self.context + [tree.tokens[i] for i in path], b)
                nxt += [tree.add(node, x) for x in kids]
            level = nxt
        return tree, 0

    def commit(self, tree: Tree, path: list[int], last: int) -> None:
        self.context += [tree.tokens[i] for i in path[1:]] + [last]


def _path(tree: Tree, node: int) -> list[int]:
    out = [node]
    while tree.parents[out[-1]] >= 0:
        out.append(tree.parents[out[-1]])
    return out[::-1]


def make_tree_drafter(
    draft: Draft, prompt: list[int], target_session: object = None
) -> ModelTreeDrafter | LookupTreeDrafter:
    if isinstance(draft, Proposer):
        return LookupTreeDrafter(draft, prompt)
    return ModelTreeDrafter(draft, prompt, target_session)


class Walk:
    """What verification decided along the tree."""

    def __init__(self) -> None:
        self.path = [0]
        self.committed: list[int] = []
        self.kinds: list[str] = []
        self.status: dict[int, str] = {}
        self.alphas: list[float] = []  # of the path's examined drafts (a chain round's view)
        self.drafts: list[int] = []  # the accepted path, then the first child tried at a stop
        self.q_at: list[float] = []
        self.p_at: list[float] = []
        self.p_rows: list[np.ndarray | None] = []  # the target rows read (None when greedy)
        self.q_rows: list[np.ndarray | None] = []
        self.choice: list[int] = []
        self.p_by_node: dict[int, np.ndarray] = {}


def _one_hots(vocab: int, tokens: list[int]) -> np.ndarray:
    return np.stack([one_hot(vocab, t) for t in tokens]) if tokens else np.zeros((0, vocab))


def verify_tree(rows: RowSource, tree: Tree, run: RunMaths, vocab: int, point_mass: bool) -> Walk:
    """Walk from the root: one accepted child per node, until a stop or past a leaf."""
    walk = Walk()
    greedy = run.greedy and not run.reference
    node = 0
    while True:
        kids = tree.children[node]
        if greedy:
            best = argmax_rows(rows.row(node))[0]
            walk.choice.append(best)
            p = None
        else:
            p = run.probs(rows.row(node))[0]
            walk.p_by_node[node] = p
        walk.p_rows.append(p)
        if not kids:
            walk.committed.append(best if greedy else sample(p, run.rng))
            walk.kinds.append("bonus")
            return walk
        cands = [tree.tokens[c] for c in kids]
        if greedy:
            hit = cands.index(best) if best in cands else None
            token, alphas = (
                best,
                [1.0 if i == hit else 0.0 for i in range(len(cands) if hit is None else hit + 1)],
            )
            q_row: np.ndarray | None = None
        else:
            q = _one_hots(vocab, cands) if point_mass else tree.q[node]
            res = verify_candidates(p, q, cands, run.rng, replacement=point_mass)
            hit, token, alphas = res.accepted_index, res.token, res.acceptance_probs
            q_row = q[0 if hit is None else hit] if point_mass else q
        for c in kids[: len(alphas)]:
            walk.status[c] = "rejected"
        shown = kids[0] if hit is None else kids[hit]
        walk.drafts.append(tree.tokens[shown])
        walk.q_rows.append(q_row)
        walk.alphas.append(alphas[0] if hit is None else alphas[hit])
        walk.q_at.append(1.0 if q_row is None else float(q_row[tree.tokens[shown]]))
        walk.p_at.append((1.0 if hit is not None else 0.0) if p is None else float(p[tree.tokens[shown]]))
        walk.committed.append(token)
        if hit is None:
            walk.kinds.append("corrected")
            return walk
        node = kids[hit]
        walk.status[node] = "accepted"
        walk.path.append(node)
        walk.kinds.append("accepted")


def tree_record(tree: Tree, walk: Walk, shape: Sequence[int], run: RunMaths) -> dict[str, Any]:
    """The tree as JSON-ready data for the event: nodes, statuses, the accepted path, rows."""
    status = ["root"] + [walk.status.get(i, "unexamined") for i in range(1, tree.size)]

    def top(row: np.ndarray | None) -> dict[str, Any] | None:
        if row is None or row.ndim != 1:
            return None
        brief = run.compact(row)
        return None if brief is None else brief.to_dict()

    return {
        "branching": [int(b) for b in shape],
        "tokens": list(tree.tokens),
        "parents": list(tree.parents),
        "depths": list(tree.depths),
        "status": status,
        "path": list(walk.path),
        "q": [top(tree.q[i]) for i in range(tree.size)],
        "p": [top(walk.p_by_node.get(i)) for i in range(tree.size)],
    }


def tree_rounds(
    target: LanguageModel,
    draft: Draft,
    prompt: list[int],
    run: RunMaths,
    branching: Sequence[int],
    max_new_tokens: int,
    stop_at_eos: bool,
    lock_timeout: float | None,
) -> Iterator[RoundEvent]:
    """The tree loop of :func:`~specdec_core.engine.loop.generate`."""
    shape_all = check_branching(branching)
    eos = eos_set(target)
    vocab = target.vocab_size
    with hold([target, draft], lock_timeout):
        t0 = time.perf_counter()
        t_sess: Any = target.session(prompt[:-1])
        drafter = make_tree_drafter(draft, prompt, t_sess)
        prefill = time.perf_counter() - t0
        produced, index = 0, 0
        while True:
            start = time.perf_counter()
            shape = shape_all[: max(0, min(len(shape_all), max_new_tokens - produced - 1))]
            tree, draft_forwards = drafter.propose(shape, run)
            drafted = time.perf_counter()
            rows = tree_rows(t_sess, list(tree.tokens), list(tree.parents))
            verified = time.perf_counter()
            walk = verify_tree(rows, tree, run, vocab, drafter.point_mass)
            t_sess.compact(walk.path)
            drafter.commit(tree, walk.path, walk.committed[-1])
            committed, kinds, stop = finish_round(
                walk.committed, walk.kinds, eos, stop_at_eos, produced, max_new_tokens
            )
            event = _event(index, shape, tree, walk, committed, kinds, stop, run, produced)
            end = time.perf_counter()
            head_s = getattr(rows, "seconds", 0.0)
            event = _timed(event, drafted - start, verified - drafted + head_s, end - verified - head_s,
                           prefill if index == 0 else 0.0, draft_forwards)  # fmt: skip
            produced += len(committed)
            index += 1
            yield event
            if stop is not None:
                return


def _event(index, shape, tree, walk, committed, kinds, stop, run, produced) -> RoundEvent:
    q_rows = [r for r in (run.compact(q, x) for q, x in zip(walk.q_rows, walk.drafts, strict=True)) if r]
    if run.greedy and not run.reference:
        p_rows = [r for r in (run.compact(None, c) for c in walk.choice) if r]
    else:
        p_rows = [r for r in (run.compact(p) for p in walk.p_rows) if r]
    accepted = sum(1 for k in kinds if k == "accepted")
    return RoundEvent(
        index=index,
        mode="speculative",
        gamma=len(shape),
        draft_tokens=list(walk.drafts),
        accepted_count=accepted,
        committed=committed,
        kinds=kinds,
        acceptance_probs=list(walk.alphas),
        draft_q=list(walk.q_at),
        draft_p=list(walk.p_at),
        q_rows=q_rows,
        p_rows=p_rows,
        draft_s=0.0,
        verify_s=0.0,
        overhead_s=0.0,
        prefill_s=0.0,
        draft_forwards=0,
        target_forwards=1,
        position=produced,
        stop_reason=stop,
        rejected=walk.kinds[-1] == "corrected",
        extra={"tree_nodes": tree.size - 1},
        tree=tree_record(tree, walk, shape, run),
    )


def _timed(event: RoundEvent, draft_s: float, verify_s: float, overhead_s: float, prefill_s: float,
           draft_forwards: int) -> RoundEvent:  # fmt: skip
    from dataclasses import replace

    return replace(event, draft_s=draft_s, verify_s=verify_s, overhead_s=max(overhead_s, 0.0),
                   prefill_s=prefill_s, draft_forwards=draft_forwards)  # fmt: skip
