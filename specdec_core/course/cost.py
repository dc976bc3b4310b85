"""The cost lesson's data (assets/presets/cost.json): the essay's table and this machine's measurements.

The essay's expected-tokens table is quoted as printed (two of its rows are wrong); the
measured drafts are (α, draft cost as a fraction of a target step); one measured point gives
the cost of verifying several tokens at once, and through it the linear verification model
1 + β·γ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

COST_FILE = Path(__file__).resolve().parents[2] / "assets" / "presets" / "cost.json"


@dataclass(frozen=True)
class CostData:
    """What the cost page shows besides its own controls.

    ``seed_claims``: the essay's (α, γ, claimed E[tokens]) rows, as printed;
    ``measured_drafts``: name → (α, draft cost ratio), in the file's order;
    ``measured_verify``: (tokens verified in one forward, its cost in single decode steps);
    ``measured_beta``: β of 1 + β·γ through that point (γ = tokens - 1 drafts), to 6 places.
    """

    seed_claims: tuple[tuple[float, int, float], ...]
    measured_drafts: MappingProxyType[str, tuple[float, float]]
    measured_verify: tuple[int, float]
    measured_beta: float


@cache
def cost_data() -> CostData:
    """The cost lesson's data, read once per process."""
    with COST_FILE.open(encoding="utf-8") as f:
        data = json.load(f)
    drafts = {name: tuple(v) for name, v in data["measured_drafts"]["drafts"].items()}
    tokens, steps = data["measured_verify"]["tokens"], data["measured_verify"]["steps"]
    return CostData(
        seed_claims=tuple(tuple(row) for row in data["seed_claims"]["rows"]),
        measured_drafts=MappingProxyType(drafts),
        measured_verify=(tokens, steps),
        measured_beta=round((steps - 1) / (tokens - 1), 6),
    )
