"""Logit rows of a forward pass, and the run's maths on them (processing, sampling, compacting).

Rows are float32 torch tensors from an HF session's fast path and float64 numpy arrays from
any other model; nothing here imports torch, so a run on Markov chains never loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from specdec_core.engine.events import TopTokens
from specdec_core.engine.processing import argmax_rows, float64_rows, process_rows
from specdec_core.models.base import Session
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.verify import sample

if TYPE_CHECKING:
    import torch

    #: Logit rows: float32 torch tensors from an HF session, float64 numpy from other models.
    Rows = torch.Tensor | np.ndarray


class RowSource(Protocol):
    """The rows of one verification forward pass (``hf.LogitRows`` or :class:`EagerRows`)."""

    seconds: float

    def row(self, i: int) -> Rows: ...

    def all(self) -> Rows: ...


class RunMaths:
    """Per-run settings and the rng; turns logit rows into decisions (fast or reference)."""

    def __init__(self, cfg: SamplingConfig, seed: int, top_n: int, reference: bool) -> None:
        self.cfg = cfg
        self.greedy = cfg.is_greedy_switch
        self.rng = np.random.default_rng(seed)
        self.top_n = top_n
        self.reference = reference

    @contextmanager
    def noting_draws(self) -> Iterator[list[float]]:
        """While inside, every plain ``rng.random()`` is noted in the yielded list, in order
        (the accept tests' u come first in a chain's verification); the draws are unchanged."""
        log = DrawLog(self.rng)
        self.rng = log  # type: ignore[assignment]  # a Generator for every caller
        try:
            yield log.draws
        finally:
            self.rng = log.rng

    def probs(self, rows: Rows) -> np.ndarray:
        """Exact processed float64 distributions of each row."""
        if self.reference:
            z = float64_rows(rows)
            return np.stack([apply(r, self.cfg).probs for r in z])
        return process_rows(rows, self.cfg)

    def row_probs(self, rows: RowSource) -> Callable[[int], np.ndarray]:
        """``i → processed float64 row i`` of lazy target rows."""
        return lambda i: self.probs(rows.row(i))[0]

    def draw(self, row: Rows) -> tuple[int, np.ndarray | None]:
        """Sample one token from the processed law of `row` (1, V); greedy needs no row."""
        if self.greedy and not self.reference:
            self.rng.random()  # the draw `sample` makes from a one-hot row
            return argmax_rows(row)[0], None
        q = self.probs(row)[0]
        return sample(q, self.rng), q

    def compact(self, probs: np.ndarray | None, token: int | None = None) -> TopTokens | None:
        """The top-N summary of a row kept in events (one-hot at `token` for a greedy row)."""
        if self.top_n <= 0:
            return None
        if probs is None:
            return TopTokens.one_hot(token if token is not None else 0)
        return TopTokens.from_probs(probs, self.top_n)


class DrawLog:
    """A random generator that notes each uniform ``random()`` hands out without arguments."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.draws: list[float] = []

    def random(self, *args: Any, **kwargs: Any) -> Any:
        value = self.rng.random(*args, **kwargs)
        if not args and not kwargs:
            self.draws.append(float(value))
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rng, name)


def logit_rows(session: Session, ids: list[int], last_only: bool = False) -> Rows:
    """Logit rows: an HF session's fast float32 torch path, else the protocol's ``extend``."""
    fast = getattr(session, "logits", None)  # a ``FastSession`` (a cheaper test than isinstance)
    if fast is not None:
        return fast(ids, last_only=last_only)
    out = np.asarray(session.extend(ids), dtype=np.float64)
    return out[-1:] if last_only else out


class EagerRows:
    """All logit rows of a forward pass, behind the interface of ``hf.LogitRows``."""

    seconds = 0.0

    def __init__(self, rows: Rows) -> None:
        self._rows = rows

    def row(self, i: int) -> Rows:
        return self._rows[i : i + 1]

    def all(self) -> Rows:
        return self._rows


def target_rows(session: Session, ids: list[int]) -> RowSource:
    """The verification forward: an HF session's rows computed on demand, else all rows now."""
    lazy = getattr(session, "lazy_logits", None)  # a ``FastSession``
    if lazy is not None:
        return lazy(ids)
    return EagerRows(logit_rows(session, ids))


def tree_rows(session: Session, ids: list[int], parents: list[int]) -> RowSource:
    """One tree forward: an HF session's rows on demand, else every row at once."""
    lazy = getattr(session, "lazy_tree_logits", None)
    if lazy is not None:
        return lazy(ids, parents)
    extend = getattr(session, "extend_tree", None)
    if extend is None:
        raise ValueError(f"{type(session).__name__} cannot score a tree in one forward (no extend_tree).")
    return EagerRows(np.asarray(extend(ids, parents), dtype=np.float64))
