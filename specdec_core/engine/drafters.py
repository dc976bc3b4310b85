"""The drafters a round can use: a draft model with its session, or a proposer, drafting a
chain of up to γ tokens or a token tree.

A tree grows breadth first, b_d children under every node of depth d − 1. A draft model feeds
each level in one tree forward of its own session and draws the children of a node without
replacement from its processed q there (greedy: its b_d most likely tokens); the n-gram draft
proposes up to b_d distinct continuations of a node's text from different earlier matches,
each a point mass. After verification the draft's cache keeps exactly the committed text.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from specdec_core.engine.processing import float64_rows, token_probability, top_probability
from specdec_core.engine.rows import RunMaths, logit_rows, tree_rows
from specdec_core.models.base import Draft, LanguageModel, Proposer
from specdec_core.token_tree import distinct_children, top_children

if TYPE_CHECKING:
    from specdec_core.engine.rows import Rows


def keeps_draft(chain: float, kept: int, floor: float) -> bool:
    """The chain stop: after `kept` drafts, one more is drawn if it is the first or if
    `chain` (the product of the draft's own probabilities of the kept tokens and of its most
    likely next token) stays at or above `floor`."""
    return kept == 0 or chain >= floor


class ModelDrafter:
    """A draft model with its session; feeds it the committed tokens it has not seen.

    A draft with a ``confidence_floor`` (the trained head, whose confidence is calibrated)
    ends its chain early, EAGLE-2 style: a draft after the first is drawn only while the
    product of the draft's own probabilities of its tokens so far and of its most likely
    next token (its chance, by its own reckoning, that the chain is accepted) stays at or
    above the floor. The stop is decided before the token is drawn, from earlier drafts
    only, so verification, and the output law, are as for any shorter γ; a stop that looked
    at the drawn token would hand the verifier q cut to the tokens it keeps, not q. Under
    greedy decoding the drawn token is the most likely one, so both read the same product.
    """

    def __init__(
        self, draft: LanguageModel, prompt: list[int], target_session: object = None, session: Any = None
    ) -> None:
        """A fresh session of `draft` on ``prompt[:-1]``, bound to `target_session` when it asks;
        or `session`, one already at ``prompt[:-1]`` and bound (``engine.held``)."""
        if session is not None:
            self.session = session
        else:
            self.session = draft.session(prompt[:-1])
            bind = getattr(self.session, "bind_target", None)
            if bind is not None:  # a trained head drafts from the target's features (models.head)
                bind(target_session)
        self.floor = float(getattr(draft, "confidence_floor", 0.0) or 0.0)
        self.pending = [prompt[-1]]
        self.base = 0
        self.fed_before = 0
        self.fed_drafts = 0
        self.step_s: list[float] = []

    @property
    def length(self) -> int | None:
        """Positions the draft's session holds (its KV cache, for a transformer)."""
        return int(self.session.length)

    def propose(self, g: int, run: RunMaths) -> tuple[list[int], list[np.ndarray | None], int]:
        """Up to `g` drafts, each sampled from exactly the processed q reported with it (None:
        greedy, one-hot at the draft), and the forward passes run (one more than the drafts
        when the confidence floor ended the chain: that pass priced the token left out)."""
        self.base = self.session.length
        self.fed_before = len(self.pending)
        tokens: list[int] = []
        qs: list[np.ndarray | None] = []
        feed = self.pending
        chain = 1.0
        forwards = 0
        self.step_s = []
        for _ in range(g):
            began = time.perf_counter()
            row: Rows = logit_rows(self.session, feed, last_only=True)
            forwards += 1
            if self.floor > 0 and not keeps_draft(chain * top_probability(row), len(tokens), self.floor):
                break
            x, q = run.draw(row)
            if self.floor > 0:
                chain *= token_probability(row, x)
            tokens.append(x)
            qs.append(q)
            feed = [x]
            self.step_s.append(time.perf_counter() - began)
        # the session has read every kept draft but the last, or all of them after an early stop
        self.fed_drafts = len(tokens) if forwards > len(tokens) else max(len(tokens) - 1, 0)
        return tokens, qs, forwards

    def commit(self, drafts: list[int], accepted: int, last: int) -> None:
        """Roll the draft's cache back to the accepted drafts; `last` is fed next round."""
        if not drafts:
            self.pending = [*self.pending, last]
            return
        valid = min(accepted, self.fed_drafts)  # drafts the session has read and may keep
        self.session.truncate(self.base + self.fed_before + valid)
        self.pending = [*drafts[valid:accepted], last]


class LookupDrafter:
    """A proposer (n-gram prompt lookup): its q is one-hot on each proposed token."""

    def __init__(self, draft: Proposer, prompt: list[int]) -> None:
        self.draft = draft
        self.context = list(prompt)
        self.step_s: list[float] = []  # a lookup runs no forward pass
        self.length: int | None = None  # and holds no cache

    def propose(self, g: int, run: RunMaths) -> tuple[list[int], list[np.ndarray | None], int]:
        tokens = [int(t) for t in self.draft.propose(self.context, g)][:g] if g > 0 else []
        qs: list[np.ndarray | None] = [None] * len(tokens)
        return tokens, qs, 0

    def commit(self, drafts: list[int], accepted: int, last: int) -> None:
        self.context.extend(drafts[:accepted])
        self.context.append(last)


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


Drafter = ModelDrafter | LookupDrafter | ModelTreeDrafter | LookupTreeDrafter


def make_drafter(
    draft: Draft, prompt: list[int], target_session: object = None, tree: bool = False
) -> Drafter:
    """A proposer (``propose(context, k)``) drafts by lookup; anything else is a draft model
    (bound to `target_session` when its session asks for one); `tree` grows token trees."""
    if isinstance(draft, Proposer):
        return LookupTreeDrafter(draft, prompt) if tree else LookupDrafter(draft, prompt)
    return (
        ModelTreeDrafter(draft, prompt, target_session)
        if tree
        else ModelDrafter(draft, prompt, target_session)
    )
