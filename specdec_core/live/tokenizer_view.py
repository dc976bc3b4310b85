"""The tokenizers lesson's data: how one text splits in two families, which tokens have a twin,
what reading one family's ids in the other's vocabulary gives, and one next-token position of
a real pair measured through the intersection rule (``verify.project`` / ``verify.coverage``).

Tokenizer-only except :func:`next_token`, which runs both models once on the text (in the run
service's worker: :class:`NextTokenJob`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdec_core import verify
from specdec_core.live import job_models
from specdec_core.live.access import Access
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.run_service import Context
from specdec_core.live.shelf import ModelShelf
from specdec_core.models.vocab_map import token_texts, vocabulary_map


@dataclass(frozen=True)
class Piece:
    """One token of a split: its id, its text, and whether the other family has a token with that text."""

    id: int
    text: str
    twin: bool


def split(tokenizer: Any, other: Any, text: str) -> list[Piece]:
    """`text` in `tokenizer`'s tokens (no special tokens), each marked by whether `other` has its twin."""
    ids = [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]
    mine = token_texts(tokenizer)
    theirs = {t for t in token_texts(other) if t is not None}
    out = []
    for i in ids:
        own = mine[i] if i < len(mine) else None
        shown = own if own is not None else tokenizer.decode([i])
        out.append(Piece(i, shown, own is not None and own in theirs))
    return out


@dataclass(frozen=True)
class Overlap:
    """How many of the draft's tokens have a target twin, of how many, beside the target's size."""

    shared: int
    draft_size: int
    target_size: int

    @property
    def share(self) -> float:
        return self.shared / self.draft_size if self.draft_size else 0.0


def overlap(target_tokenizer: Any, draft_tokenizer: Any) -> Overlap:
    """The draft tokens with a target twin by text (:func:`~specdec_core.models.vocab_map.vocabulary_map`)."""
    n_d, n_t = len(draft_tokenizer), len(target_tokenizer)
    to_target = vocabulary_map(target_tokenizer, draft_tokenizer, n_d, n_t)
    return Overlap(int((to_target >= 0).sum()), n_d, n_t)


def misread(reader: Any, writer: Any, text: str) -> str:
    """What `reader` makes of `writer`'s ids for `text`: naive speculation across tokenizers."""
    ids = [int(i) for i in writer.encode(text, add_special_tokens=False)]
    return reader.decode([i for i in ids if i < len(reader)], skip_special_tokens=False)


@dataclass(frozen=True)
class NextToken:
    """One position measured on a real pair: the draft's coverage, α against its projected law,
    the target's mass on tokens the draft can propose (α's bound), and the top tokens of each law."""

    coverage: float
    alpha: float
    image_mass: float
    top: list[tuple[str, float, float]]  # (token text, p, projected q)


def next_token(target: Any, cross: Any, text: str, top_n: int = 8) -> NextToken:
    """Both models' laws for the token after `text`: the target's p, and the cross-vocabulary
    draft `cross`'s own q projected into the target's vocabulary."""
    t_ids = [int(i) for i in target.encode(text)]
    p = _softmax(target.session(t_ids[:-1]).extend(t_ids[-1:])[-1])
    d_ids = [*cross.start_ids, *cross.to_draft(t_ids)] if cross.to_draft is not None else t_ids
    inner = cross.draft
    q = _softmax(inner.session(d_ids[:-1]).extend(d_ids[-1:])[-1])
    to_target = np.asarray(cross.to_target)
    q = q[: to_target.size]
    q = q / q.sum()
    projected = verify.project(q, to_target, p.size)
    image = np.unique(to_target[to_target >= 0])
    order = np.lexsort((np.arange(p.size), -np.maximum(p, projected)))[:top_n]
    texts = token_texts(target.tokenizer)
    top = [
        (texts[int(j)] or target.tokenizer.decode([int(j)]), float(p[j]), float(projected[j])) for j in order
    ]
    return NextToken(
        coverage=verify.coverage(q, to_target),
        alpha=float(np.minimum(p, projected).sum()),
        image_mass=float(p[image].sum()),
        top=top,
    )


class NextTokenJob:
    """One position measured (:func:`next_token`) as a job of the run service: it loads the
    `target` and the cross-vocabulary `draft` from `shelf` under the server's `rules`, then
    measures the token after `text`; its result is ``(text, NextToken)``. Identical requests
    share one run."""

    def __init__(
        self, text: str, target: TargetSpec, draft: DraftSpec, shelf: ModelShelf, rules: Access
    ) -> None:
        self.text, self.target, self.draft, self.shelf, self.rules = text, target, draft, shelf, rules
        self.key = ("next-token", target, draft, text)

    def run(self, ctx: Context) -> tuple[str, NextToken]:
        model = job_models.target(self.shelf, self.rules, self.target, ctx)
        cross = job_models.draft(self.shelf, self.rules, self.target, model, self.draft, ctx)
        return self.text, next_token(model, cross, self.text)


def _softmax(row: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(row, dtype=np.float64)
    x = np.exp(x - x.max())
    return x / x.sum()
