"""The shipped draft head's and Medusa heads' cards: what training measured and their step cost.

* ``assets/head/card.json`` (``python -m train export``): the head's training figures and
  held-out acceptance per drafting depth, its step cost and bench speedup;
* ``assets/medusa/card.json`` (``python -m train medusa-export``): the Medusa heads'
  held-out acceptance per head (alone, given the heads before matched, top 3) and step cost.

Read by the cost lesson (its presets) and the self-speculation lesson (its tables), so
that neither lesson's module imports the other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HEAD_DIR = Path(__file__).resolve().parents[2] / "assets" / "head"
CARD_FILE = HEAD_DIR / "card.json"
MEDUSA_CARD_FILE = HEAD_DIR.parent / "medusa" / "card.json"


@dataclass(frozen=True)
class HeadCard:
    """The shipped head's figures (see assets/head/MODEL_CARD.md)."""

    parameters: int
    train_positions: int
    steps: int
    train_minutes: float
    greedy_by_depth: tuple[float, ...]
    alpha_by_depth: tuple[float, ...]
    greedy_gamma4: float
    alpha_gamma4: float
    accepted_per_round: float
    greedy_positions: int
    sampled_positions: int
    cost_ratio: float | None
    bench_chat: float | None
    bench_alpha: float | None


@dataclass(frozen=True)
class MedusaCard:
    """The shipped Medusa heads' figures (see assets/medusa/MODEL_CARD.md), per head k = 1 … K."""

    heads: int
    parameters: int
    steps: int
    train_minutes: float
    greedy_by_head: tuple[float, ...]
    chain_by_head: tuple[float, ...]
    top3_by_head: tuple[float, ...]
    accepted_per_round: float
    positions: int
    cost_ratio: float | None
    bench_chat: float | None
    bench_alpha: float | None
    bench_tree_chat: float | None


@cache
def head_card() -> HeadCard | None:
    """The shipped head's card, or None when no head is shipped."""
    if not CARD_FILE.is_file():
        return None
    d = json.loads(CARD_FILE.read_text(encoding="utf-8"))
    ev = d.get("evaluation") or {}
    bench = d.get("bench") or {}
    return HeadCard(
        parameters=int(d["parameters"]),
        train_positions=int(d["train_positions"]),
        steps=int(d["steps"]),
        train_minutes=float(d["train_minutes"]),
        greedy_by_depth=tuple(ev.get("greedy_acceptance_by_depth", ())),
        alpha_by_depth=tuple(ev.get("alpha_t07_by_depth", ())),
        greedy_gamma4=float(ev.get("greedy_acceptance_gamma4", 0.0)),
        alpha_gamma4=float(ev.get("alpha_t07_gamma4", 0.0)),
        accepted_per_round=float(ev.get("accepted_per_round_gamma4", 0.0)),
        greedy_positions=int(ev.get("greedy_positions", 0)),
        sampled_positions=int(ev.get("sampled_positions", 0)),
        cost_ratio=d.get("cost_ratio"),
        bench_chat=bench.get("head_chat"),
        bench_alpha=bench.get("head_alpha"),
    )


@cache
def medusa_card() -> MedusaCard | None:
    """The shipped Medusa heads' card, or None when none are shipped."""
    if not MEDUSA_CARD_FILE.is_file():
        return None
    d = json.loads(MEDUSA_CARD_FILE.read_text(encoding="utf-8"))
    ev = d.get("evaluation") or {}
    bench = d.get("bench") or {}
    return MedusaCard(
        heads=int(d["heads"]),
        parameters=int(d["parameters"]),
        steps=int(d["steps"]),
        train_minutes=float(d["train_minutes"]),
        greedy_by_head=tuple(ev.get("greedy_acceptance_by_head", ())),
        chain_by_head=tuple(ev.get("chain_acceptance_by_head", ())),
        top3_by_head=tuple(ev.get("top3_by_head", ())),
        accepted_per_round=float(ev.get("accepted_per_round_chain", 0.0)),
        positions=int(ev.get("positions", 0)),
        cost_ratio=d.get("cost_ratio"),
        bench_chat=bench.get("medusa_chat"),
        bench_alpha=bench.get("medusa_alpha"),
        bench_tree_chat=bench.get("medusa_tree_chat"),
    )
