"""Verification of drafts by the target: the public contract of DESIGN.md, in three parts.

* :mod:`.one_draft` — one draft token at one position (accept with min(1, p/q), else draw
  from the residual), a block of K of them, and the probability tree of one step;
* :mod:`.candidates` — several candidates at one position (token-tree drafts): recursive
  rejection sampling, with or without replacement;
* a draft over another vocabulary: its law seen in the target's (``project``, ``coverage``,
  from :mod:`specdec_core.vocab_projection`).

:mod:`.basics` holds what the first two share: the distribution type, the inverse-CDF draw
and the probability tree's node. Callers import every name from here, ``specdec_core.verify``.
"""

from specdec_core.verify.basics import Dist, TreeNode, inverse_cdf, sample
from specdec_core.verify.candidates import (
    CandidateResult,
    CandidateSplit,
    CandidateTree,
    acceptance_curve,
    candidate_acceptance,
    candidate_tree,
    greedy_candidates,
    multi_draft_distribution,
    multi_draft_split,
    verify_candidates,
)
from specdec_core.verify.one_draft import (
    BlockResult,
    Decomposition,
    ProbabilityTree,
    StepResult,
    acceptance_probs,
    decompose,
    output_distribution,
    rejection_flows,
    speculative_step,
    tree,
    verify_block,
    verify_rows,
)
from specdec_core.vocab_projection import coverage, project

__all__ = [
    "BlockResult",
    "CandidateResult",
    "CandidateSplit",
    "CandidateTree",
    "Decomposition",
    "Dist",
    "ProbabilityTree",
    "StepResult",
    "TreeNode",
    "acceptance_curve",
    "acceptance_probs",
    "candidate_acceptance",
    "candidate_tree",
    "coverage",
    "decompose",
    "greedy_candidates",
    "inverse_cdf",
    "multi_draft_distribution",
    "multi_draft_split",
    "output_distribution",
    "project",
    "rejection_flows",
    "sample",
    "speculative_step",
    "tree",
    "verify_block",
    "verify_candidates",
    "verify_rows",
]
