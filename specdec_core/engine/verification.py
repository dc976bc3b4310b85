"""One round's verification of a chain of drafts, one function per mode.

* greedy (temperature 0, fast): the target's argmax read left to right
  (``processing.greedy_choices``) and ``processing.verify_greedy``;
* sampled (fast): ``verify.verify_rows``, processing each target row only when it is read;
* reference: every row processed by ``sampling.apply`` and ``verify.verify_block``.

All three decide exactly as ``verify.verify_block`` on the same rows and draw the same
random numbers (tested), so they only differ in the work they do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from specdec_core.engine.processing import greedy_choices, verify_greedy
from specdec_core.engine.rows import RowSource, RunMaths
from specdec_core.sampling import one_hot
from specdec_core.verify import BlockResult, verify_block, verify_rows


@dataclass
class Verdict:
    """What verification decided, and the probabilities it read.

    ``draft_q[i]`` / ``draft_p[i]``: q and p of draft i at its token (p only for the
    drafts examined); ``p_used`` the processed target rows read (None in the greedy
    mode, where ``choice`` holds the target's argmax at each row read instead).
    """

    result: BlockResult
    draft_q: list[float]
    draft_p: list[float]
    p_used: list[np.ndarray] | None
    choice: list[int]


def verify_round(
    rows: RowSource, drafts: Sequence[int], qs: Sequence[np.ndarray | None], run: RunMaths, vocab: int
) -> Verdict:
    """Verify `drafts` (q rows `qs`, None meaning one-hot at the draft) against `rows`."""
    if run.greedy and not run.reference:
        return verify_greedy_round(rows, drafts, run)
    q_rows = [q if q is not None else one_hot(vocab, x) for q, x in zip(qs, drafts, strict=True)]
    if run.reference:
        return verify_reference_round(rows, drafts, q_rows, run, vocab)
    return verify_sampled_round(rows, drafts, q_rows, run)


def verify_greedy_round(rows: RowSource, drafts: Sequence[int], run: RunMaths) -> Verdict:
    """Temperature 0: p and q one-hot at their argmax; no row is processed."""
    choice = greedy_choices(rows.row, drafts)
    result = verify_greedy(choice, drafts, run.rng)
    examined = len(result.acceptance_probs)
    draft_p = [1.0 if drafts[i] == choice[i] else 0.0 for i in range(examined)]
    return Verdict(result, [1.0] * len(drafts), draft_p, None, choice)


def verify_sampled_round(
    rows: RowSource, drafts: Sequence[int], q_rows: list[np.ndarray], run: RunMaths
) -> Verdict:
    """The fast path: each target row processed only when verification reads it."""
    result, p_used = verify_rows(run.row_probs(rows), q_rows, list(drafts), run.rng)
    return _verdict(result, drafts, q_rows, list(p_used))


def verify_reference_round(
    rows: RowSource, drafts: Sequence[int], q_rows: list[np.ndarray], run: RunMaths, vocab: int
) -> Verdict:
    """The reference maths: every row computed and processed, then ``verify_block``."""
    p_all = run.probs(rows.all())
    q = np.stack(q_rows) if drafts else np.zeros((0, vocab))
    result = verify_block(p_all, q, list(drafts), run.rng)
    return _verdict(result, drafts, q_rows, list(p_all[: len(result.tokens)]))


def _verdict(
    result: BlockResult, drafts: Sequence[int], q_rows: list[np.ndarray], p_used: list[np.ndarray]
) -> Verdict:
    draft_q = [float(q_rows[i][x]) for i, x in enumerate(drafts)]
    draft_p = [float(p_used[i][drafts[i]]) for i in range(len(result.acceptance_probs))]
    return Verdict(result, draft_q, draft_p, p_used, [])
