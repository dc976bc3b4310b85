"""The lab "Exact on a real model" as a job of the run service: the page builds a
:class:`LawRequest` from its controls; the job loads the models, encodes the prompt, primes the
first token's law and draws each rule's samples in turn, publishing a :class:`LawProgress` and
the ``(settings, LawSnapshot)`` so far as they come. A cancel ends it after the sample going,
and the counts so far stay (the snapshot marked unfinished)."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_core.live import job_models
from specdec_core.live.access import Access
from specdec_core.live.law import LawLab, LawSettings
from specdec_core.live.law_view import LawSnapshot, snapshot
from specdec_core.live.run_service import Context
from specdec_core.live.runs import Pacer, encode_prompt
from specdec_core.live.shelf import ModelShelf

#: Publish the tables at most this often (the page redraws charts and tests from each).
PUBLISH_EVERY = 1.0


@dataclass(frozen=True)
class LawProgress:
    """Where the lab is: samples `done` of `total`, the count of each rule, the seconds left
    (None until it can be told)."""

    done: int = 0
    total: int = 0
    counts: tuple[tuple[str, int], ...] = ()
    eta_s: float | None = None


@dataclass(frozen=True)
class LawRequest:
    """The lab as the controls describe it (already checked against the server's bounds)."""

    settings: LawSettings
    prompt: str


class LawJob:
    """One lab run for the run service (never shared: each learner draws their own samples)."""

    key = None

    def __init__(self, request: LawRequest, shelf: ModelShelf, rules: Access) -> None:
        self.request, self.shelf, self.rules = request, shelf, rules

    def run(self, ctx: Context) -> tuple[LawSettings, LawSnapshot] | None:
        s = self.request.settings
        target = job_models.target(self.shelf, self.rules, s.target, ctx)
        draft = job_models.draft(self.shelf, self.rules, s.target, target, s.draft, ctx)
        ids = encode_prompt(target, self.request.prompt, s.chat, s.max_new_tokens)
        lab = LawLab(target, draft, ids, s)
        lab.prime()
        pacer = Pacer(PUBLISH_EVERY)
        for rule in lab.order():
            if ctx.cancelled:
                break
            lab.draw(rule)
            if pacer.due(lab.done == lab.total):
                counts = tuple((r, t.n) for r, t in lab.tallies.items())
                ctx.publish(
                    LawProgress(lab.done, lab.total, counts, lab.eta_s()),
                    (s, snapshot(lab, target.token_text)),
                )
        if lab.done == 0:
            return None
        return (s, snapshot(lab, target.token_text, finished=lab.done == lab.total))
