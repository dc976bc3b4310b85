"""A token-tree round of a live run, for its figure: per-node hover lines and the slot a node opens.

Events of ``generate(..., tree=...)`` carry the tree (``RoundEvent.tree``); the inspector
shows positions along the accepted path, so a node maps to the slot of its own position.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from specdec_core.engine.events import RoundEvent


def node_lines(event: RoundEvent, number: Callable[[float], str]) -> list[str]:
    """A hover line per node: q and p of its token at its parent, where the run kept them."""
    tree = event.tree or {}
    out = []
    for i, (tok, par) in enumerate(zip(tree.get("tokens", []), tree.get("parents", []), strict=True)):
        if i == 0:
            out.append("")
            continue
        parts = []
        for name in ("q", "p"):
            row = tree[name][par]
            if row is not None and tok in row["ids"]:
                parts.append(f"{name} = {number(row['probs'][row['ids'].index(tok)])}")
        out.append(" · ".join(parts))
    return out


def slot_of_node(event: RoundEvent, node: int) -> int | None:
    """The inspector slot of a clicked node: its position on the path, or the stop position for
    a child tried and rejected there; None for the root and nodes never examined."""
    tree = event.tree
    if tree is None or not 0 < node < len(tree["tokens"]):
        return None
    path = tree["path"]
    if node in path:
        return min(path.index(node) - 1, len(event.committed) - 1)
    if tree["status"][node] == "rejected" and tree["parents"][node] == path[-1]:
        return min(len(path) - 1, len(event.committed) - 1)
    return None


_STATUSES = ("root", "accepted", "rejected", "unexamined")


def tree_problem(tree: object, vocab_size: int | None = None) -> str | None:
    """Why a tree record (e.g. from a JSON file) cannot be drawn, or None when it can."""
    if not isinstance(tree, dict):
        return "its tree is not a table"
    try:
        tokens, parents, status, path = tree["tokens"], tree["parents"], tree["status"], tree["path"]
        rows = [tree["q"], tree["p"]]
    except KeyError as exc:
        return f"its tree lacks {exc.args[0]!r}"
    n = len(tokens) if isinstance(tokens, list) else -1
    if n < 1 or not all(isinstance(x, list) and len(x) == n for x in (parents, status, *rows)):
        return "its tree's lists do not have one entry per node"
    top = vocab_size if vocab_size is not None else float("inf")
    if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < top for t in tokens):
        return "its tree has a token outside the vocabulary"
    if parents[0] != -1 or not all(isinstance(p, int) and 0 <= p < i for i, p in enumerate(parents[1:], 1)):
        return "its tree's parents do not form a tree"
    if any(s not in _STATUSES for s in status):
        return "its tree has an unknown node status"
    if not isinstance(path, list) or not path or path[0] != 0:
        return "its tree's path does not start at the root"
    if not all(isinstance(b, int) and 0 < b < n and parents[b] == a for a, b in itertools.pairwise(path)):
        return "its tree's path is not a path of the tree"
    for row in (r for rs in rows for r in rs if r is not None):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("ids"), list)
            or not isinstance(row.get("probs"), list)
        ):
            return "its tree has a malformed probability row"
        if len(row["ids"]) != len(row["probs"]) or not all(
            isinstance(p, int | float) and 0 <= p <= 1 for p in row["probs"]
        ):
            return "its tree has a malformed probability row"
    return None
