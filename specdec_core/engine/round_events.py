"""Building a round's ``RoundEvent`` from what drafting and verification produced."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from specdec_core.engine.events import RoundEvent
from specdec_core.engine.rows import RunMaths
from specdec_core.engine.verification import Verdict


@dataclass(frozen=True)
class RoundClock:
    """``perf_counter`` stamps of one round: its start, drafting done, target forward done."""

    start: float
    drafted: float
    verified: float
    #: seconds the target's rows took when verification read them (part of its forward)
    head_s: float
    #: the prompt's prefill (first round only, else 0)
    prefill_s: float


@dataclass(frozen=True)
class RoundInside:
    """What happened inside a chain round: each examined draft's u, each draft step's seconds,
    and each session's length ``[before, peak, after]`` (see ``RoundEvent``)."""

    draft_u: list[float]
    draft_step_s: list[float]
    cache: dict[str, list[int]]


def speculative_event(
    *,
    index: int,
    gamma: int,
    drafts: Sequence[int],
    qs: Sequence[np.ndarray | None],
    verdict: Verdict,
    committed: list[int],
    kinds: list[str],
    stop: str | None,
    run: RunMaths,
    clock: RoundClock,
    draft_forwards: int,
    position: int,
    extra: dict[str, Any],
    inside: RoundInside | None = None,
) -> RoundEvent:
    """The event of one speculative round (`committed` / `kinds` already cut at EOS)."""
    result = verdict.result
    q_rows = [r for r in (run.compact(q, x) for q, x in zip(qs, drafts, strict=True)) if r]
    if verdict.p_used is None:
        p_rows = [r for r in (run.compact(None, c) for c in verdict.choice) if r]
    else:
        p_rows = [r for r in (run.compact(p) for p in verdict.p_used) if r]
    end = time.perf_counter()
    return RoundEvent(
        index=index,
        mode="speculative",
        gamma=gamma,
        draft_tokens=list(drafts),
        accepted_count=sum(1 for kind in kinds if kind == "accepted"),
        committed=committed,
        kinds=kinds,
        acceptance_probs=list(result.acceptance_probs),
        draft_q=verdict.draft_q,
        draft_p=verdict.draft_p,
        q_rows=q_rows,
        p_rows=p_rows,
        draft_s=clock.drafted - clock.start,
        verify_s=clock.verified - clock.drafted + clock.head_s,
        overhead_s=max(end - clock.verified - clock.head_s, 0.0),
        prefill_s=clock.prefill_s,
        draft_forwards=draft_forwards,
        target_forwards=1,
        position=position,
        stop_reason=stop,
        rejected=result.accepted < len(drafts),
        extra=extra,
        draft_u=list(inside.draft_u) if inside else [],
        draft_step_s=list(inside.draft_step_s) if inside else [],
        cache=dict(inside.cache) if inside else {},
    )


def autoregressive_event(
    *,
    index: int,
    committed: list[int],
    kinds: list[str],
    stop: str | None,
    p: np.ndarray | None,
    run: RunMaths,
    start: float,
    stepped: float,
    prefill_s: float,
) -> RoundEvent:
    """The event of one target-only token (`p`: its processed row, None when greedy)."""
    p_row = run.compact(p, committed[0])
    end = time.perf_counter()
    return RoundEvent(
        index=index,
        mode="autoregressive",
        gamma=0,
        draft_tokens=[],
        accepted_count=0,
        committed=committed,
        kinds=kinds,
        acceptance_probs=[],
        draft_q=[],
        draft_p=[],
        q_rows=[],
        p_rows=[p_row] if p_row else [],
        draft_s=0.0,
        verify_s=stepped - start,
        overhead_s=end - stepped,
        prefill_s=prefill_s,
        draft_forwards=0,
        target_forwards=1,
        position=index,
        stop_reason=stop,
    )
