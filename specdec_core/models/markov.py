"""MarkovChainLM: an exact tiny language model whose next-token law is a row of a matrix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from specdec_core.checks import SUM_TOL, token_index
from specdec_core.token_tree import TreeSegment


class MarkovChainLM:
    """Next-token law = ``transitions[last token]``; logits are its logs (-inf where 0).

    ``labels`` name the tokens for display; ``eos_token_id`` (optional) ends generation.
    """

    def __init__(
        self,
        transitions: Sequence[Sequence[float]] | np.ndarray,
        labels: Sequence[str] | None = None,
        eos_token_id: int | None = None,
    ) -> None:
        t = np.array(transitions, dtype=np.float64)
        if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] == 0:
            raise ValueError(f"transitions must be a square (V, V) matrix, got shape {t.shape}.")
        if not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError("transitions must hold finite probabilities ≥ 0.")
        sums = t.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1) > SUM_TOL)
        if bad.size:
            raise ValueError(f"row {int(bad[0])} of transitions sums to {sums[bad[0]]:.12g}, not 1.")
        self.transitions = t
        self.labels = [str(i) for i in range(t.shape[0])] if labels is None else [str(s) for s in labels]
        if len(self.labels) != t.shape[0]:
            raise ValueError(f"labels must name all {t.shape[0]} tokens, got {len(self.labels)}.")
        self._eos = None if eos_token_id is None else token_index(eos_token_id, t.shape[0], "eos_token_id")
        with np.errstate(divide="ignore"):
            self._logits = np.log(t)
        self.name = f"Markov chain ({t.shape[0]} tokens)"

    @classmethod
    def random(
        cls,
        vocab_size: int,
        seed: int,
        concentration: float = 0.5,
        labels: Sequence[str] | None = None,
    ) -> MarkovChainLM:
        """A chain with Dirichlet(concentration) rows: small concentration = peaked rows."""
        rng = np.random.default_rng(seed)
        rows = rng.dirichlet(np.full(vocab_size, concentration), size=vocab_size)
        return cls(rows, labels=labels)

    def blend(self, other: MarkovChainLM, weight: float) -> MarkovChainLM:
        """(1 - weight)·self + weight·other, row by row: a draft that is partly right."""
        if other.vocab_size != self.vocab_size:
            raise ValueError("both chains must share one vocabulary to be blended.")
        if not 0 <= weight <= 1:
            raise ValueError(f"weight must lie in [0, 1], got {weight}.")
        mixed = (1 - weight) * self.transitions + weight * other.transitions
        return MarkovChainLM(mixed / mixed.sum(axis=1, keepdims=True), self.labels, self._eos)

    @property
    def vocab_size(self) -> int:
        return self.transitions.shape[0]

    @property
    def eos_token_id(self) -> int | None:
        return self._eos

    def token_text(self, token_id: int) -> str:
        """The label of a token (what a UI shows for it)."""
        return self.labels[token_index(token_id, self.vocab_size)]

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        return [self.token_text(i) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Labels joined by spaces."""
        return " ".join(self.token_texts(ids))

    def encode(self, text: str, chat: bool = False) -> list[int]:
        """Space-separated labels → ids (`chat` is ignored: a chain has no chat template)."""
        index = {label: i for i, label in enumerate(self.labels)}
        try:
            return [index[word] for word in text.split()]
        except KeyError as exc:
            raise ValueError(f"{exc.args[0]!r} is not one of this chain's token labels.") from None

    def next_logits(self, token: int) -> np.ndarray:
        """Logits of the token after `token` (a copy)."""
        return self._logits[token_index(token, self.vocab_size)].copy()

    def session(self, prompt_ids: Sequence[int]) -> MarkovSession:
        s = MarkovSession(self)
        if len(prompt_ids):
            s.extend(prompt_ids)
        return s


class MarkovSession:
    """A context for MarkovChainLM; the 'cache' is just the token list."""

    def __init__(self, model: MarkovChainLM) -> None:
        self.model = model
        self.tokens: list[int] = []
        self._tree: TreeSegment | None = None

    @property
    def length(self) -> int:
        return len(self.tokens)

    def extend(self, token_ids: Sequence[int]) -> np.ndarray:
        ids = [token_index(t, self.model.vocab_size) for t in token_ids]
        if not ids:
            raise ValueError("extend needs at least one token.")
        self.tokens.extend(ids)
        return self.model._logits[ids].copy()

    def truncate(self, length: int) -> None:
        if not 0 <= length <= len(self.tokens):
            raise ValueError(f"cannot truncate a context of {len(self.tokens)} tokens to {length}.")
        del self.tokens[length:]
        self._tree = None

    def extend_tree(self, token_ids: Sequence[int], parents: Sequence[int]) -> np.ndarray:
        """Feed tree nodes (``token_tree.TreeSegment`` parents; -1 starts a tree here).

        A row depends only on its own token, so no mask is needed: the rows are ``extend``'s.
        """
        if len(parents) != len(token_ids):
            raise ValueError("extend_tree needs one parent per token.")
        if len(parents) and parents[0] == -1:
            self._tree = TreeSegment(len(self.tokens))
        if self._tree is None:
            raise ValueError("a tree starts with its root (parent -1).")
        self._tree.add(parents)
        return self.extend(token_ids)

    def compact(self, keep: Sequence[int]) -> None:
        """Keep the prefix and the tree path `keep` (tree indices, root first); drop the rest."""
        tree = self._tree
        if tree is None:
            raise ValueError("no tree to compact.")
        self.tokens = [self.tokens[i] for i in tree.kept(keep)]
        self._tree = None


def rows_from_weights(next_weights: Mapping[str, Mapping[str, float]], words: Sequence[str]) -> np.ndarray:
    """Transition rows over `words` from hand-written next-word weights, each row normalised.

    ``next_weights[w][v]`` is the weight of v after w; words without an entry get no row
    mass (every word must have one for the rows to be a chain).
    """
    index = {w: i for i, w in enumerate(words)}
    rows = np.zeros((len(words), len(words)))
    for word, nexts in next_weights.items():
        for nxt, weight in nexts.items():
            rows[index[word], index[nxt]] = weight
    return rows / rows.sum(axis=1, keepdims=True)
