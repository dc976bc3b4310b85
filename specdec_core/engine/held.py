"""Sessions kept across many runs on one prompt: the prompt's cache is computed once.

A run given ``RunOptions(sessions=HeldSessions(target, draft, prompt))`` opens no session of its
own. The first run prefills the prompt (all but its last token, as a fresh run does) in both
models; every later run starts from the same state, because both sessions are truncated back to
``len(prompt) − 1`` tokens when a run starts and when it ends (finished, stopped or closed). A trained head
stays bound to the same target session, whose features for the prompt stay those of the
prompt. Many short runs on one prompt (the lab "Exact on a real model" draws hundreds) then
cost their own forwards only, not a prefill each.

:meth:`HeldSessions.scores` runs the target alone on the prompt plus a few tokens (the exact
laws of the next tokens) from the same cache, and leaves it as it found it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from specdec_core.engine.drafters import LookupDrafter, ModelDrafter, make_drafter
from specdec_core.engine.processing import float64_rows
from specdec_core.engine.rows import logit_rows
from specdec_core.models.base import Draft, LanguageModel, Proposer, Session
from specdec_core.models.pairing import paired_draft


class HeldSessions:
    """A target's session and its draft's, kept for runs on one prompt (see the module).

    `draft` may be None for :meth:`scores` alone. Not for concurrent use: one run at a time
    (the app's run service runs one job at a time)."""

    def __init__(self, target: LanguageModel, draft: Draft | None, prompt_ids: Sequence[int]) -> None:
        prompt = [int(t) for t in prompt_ids]
        if not prompt:
            raise ValueError("the prompt needs at least one token (e.g. BOS) for the model to continue.")
        self.target = target
        self.source = draft  # the draft as given; ``draft`` is what the engine runs
        self.draft = paired_draft(target, draft) if draft is not None else None
        self.prompt = prompt
        self._target: Session | None = None
        self._draft: Session | None = None
        #: runs started on these sessions, and how many of them had to prefill (at most one)
        self.runs = 0
        self.prefills = 0

    @property
    def base(self) -> int:
        """Tokens the sessions keep between runs: the prompt without its last token."""
        return len(self.prompt) - 1

    def matches(self, target: LanguageModel, draft: Draft) -> bool:
        """Whether these are sessions of `target` and `draft` (the draft as given or as paired)."""
        return target is self.target and draft is not None and (draft is self.source or draft is self.draft)

    def _open_target(self) -> Session:
        if self._target is None:
            self._target = self.target.session(self.prompt[:-1])
            self.prefills += 1
        else:
            self._target.truncate(self.base)
        return self._target

    def open(self) -> tuple[Session, ModelDrafter | LookupDrafter]:
        """The target's session and a drafter on the draft's, both at the prompt's cache (the
        first call prefills)."""
        if self.draft is None:
            raise ValueError("these sessions were made without a draft: they only serve scores().")
        t_sess = self._open_target()
        self.runs += 1
        if isinstance(self.draft, Proposer):
            return t_sess, make_drafter(self.draft, self.prompt, t_sess)
        if self._draft is None:
            drafter = make_drafter(self.draft, self.prompt, t_sess)
            assert isinstance(drafter, ModelDrafter)
            self._draft = drafter.session
            return t_sess, drafter
        self._draft.truncate(self.base)
        return t_sess, ModelDrafter(self.draft, self.prompt, t_sess, session=self._draft)

    def reset(self) -> None:
        """Truncate both sessions back to the prompt's cache (a run's end calls this)."""
        if self._target is not None:
            self._target.truncate(self.base)
        if self._draft is not None:
            self._draft.truncate(self.base)

    def scores(self, continuation: Sequence[int]) -> np.ndarray:
        """The target's float64 logit rows after the prompt and each token of `continuation`
        (row 0 scores the first new token, row i the token after ``continuation[i − 1]``), in
        one forward from the prompt's cache, which is then restored."""
        ids = [self.prompt[-1], *(int(t) for t in continuation)]
        bad = [t for t in ids if not 0 <= t < self.target.vocab_size]
        if bad:
            raise ValueError(f"token {bad[0]} is outside the vocabulary 0 … {self.target.vocab_size - 1}.")
        t_sess = self._open_target()
        try:
            return float64_rows(logit_rows(t_sess, ids))
        finally:
            t_sess.truncate(self.base)

    def __repr__(self) -> str:
        who = getattr(self.draft, "name", type(self.draft).__name__)
        return f"HeldSessions({getattr(self.target, 'name', '?')} + {who}, {len(self.prompt)} prompt tokens)"


def check_held(held: Any, target: LanguageModel, draft: Draft, prompt: list[int]) -> HeldSessions:
    """`held` as the sessions of this run; ValueError when they belong to other models or another prompt."""
    if not isinstance(held, HeldSessions):
        raise ValueError(f"sessions must be HeldSessions, got {type(held).__name__}.")
    if not held.matches(target, draft):
        raise ValueError("these held sessions belong to another target or draft.")
    if held.prompt != prompt:
        raise ValueError("these held sessions hold another prompt.")
    return held
