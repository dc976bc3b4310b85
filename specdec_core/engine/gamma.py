"""How many tokens to draft next round (γ): fixed, or adapted to how the drafts fare.

``HeuristicGamma`` is transformers' schedule: +2 after a round whose drafts were all
accepted, −1 after a rejection, kept within bounds. A controller only changes speed,
never what is generated: the output law is the target's for every γ.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


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


def make_controller(
    gamma: int, adaptive: bool | str | GammaController, bounds: tuple[int, int] = (1, 16)
) -> GammaController:
    """``False`` → fixed γ; ``True`` / ``"heuristic"`` → :class:`HeuristicGamma`; or a controller."""
    if isinstance(adaptive, GammaController) and not isinstance(adaptive, bool | str):
        return adaptive
    if adaptive is False:
        return FixedGamma(gamma)
    if adaptive is True or adaptive == "heuristic":
        return HeuristicGamma(gamma, *bounds)
    raise ValueError(
        f"adaptive_gamma must be True, False, 'heuristic' or a GammaController, got {adaptive!r}."
    )


def _check(value: int, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}.")
    return int(value)
