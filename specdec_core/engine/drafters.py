"""The two kinds of drafter a round can use: a draft model with its session, or a proposer."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from specdec_core.engine.processing import token_probability, top_probability
from specdec_core.engine.rows import RunMaths, logit_rows
from specdec_core.models.base import Draft, LanguageModel, Proposer

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


def make_drafter(
    draft: Draft, prompt: list[int], target_session: object = None
) -> ModelDrafter | LookupDrafter:
    """A proposer (``propose(context, k)``) drafts by lookup; anything else is a draft model
    (bound to `target_session` when its session asks for one)."""
    if isinstance(draft, Proposer):
        return LookupDrafter(draft, prompt)
    return ModelDrafter(draft, prompt, target_session)
