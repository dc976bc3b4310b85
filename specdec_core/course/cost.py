"""The cost lesson's data and verdicts: the essay's table, the drafts' greedy match rates
(assets/presets/cost.json), the numbers of one setting and whether it pays off.

The essay's expected-tokens table is quoted as printed (two of its rows are wrong). A draft's
greedy match rate μ does not depend on the machine; its cost c does, so the page hands in this
machine's costs (``live.machine_profile``) and :func:`draft_presets` pairs them; the cost of
verifying several tokens at once, and the linear model 1 + β·γ through it, come from the same
profile. The file holds nothing that depends on the machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from specdec_core.course.cards import HeadCard, head_card, medusa_card
from specdec_core.theory import VerifyCost, best_gamma, expected_tokens, speedup

COST_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets" / "cost.json"


@dataclass(frozen=True)
class CostData:
    """What the lessons show besides their own controls.

    ``seed_claims``: the essay's (α, γ, claimed E[tokens]) rows, as printed;
    ``greedy_match``: preset name → (μ, the draft's name in a machine profile), in the file's order.
    """

    seed_claims: tuple[tuple[float, int, float], ...]
    greedy_match: MappingProxyType[str, tuple[float, str]]


@cache
def cost_data() -> CostData:
    """The lessons' data, read once per process."""
    with COST_FILE.open(encoding="utf-8") as f:
        data = json.load(f)
    match = {name: (float(d["mu"]), str(d["draft"])) for name, d in data["greedy_match"]["drafts"].items()}
    return CostData(
        seed_claims=tuple(tuple(row) for row in data["seed_claims"]["rows"]),
        greedy_match=MappingProxyType(match),
    )


def _heads() -> dict[str, tuple[float, float]]:
    """The shipped heads' (α, c) from their cards: the bench's greedy acceptance on the chat prompt
    where recorded, else the held-out evaluation's (the draft head's at γ = 4; the Medusa chain's
    drafts accepted per round of all heads ÷ the number of heads)."""
    out = {}
    for name, card in (("head", head_card()), ("medusa", medusa_card())):
        if card is None or card.cost_ratio is None:
            continue
        held_out = card.greedy_gamma4 if isinstance(card, HeadCard) else card.accepted_per_round / card.heads
        alpha = card.bench_alpha if card.bench_alpha is not None else held_out
        out[name] = (round(float(alpha), 2), round(float(card.cost_ratio), 2))
    return out


def draft_presets(c_of: Callable[[str], float]) -> dict[str, tuple[float, float]]:
    """The cost page's measured drafts, name → (α, c): each μ with the c `c_of` gives for its
    draft (this machine's profile, else the memory-bound reference), then the shipped heads from
    their cards; c to two places, as the page's slider takes it."""
    out = {name: (mu, round(float(c_of(draft)), 2)) for name, (mu, draft) in cost_data().greedy_match.items()}
    return out | _heads()


#: A claim matches when it equals the computed value after rounding to one decimal.
CLAIM_TOLERANCE = 0.05

#: ``"faster"``: this γ beats the target alone; ``"slower"``: it does not but a better γ
#: would; ``"never"``: no γ up to the limit does.
Verdict = Literal["faster", "slower", "never"]


def speedup_verdict(value: float, best_value: float) -> Verdict:
    """Whether a setting pays off: its speedup `value` and the best γ's `best_value`, against 1×."""
    if best_value < 1:
        return "never"
    return "slower" if value < 1 else "faster"


@dataclass(frozen=True)
class CostSummary:
    """The numbers of one setting: E[tokens], round cost, speedup, the best γ, and the verdict.

    ``best_at_limit``: the best γ is the largest one searched, so a longer draft may do better.
    """

    tokens: float
    round_cost: float
    speedup: float
    best_gamma: int
    best_speedup: float
    verdict: Verdict
    best_at_limit: bool


def cost_summary(
    alpha: float, gamma: int, cost_ratio: float, verify_cost: VerifyCost, max_gamma: int
) -> CostSummary:
    """E[tokens per round], its cost γ·c + verify(γ) in target steps, the speedup, the best γ
    up to `max_gamma`, and whether this setting pays off."""
    best = best_gamma(alpha, cost_ratio, verify_cost, max_gamma)
    tokens = float(expected_tokens(alpha, gamma))
    value = float(speedup(alpha, gamma, cost_ratio, verify_cost))
    best_value = float(speedup(alpha, best, cost_ratio, verify_cost))
    return CostSummary(
        tokens=tokens,
        round_cost=tokens / value,
        speedup=value,
        best_gamma=best,
        best_speedup=best_value,
        verdict=speedup_verdict(value, best_value),
        best_at_limit=best == max_gamma,
    )


@dataclass(frozen=True)
class ClaimCheck:
    """One (α, γ, expected tokens) claim quoted from a text, beside the recomputed value.

    ``speedup`` is the recomputed speedup for the draft and verification costs given to
    :func:`check_claims`; the text's "ideal speedup ≈ expected tokens" assumes c = 0 and a
    verification that costs one step.
    """

    alpha: float
    gamma: int
    claimed: float
    computed: float
    speedup: float

    @property
    def matches(self) -> bool:
        return abs(self.computed - self.claimed) <= CLAIM_TOLERANCE + 1e-12


def check_claims(
    claims: Sequence[tuple[float, int, float]], cost_ratio: float = 0.0, verify_cost: VerifyCost = 1.0
) -> list[ClaimCheck]:
    """Recompute each claimed E[tokens] = (1 - α^(γ+1)) / (1 - α), and its speedup."""
    return [
        ClaimCheck(
            float(a),
            int(g),
            float(claimed),
            float(expected_tokens(a, int(g))),
            float(speedup(a, int(g), cost_ratio, verify_cost)),
        )
        for a, g, claimed in claims
    ]
