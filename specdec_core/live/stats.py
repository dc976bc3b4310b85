"""Statistics of a live run: per-round bars, tokens per round against the theory, the speedup.

Everything is computed from the engine's events, so a replayed trace gives the same numbers.
Rounds may draft different numbers of tokens (an n-gram draft finds shorter matches, adaptive γ
changes γ), so the law the i.i.d. model predicts averages P(n | α, k_r) over the rounds, with
k_r the drafts of round r: α^(n-1)(1-α) for n ≤ k_r and α^(k_r) for n = k_r + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from specdec_core.engine import RoundEvent, RunSummary, summarize
from specdec_core.live.inspector import slot_kind
from specdec_core.live.trace import RunRecord
from specdec_core.theory import mean_expected_tokens, tokens_per_round_law


@dataclass(frozen=True)
class Timeline:
    """One entry per round: its index, drafts, accepted drafts, committed tokens and last kind
    (as :func:`~specdec_core.live.inspector.slot_kind` shows it: "target" for a round whose
    draft proposed nothing, its one token a plain target step)."""

    rounds: list[int]
    drafted: list[int]
    accepted: list[int]
    committed: list[int]
    last_kind: list[str]


def timeline(events: Sequence[RoundEvent]) -> Timeline:
    """The bars of the round timeline."""
    return Timeline(
        rounds=[e.index for e in events],
        drafted=[len(e.draft_tokens) for e in events],
        accepted=[e.accepted_count for e in events],
        committed=[len(e.committed) for e in events],
        last_kind=[slot_kind(e, -1) for e in events],
    )


def round_law(alpha: float, drafted: Sequence[int]) -> np.ndarray:
    """P(a round commits n tokens), n = 1 … max(drafted)+1, averaged over rounds of `drafted` drafts."""
    if not drafted:
        raise ValueError("round_law needs at least one round.")
    size = max(drafted) + 1
    law = np.zeros(size)
    for k in drafted:
        if k == 0:
            law[0] += 1.0  # no draft: the target adds exactly one token
        else:
            law[: k + 1] += tokens_per_round_law(alpha, int(k))
    return law / len(drafted)


@dataclass(frozen=True)
class LiveStats:
    """A run's totals and its tokens-per-round distribution against the i.i.d. model.

    ``counts[n-1]`` rounds committed n tokens; ``law`` (None before any draft was examined)
    is the predicted share of rounds per n for the measured ``alpha``; ``forwards_saved``
    = tokens − target forward passes (target-only decoding needs one pass per token).
    """

    summary: RunSummary
    alpha: float | None
    counts: np.ndarray
    law: np.ndarray | None
    mean_measured: float
    mean_theory: float | None
    forwards_saved: int


def live_stats(events: Sequence[RoundEvent]) -> LiveStats:
    """Totals, measured α and the tokens-per-round comparison of a speculative run."""
    if not events:
        raise ValueError("live_stats needs at least one round.")
    summary = summarize(events)
    drafted = [len(e.draft_tokens) for e in events]
    counts = np.zeros(max(max(drafted) + 1, max(len(e.committed) for e in events)), dtype=np.int64)
    for e in events:
        counts[len(e.committed) - 1] += 1
    alpha = summary.alpha
    law = mean_theory = None
    if alpha is not None:
        law = np.zeros(counts.size)
        mixed = round_law(alpha, drafted)
        law[: mixed.size] = mixed
        mean_theory = float(mean_expected_tokens(alpha, drafted))
    return LiveStats(
        summary=summary,
        alpha=alpha,
        counts=counts,
        law=law,
        mean_measured=summary.tokens_per_round,
        mean_theory=mean_theory,
        forwards_saved=summary.tokens - summary.target_forwards,
    )


def progress_curve(events: Sequence[RoundEvent]) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, tokens) after each event, from the engine's timings (prefill included)."""
    seconds = np.cumsum([e.total_s for e in events])
    tokens = np.cumsum([len(e.committed) for e in events])
    return np.concatenate([[0.0], seconds]), np.concatenate([[0], tokens])


@dataclass(frozen=True)
class Comparison:
    """Speculative vs target-only: same tokens or not, and the measured speedups.

    ``identical`` is None when either run was stopped early; ``first_difference`` is the
    first position where the texts differ. Speedups compare tokens per second, so texts of
    different lengths (sampling) compare fairly: ``wall_speedup`` on wall-clock times,
    ``decode_speedup`` on the engine's compute times without the prompt's prefill.
    """

    identical: bool | None
    first_difference: int | None
    spec_tokens: int
    base_tokens: int
    spec_wall: float
    base_wall: float
    wall_speedup: float | None
    decode_speedup: float | None


def _rate(tokens: int, seconds: float) -> float | None:
    return tokens / seconds if seconds > 0 and tokens > 0 else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b is not None else None


def compare(spec: RunRecord, base: RunRecord) -> Comparison:
    """Compare a speculative run with the target-only run of the same settings."""
    a, b = spec.tokens, base.tokens
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    identical = (first is None) if spec.complete and base.complete else None
    s_sum, b_sum = summarize(spec.events), summarize(base.events)
    return Comparison(
        identical=identical,
        first_difference=first,
        spec_tokens=len(a),
        base_tokens=len(b),
        spec_wall=spec.wall_s,
        base_wall=base.wall_s,
        wall_speedup=_ratio(_rate(len(a), spec.wall_s), _rate(len(b), base.wall_s)),
        decode_speedup=_ratio(_rate(len(a), s_sum.decode_s), _rate(len(b), b_sum.decode_s)),
    )
