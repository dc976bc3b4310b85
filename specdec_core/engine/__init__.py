"""Speculative decoding on any models of the protocol, reported round by round.

``generate`` and ``autoregressive`` yield ``RoundEvent``s (JSON via ``to_dict`` / ``from_dict``);
``summarize`` adds them up; one round, chain or tree, is ``loop.speculative_round``. Example::

    from specdec_core.engine import generate, summarize
    from specdec_core.models import load_bundled, NGramDraft
    from specdec_core.sampling import SamplingConfig

    target = load_bundled()
    ids = target.encode("Name three rivers.", chat=True)
    events = list(generate(target, NGramDraft.for_model(target), ids,
                           SamplingConfig(temperature=0), 4, 64, 0, adaptive_gamma=True))
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
from specdec_core.engine.processing import verify_greedy

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
    "summarize",
    "verify_greedy",
]
