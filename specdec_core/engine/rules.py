"""Verification rules a run may use: the exact one, and two broken ones to show what breaks.

``RunOptions(rule=...)``: "exact" (the default: :mod:`.verification`, unchanged) keeps a
draft with probability min(1, p/q) and draws a rejected position from the residual. The
broken rules exist for the lab "Exact on a real model", which shows a χ² test telling them
apart from the target's law:

* "accept_all" — keep every draft token; the target only adds the bonus token. The text then
  follows the draft's law q at every drafted position, not p.
* "resample_from_p" — accept with min(1, p/q) as usual, but draw a rejected position from p
  itself instead of the residual (p − q)+ / R: tokens the draft already covers get drawn twice.

Their exact single-position laws are ``variants.emitted_law(p, q, "accept_all")`` and
``"resample_from_p"``. Both read the processed rows the exact rule reads (the same
``RunMaths``), so only the decision differs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from specdec_core.engine.rows import RowSource, RunMaths
from specdec_core.engine.verification import Verdict, chain_verdict, full_q
from specdec_core.verify import sample

RULES: tuple[str, ...] = ("exact", "accept_all", "resample_from_p")
#: The broken rules, for a UI that lets a learner pick one.
BROKEN_RULES: tuple[str, ...] = RULES[1:]


def check_rule(rule: str) -> str:
    """`rule` when it is one of :data:`RULES`, else ValueError."""
    if rule not in RULES:
        raise ValueError(f"unknown verification rule {rule!r}; choose one of {', '.join(RULES)}.")
    return rule


def verify_broken_round(
    rows: RowSource,
    drafts: Sequence[int],
    qs: Sequence[np.ndarray | None],
    run: RunMaths,
    vocab: int,
    rule: str,
) -> Verdict:
    """One round under a broken `rule` (q rows `qs`, None meaning one-hot at the draft)."""
    q_rows = full_q(drafts, qs, vocab)
    row = run.row_probs(rows)
    tokens: list[int] = []
    kinds: list[str] = []
    alphas: list[float] = []
    p_used: list[np.ndarray] = []
    for i, x in enumerate(drafts):
        p = row(i)
        p_used.append(p)
        if rule == "accept_all":
            alphas.append(1.0)
            tokens.append(int(x))
            kinds.append("accepted")
            continue
        q_x = float(q_rows[i][x])
        alpha = min(1.0, float(p[x]) / q_x) if q_x > 0 else 0.0
        alphas.append(alpha)
        if run.rng.random() < alpha:
            tokens.append(int(x))
            kinds.append("accepted")
            continue
        tokens.append(sample(p, run.rng))  # the bug: p itself, not the residual
        kinds.append("corrected")
        return chain_verdict(tokens, kinds, alphas, drafts, qs, q_rows, p_used)
    p = row(len(drafts))
    p_used.append(p)
    tokens.append(sample(p, run.rng))
    kinds.append("bonus")
    return chain_verdict(tokens, kinds, alphas, drafts, qs, q_rows, p_used)
