"""Speculative decoding on any models of the protocol, reported round by round.

``generate(target, draft, prompt_ids, sampling, gamma, max_new_tokens, seed,
adaptive_gamma=False)`` and ``autoregressive(target, prompt_ids, sampling, max_new_tokens,
seed)`` yield ``RoundEvent``s (JSON via ``to_dict`` / ``from_dict``); ``summarize`` adds
them up. Example::

    from specdec_core.engine import generate, summarize
    from specdec_core.models import load_bundled, NGramDraft
    from specdec_core.sampling import SamplingConfig

    target = load_bundled()
    ids = target.encode("Name three rivers.", chat=True)
    events = list(generate(target, NGramDraft.for_model(target), ids,
                           SamplingConfig(temperature=0), gamma=4, max_new_tokens=64,
                           seed=0, adaptive_gamma=True))

Everything else a run may set (a broken rule, held sessions, EOS, top-N, γ bounds, the draft's
cost, the reference maths) is one ``RunOptions`` (``options=``); ``tree=(b_1, …, b_D)`` drafts
token trees. One round, chain or tree, is ``loop.speculative_round``.
    print(target.decode([t for e in events for t in e.committed]))
"""

from specdec_core.engine.events import KINDS, RoundEvent, RunSummary, TopTokens, summarize
from specdec_core.engine.gamma import (
    FixedGamma,
    GammaController,
    HeuristicGamma,
    TheoryGamma,
    draft_cost_ratio,
    estimate_cost_ratio,
    make_controller,
    measured_cost_ratio,
)
from specdec_core.engine.loop import RunOptions, autoregressive, generate
from specdec_core.engine.processing import process_rows, verify_greedy

__all__ = [
    "KINDS",
    "FixedGamma",
    "GammaController",
    "HeuristicGamma",
    "RoundEvent",
    "RunOptions",
    "RunSummary",
    "TheoryGamma",
    "TopTokens",
    "autoregressive",
    "draft_cost_ratio",
    "estimate_cost_ratio",
    "generate",
    "make_controller",
    "measured_cost_ratio",
    "process_rows",
    "summarize",
    "verify_greedy",
]
