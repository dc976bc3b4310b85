"""How many tokens to draft next round (γ): fixed, or adapted to how the drafts fare.

* ``HeuristicGamma`` is transformers' schedule: +2 after a round whose drafts were all
  accepted, −1 after a rejection, kept within bounds. With a good draft it climbs to its
  upper bound and stays there, drafting far more than pays off.
* ``TheoryGamma`` (the default adaptive controller) picks the γ that
  ``theory.speedup`` predicts to be best for the acceptance rate seen in recent rounds and
  the pair's cost model; γ = 0 (a plain target step) is allowed, so a draft that keeps
  missing is switched off, and it is tried again as old evidence fades.

Both are deterministic (no timings), so a seed still fixes every event. A controller only
changes speed, never what is generated: the output law is the target's for every γ.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Protocol, runtime_checkable

from specdec_core import theory
from specdec_core.models.base import Draft, LanguageModel

#: Verification of γ+1 tokens in target steps, timed as ``bench.kernels`` times its
#: verifications (medians of interleaved forwards over the one-token steps around them).
#: Two rows still take the thin kernel of a decode step, so γ = 1 costs hardly more than a
#: step; from three rows on each extra token adds real arithmetic. Between the listed γ the
#: cost is interpolated, past the last one extended at the last segment's slope.
VERIFY_STEPS: dict[int, float] = {
    1: 1.04, 2: 1.20, 3: 1.25, 4: 1.32, 5: 1.38, 6: 1.45, 8: 1.66, 10: 1.72, 12: 1.83, 16: 2.08,
}  # fmt: skip


@runtime_checkable
class GammaController(Protocol):
    """Chooses γ before each round and learns from its outcome."""

    def next_gamma(self) -> int: ...

    def update(self, drafted: int, accepted: int, rejected: bool) -> None: ...

    def state(self) -> dict[str, Any]: ...


class FixedGamma:
    """Always the same γ."""

    def __init__(self, gamma: int) -> None:
        self.gamma = _check(gamma, "gamma", 0)

    def next_gamma(self) -> int:
        return self.gamma

    def update(self, drafted: int, accepted: int, rejected: bool) -> None:
        pass

    def state(self) -> dict[str, Any]:
        return {"controller": "fixed", "gamma": self.gamma}


class HeuristicGamma:
    """transformers' rule: γ += 2 after a fully accepted round, γ −= 1 after a rejection.

    A round where the draft proposed nothing (an n-gram without a match) leaves γ alone.
    """

    def __init__(self, start: int, min_gamma: int = 1, max_gamma: int = 16) -> None:
        self.min_gamma = _check(min_gamma, "min_gamma", 1)
        self.max_gamma = _check(max_gamma, "max_gamma", self.min_gamma)
        self.gamma = min(max(_check(start, "gamma", 0), self.min_gamma), self.max_gamma)

    def next_gamma(self) -> int:
        return self.gamma

    def update(self, drafted: int, accepted: int, rejected: bool) -> None:
        if drafted == 0:
            return
        if rejected:
            self.gamma = max(self.min_gamma, self.gamma - 1)
        elif accepted >= drafted:
            self.gamma = min(self.max_gamma, self.gamma + 2)

    def state(self) -> dict[str, Any]:
        return {"controller": "heuristic", "gamma": self.gamma}


class TheoryGamma:
    """γ that maximises ``theory.speedup(α̂, γ, cost_ratio, verify_cost)``, with α̂ learnt online.

    α̂ = (a + accepted) / (a + b + accepted + rejections) over recent drafts: every
    :attr:`MEMORY_TOKENS` drafts the target examines multiply the old counts by :attr:`MEMORY`, so α̂
    follows the text (an n-gram draft is right for whole copied passages, then wrong for a
    while) and drifts back to the optimistic prior mean a / (a + b) = 0.9 while it chooses
    γ = 0 (then every idle round counts, with `idle_memory`), which makes it probe a
    switched-off draft again later. The window is counted in drafts rather than rounds so
    that a short γ does not shorten it: with a per-round memory one early rejection of a
    bf16 copy (α ≈ 0.97) left α̂ resting on a handful of drafts, γ fell to 1 for several
    rounds and recovered slowly, since short rounds bring little evidence.
    A round where the draft proposed nothing although γ > 0 (an n-gram without a match)
    changes nothing: without that rule, long stretches without a match would reset α̂ to
    the prior, and the next chance match would be drafted 16 tokens long.
    `cost_ratio` is one draft step in target steps (0 for an n-gram lookup); `verify_cost`
    maps γ to the verification forward's cost in target steps.

    A model draft (cost_ratio > 0) is switched off (γ = 0) only when its best γ is
    predicted to lose more than `off_margin` against plain target steps: switching back on
    is not free (it must first read every token committed meanwhile), and an estimate near the break-even
    point would otherwise flip the draft on and off. For the same reason a switched-off
    model draft forgets more slowly (`idle_memory` per idle round instead of :attr:`MEMORY`), so
    it is probed about every 20 rounds rather than every 5, which costs a draft that is
    never right less.
    """

    MEMORY, MEMORY_TOKENS, PRIOR = 0.8, 5.0, (0.9, 0.1)

    def __init__(
        self,
        start: int,
        cost_ratio: float,
        min_gamma: int = 0,
        max_gamma: int = 16,
        verify_cost: theory.VerifyCost | None = None,
        off_margin: float = 0.05,
        idle_memory: float = 0.95,
    ) -> None:
        self.min_gamma = _check(min_gamma, "min_gamma", 0)
        self.max_gamma = _check(max_gamma, "max_gamma", max(self.min_gamma, 1))
        self.gamma = min(max(_check(start, "gamma", 0), self.min_gamma), self.max_gamma)
        if not 0 <= cost_ratio < float("inf"):
            raise ValueError(f"cost_ratio must be 0 or more, got {cost_ratio!r}.")
        if not 0 < idle_memory < 1:
            raise ValueError(f"idle_memory must lie in (0, 1), got {idle_memory!r}.")
        if not 0 <= off_margin < 1:
            raise ValueError(f"off_margin must lie in [0, 1), got {off_margin!r}.")
        self.cost_ratio = float(cost_ratio)
        self.verify_cost = verify_cost if verify_cost is not None else default_verify_cost
        self.off_margin = off_margin
        self.idle_memory = idle_memory
        self.accepted = 0.0
        self.rejections = 0.0

    @property
    def alpha(self) -> float:
        """The current acceptance-rate estimate α̂."""
        a, b = self.PRIOR
        return (a + self.accepted) / (a + b + self.accepted + self.rejections)

    def next_gamma(self) -> int:
        return self.gamma

    def update(self, drafted: int, accepted: int, rejected: bool) -> None:
        if drafted == 0 and self.gamma > 0:
            return  # the draft had nothing to offer (an n-gram without a match): no evidence
        idle = self.gamma == 0 and drafted == 0 and self.cost_ratio > 0
        examined = max(accepted + (1 if rejected else 0), 1)
        # evidence fades per examined draft, not per round (see the class docstring)
        keep = self.idle_memory if idle else self.MEMORY ** (examined / self.MEMORY_TOKENS)
        self.accepted = keep * self.accepted + accepted
        self.rejections = keep * self.rejections + (1.0 if rejected else 0.0)
        alpha = self.alpha
        best = theory.best_gamma(alpha, self.cost_ratio, self.verify_cost, self.max_gamma, self.min_gamma)
        best_value = float(theory.speedup(alpha, best, self.cost_ratio, self.verify_cost))
        margin = self.off_margin if self.cost_ratio > 0 else 0.0  # a lookup restarts for free
        if self.min_gamma == 0 and best_value < 1.0 - margin:
            best = 0
        self.gamma = best

    def state(self) -> dict[str, Any]:
        return {"controller": "theory", "gamma": self.gamma, "alpha": round(self.alpha, 4)}


def default_verify_cost(gamma: int) -> float:
    """Target steps of a verification forward of γ+1 tokens (1 for γ = 0, a plain step):
    ``VERIFY_STEPS`` interpolated (see there)."""
    return interpolated_verify_cost(VERIFY_STEPS, gamma)


def interpolated_verify_cost(steps: dict[int, float], gamma: int) -> float:
    """Target steps of a verification of γ+1 tokens from `steps` (γ → steps, at least two γ):
    1 for γ = 0, linear between the listed γ, extended at the last segment's slope."""
    if gamma <= 0:
        return 1.0
    known = sorted(steps)
    if gamma <= known[0]:
        return steps[known[0]]
    segments = list(itertools.pairwise(known))
    low, high = next(((a, b) for a, b in segments if gamma <= b), segments[-1])
    slope = (steps[high] - steps[low]) / (high - low)
    return steps[low] + slope * (gamma - low)


def target_verify_cost(target: LanguageModel) -> theory.VerifyCost:
    """The verification cost the engine prices rounds with: the target's own, timed at load on
    this machine (``verify_steps``: γ → target steps), else :func:`default_verify_cost`."""
    steps = getattr(target, "verify_steps", None)
    if isinstance(steps, dict) and len(steps) >= 2:
        table = {int(g): float(v) for g, v in steps.items()}
        return functools.partial(interpolated_verify_cost, table)
    return default_verify_cost


#: Cost ratio assumed for a draft model whose cost cannot be estimated (e.g. a toy chain).
UNKNOWN_COST_RATIO = 0.25


#: Fixed cost of one decoder layer in a decode step (small operations and Python), as the
#: bytes of weights it would take as long to read; fitted to SmolLM2 decode steps of the
#: lean body.
LAYER_OVERHEAD_BYTES = 7 * 2**20


def _declared_cost(draft: Draft) -> float | None:
    """A draft's own ``cost_ratio``, 0 for a lookup drafter (``propose``), else None."""
    explicit = getattr(draft, "cost_ratio", None)
    if explicit is not None:
        return float(explicit)
    return 0.0 if hasattr(draft, "propose") else None


def estimate_cost_ratio(target: LanguageModel, draft: Draft) -> float:
    """One draft step in target steps, from what each model must do per token.

    0 for a lookup drafter (``propose``); for two torch models, (weight bytes + layers ×
    ``LAYER_OVERHEAD_BYTES``) of the draft over the target's: decoding reads every weight
    once, plus a fixed cost per layer (a bf16 copy ≈ 0.63, not 0.5; the first 8 of 30
    layers ≈ 0.37); a model's own ``cost_ratio`` attribute wins; otherwise
    ``UNKNOWN_COST_RATIO``.
    """
    declared = _declared_cost(draft)
    if declared is not None:
        return declared
    t_mod, d_mod = getattr(target, "module", None), getattr(draft, "module", None)
    if t_mod is None or d_mod is None:
        return UNKNOWN_COST_RATIO

    def step_bytes(model: Any, module: Any) -> float:
        weights = sum(p.numel() * p.element_size() for p in module.parameters())
        return weights + LAYER_OVERHEAD_BYTES * int(getattr(model, "num_layers", 0) or 0)

    return step_bytes(draft, d_mod) / max(step_bytes(target, t_mod), 1.0)


def draft_cost_ratio(target: LanguageModel, draft: Draft) -> float:
    """One draft step in target steps, as the engine prices it: a draft's own ``cost_ratio``
    wins, a lookup drafter costs 0, two models timed at load on this machine (``step_seconds``)
    give the ratio of their measured steps, and anything else :func:`estimate_cost_ratio`."""
    declared = _declared_cost(draft)
    if declared is not None:
        return declared
    measured = measured_cost_ratio(target, draft)
    return measured if measured is not None else estimate_cost_ratio(target, draft)


def measured_cost_ratio(target: LanguageModel, draft: Draft) -> float | None:
    """One draft step in target steps as timed on this machine: a lookup drafter's 0, or the
    ratio of the two models' decode steps timed at load (``step_seconds``); None when either
    model was not timed."""
    if hasattr(draft, "propose"):
        return 0.0
    t, d = getattr(target, "step_seconds", None), getattr(draft, "step_seconds", None)
    if isinstance(t, int | float) and isinstance(d, int | float) and t > 0 and d > 0:
        return float(d) / float(t)
    return None


def make_controller(
    gamma: int,
    adaptive: bool | str | GammaController,
    bounds: tuple[int, int] = (1, 16),
    cost_ratio: float = 1.0,
    verify_cost: theory.VerifyCost | None = None,
) -> GammaController:
    """Build the controller a run asks for.

    ``False`` → fixed γ; ``True`` or ``"theory"`` → :class:`TheoryGamma` (γ from 0 to the
    upper bound; `cost_ratio` is one draft step in target steps); ``"heuristic"`` →
    :class:`HeuristicGamma` within `bounds`; or any ``GammaController`` instance.
    """
    if isinstance(adaptive, GammaController) and not isinstance(adaptive, bool | str):
        return adaptive
    if adaptive is False:
        return FixedGamma(gamma)
    if adaptive is True or adaptive == "theory":
        return TheoryGamma(gamma, cost_ratio, 0, bounds[1], verify_cost)
    if adaptive == "heuristic":
        return HeuristicGamma(gamma, *bounds)
    raise ValueError(
        f"adaptive_gamma must be True, False, 'theory', 'heuristic' or a GammaController, got {adaptive!r}."
    )


def _check(value: int, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}.")
    return int(value)
