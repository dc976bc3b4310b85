"""Data behind the self-speculation lesson: measured early exits, the shipped head, other drafts.

* ``assets/head/early_exit.json`` (``python -m train early-exit``): per depth k of
  SmolLM2-135M, how often an untrained exit after k layers (final norm + LM head) picks the
  full model's token, and its α = Σ min(p, q) at T = 1 and T = 0.7;
* ``assets/head/calibration.json`` (``python -m train calibrate``): the head's confidence
  against how often the target agrees, by quintile of confidence at each drafting depth, and
  greedy runs replayed with each chain-stop floor;
* the shipped heads' cards (:mod:`.cards`);
* the cost lesson's drafts (their greedy match rates from ``assets/presets/cost.json``, their
  costs from the machine profile the page hands in) for comparison.

Each comparison row also carries the speedup the i.i.d. theory predicts at the best γ with
the verification cost the page hands in (the profile's β), so the page only shows numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from specdec_core.course.cards import HEAD_DIR
from specdec_core.course.cost import draft_presets
from specdec_core.theory import best_gamma, linear_verify_cost, speedup

EARLY_EXIT_FILE = HEAD_DIR / "early_exit.json"
CALIBRATION_FILE = HEAD_DIR / "calibration.json"
MAX_GAMMA = 12
#: The worked example's head, given numbers of the example: α = 0.5 and a draft step of c = 0.05.
WORKED_HEAD = (0.5, 0.05)


@dataclass(frozen=True)
class EarlyExit:
    """α of an untrained exit after each depth, measured on held-out text."""

    depths: tuple[int, ...]
    greedy: tuple[float, ...]
    alpha_t1: tuple[float, ...]
    alpha_t07: tuple[float, ...]
    positions: int
    source: str


@dataclass(frozen=True)
class Calibration:
    """The head's confidence against its agreement with the target, held out: per drafting
    depth, the mean confidence and the share agreed of each fifth of the positions; and the
    replayed greedy runs' tokens per target step without a chain-stop floor and at the best."""

    positions: int
    confidence_by_depth: tuple[tuple[float, ...], ...]
    agreement_by_depth: tuple[tuple[float, ...], ...]
    floor: float
    tokens_per_step_no_floor: float
    tokens_per_step_floor: float


@dataclass(frozen=True)
class DraftRow:
    """One draft in the comparison: α, step cost c, and the theory's best γ and speedup."""

    key: str
    alpha: float
    cost: float
    gamma: int
    predicted: float


@cache
def early_exit() -> EarlyExit | None:
    """The early-exit measurement, or None when it has not been run."""
    if not EARLY_EXIT_FILE.is_file():
        return None
    d = json.loads(EARLY_EXIT_FILE.read_text(encoding="utf-8"))
    return EarlyExit(
        tuple(d["depths"]),
        tuple(d["greedy"]),
        tuple(d["alpha_t1"]),
        tuple(d["alpha_t07"]),
        int(d["positions"]),
        str(d["source"]),
    )


@cache
def head_calibration() -> Calibration | None:
    """The shipped head's calibration, or None when it has not been measured."""
    if not CALIBRATION_FILE.is_file():
        return None
    d = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    replays = {r["floor"]: r["tokens_per_step"] for r in d["replays"]}
    depths = d["confidence_vs_hit_by_depth"]
    return Calibration(
        positions=int(d["positions"]),
        confidence_by_depth=tuple(tuple(float(b["confidence"]) for b in depth) for depth in depths),
        agreement_by_depth=tuple(tuple(float(b["hit"]) for b in depth) for depth in depths),
        floor=float(d["best_floor"]),
        tokens_per_step_no_floor=float(replays[0.0]),
        tokens_per_step_floor=float(replays[d["best_floor"]]),
    )


def draft_rows(c_of: Callable[[str], float], beta: float) -> list[DraftRow]:
    """The cost lesson's drafts, each at the cost `c_of` gives for its draft (a machine
    profile's), and the shipped heads (costs from their cards), with the best γ and the speedup
    predicted with the verification 1 + β·γ."""
    verify = linear_verify_cost(beta)
    out = []
    for key, (a, c) in draft_presets(c_of).items():  # the heads' included
        g = int(best_gamma(a, c, verify, MAX_GAMMA))
        out.append(DraftRow(key, a, c, g, float(speedup(a, g, c, verify))))
    return out
