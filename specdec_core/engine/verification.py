"""One round's verification: a chain of drafts (one function per mode), or a token tree.

Chains:

* greedy (temperature 0, fast): the target's argmax read left to right
  (``processing.greedy_choices``) and ``processing.verify_greedy``;
* sampled (fast): ``verify.verify_rows``, processing each target row only when it is read;
* reference: every row processed by ``sampling.apply`` and ``verify.verify_block``.

All three decide exactly as ``verify.verify_block`` on the same rows and draw the same
random numbers (tested), so they only differ in the work they do. The broken rules of the
law lab (:mod:`.rules`) return the same :class:`Verdict`.

Trees (:func:`verify_tree`) walk from the root: at each node ``verify_candidates`` over its
children (greedy: the child equal to the target's argmax), until all children fall (a
corrected token) or a leaf is accepted (a bonus token from its row).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specdec_core.engine.drafters import Tree
from specdec_core.engine.processing import argmax_rows, greedy_choices, verify_greedy
from specdec_core.engine.rows import RowSource, RunMaths
from specdec_core.sampling import one_hot
from specdec_core.verify import sample, verify_block, verify_candidates, verify_rows


@dataclass
class Verdict:
    """What verification decided, and the probabilities it read.

    ``tokens`` / ``kinds``: what the round commits (before an EOS cut); ``alphas`` the
    acceptance probability of each examined draft; ``drafts`` the drafts an event shows (a
    chain's drafts; a tree's accepted path, then the first child tried where it stopped),
    ``q_rows`` the q each was drawn from (None: one-hot at it); ``draft_q[i]`` / ``draft_p[i]``
    q and p at draft i (p only for the drafts examined); ``p_used`` the processed target rows
    read (None in the greedy mode, where ``choice`` holds the target's argmax at each row
    read instead). A tree's verdict also has the accepted ``path`` (node indices from the
    root), each node's ``status`` and its p rows by node.
    """

    tokens: list[int]
    kinds: list[str]
    alphas: list[float]
    drafts: list[int]
    q_rows: list[np.ndarray | None]
    draft_q: list[float]
    draft_p: list[float]
    p_used: list[np.ndarray] | None
    choice: list[int] = field(default_factory=list)
    path: list[int] = field(default_factory=list)
    status: dict[int, str] = field(default_factory=dict)
    p_by_node: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        """Drafts kept: every committed token but the last (a correction or the bonus)."""
        return len(self.tokens) - 1


def verify_round(
    rows: RowSource, drafts: Sequence[int], qs: Sequence[np.ndarray | None], run: RunMaths, vocab: int
) -> Verdict:
    """Verify `drafts` (q rows `qs`, None meaning one-hot at the draft) against `rows`."""
    if run.greedy and not run.reference:
        choice = greedy_choices(rows.row, drafts)
        result = verify_greedy(choice, drafts, run.rng)
        examined = len(result.acceptance_probs)
        draft_p = [1.0 if drafts[i] == choice[i] else 0.0 for i in range(examined)]
        alphas = list(result.acceptance_probs)
        return Verdict(result.tokens, result.kinds, alphas, list(drafts), list(qs), [1.0] * len(drafts),
                       draft_p, None, choice)  # fmt: skip
    q_rows = full_q(drafts, qs, vocab)
    if run.reference:  # every row computed and processed, then ``verify_block``
        p_all = run.probs(rows.all())
        q = np.stack(q_rows) if drafts else np.zeros((0, vocab))
        result = verify_block(p_all, q, list(drafts), run.rng)
        p_used = list(p_all[: len(result.tokens)])
    else:  # each target row processed only when verification reads it
        result, used = verify_rows(run.row_probs(rows), q_rows, list(drafts), run.rng)
        p_used = list(used)
    return chain_verdict(
        result.tokens, result.kinds, list(result.acceptance_probs), drafts, qs, q_rows, p_used
    )


def full_q(drafts: Sequence[int], qs: Sequence[np.ndarray | None], vocab: int) -> list[np.ndarray]:
    """The q rows with each point mass (None) written out as a one-hot row."""
    return [q if q is not None else one_hot(vocab, x) for q, x in zip(qs, drafts, strict=True)]


def chain_verdict(
    tokens: list[int],
    kinds: list[str],
    alphas: list[float],
    drafts: Sequence[int],
    qs: Sequence[np.ndarray | None],
    q_rows: Sequence[np.ndarray],
    p_used: list[np.ndarray],
) -> Verdict:
    """A chain's verdict from its decisions and the rows read (`q_rows` written out in full)."""
    draft_q = [float(q_rows[i][x]) for i, x in enumerate(drafts)]
    draft_p = [float(p_used[i][drafts[i]]) for i in range(len(alphas))]
    return Verdict(tokens, kinds, alphas, list(drafts), list(qs), draft_q, draft_p, p_used)


def verify_tree(rows: RowSource, tree: Tree, run: RunMaths, vocab: int, point_mass: bool) -> Verdict:
    """Walk from the root: one accepted child per node, until a stop or past a leaf."""
    v = Verdict([], [], [], [], [], [], [], [], path=[0])
    greedy = run.greedy and not run.reference
    p_rows: list[np.ndarray | None] = []
    node = 0
    while True:
        kids = tree.children[node]
        if greedy:
            best = argmax_rows(rows.row(node))[0]
            v.choice.append(best)
            p = None
        else:
            p = run.probs(rows.row(node))[0]
            v.p_by_node[node] = p
        p_rows.append(p)
        if not kids:
            v.tokens.append(best if p is None else sample(p, run.rng))
            v.kinds.append("bonus")
            break
        cands = [tree.tokens[c] for c in kids]
        if greedy:
            hit = cands.index(best) if best in cands else None
            token = best
            alphas = [1.0 if i == hit else 0.0 for i in range(len(cands) if hit is None else hit + 1)]
            q_row: np.ndarray | None = None
        else:
            q = np.stack([one_hot(vocab, t) for t in cands]) if point_mass else tree.q[node]
            res = verify_candidates(p, q, cands, run.rng, replacement=point_mass)
            hit, token, alphas = res.accepted_index, res.token, res.acceptance_probs
            q_row = q[0 if hit is None else hit] if point_mass else q
        for c in kids[: len(alphas)]:
            v.status[c] = "rejected"
        shown = kids[0] if hit is None else kids[hit]
        v.drafts.append(tree.tokens[shown])
        v.q_rows.append(q_row)
        v.alphas.append(alphas[0] if hit is None else alphas[hit])
        v.draft_q.append(1.0 if q_row is None else float(q_row[tree.tokens[shown]]))
        v.draft_p.append((1.0 if hit is not None else 0.0) if p is None else float(p[tree.tokens[shown]]))
        v.tokens.append(token)
        if hit is None:
            v.kinds.append("corrected")
            break
        node = kids[hit]
        v.status[node] = "accepted"
        v.path.append(node)
        v.kinds.append("accepted")
    v.p_used = None if greedy else [p for p in p_rows if p is not None]
    return v


def tree_record(tree: Tree, verdict: Verdict, shape: Sequence[int], run: RunMaths) -> dict[str, Any]:
    """The tree as JSON-ready data for the event: nodes, statuses, the accepted path, rows."""
    status = ["root"] + [verdict.status.get(i, "unexamined") for i in range(1, tree.size)]

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
        "path": list(verdict.path),
        "q": [top(tree.q[i]) for i in range(tree.size)],
        "p": [top(verdict.p_by_node.get(i)) for i in range(tree.size)],
    }
