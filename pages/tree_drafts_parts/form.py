"""The tree drafts lesson's settings, named once: key (also the URL name), default, bounds or
options."""

from __future__ import annotations

from dataclasses import dataclass

from pages.common.form import Form
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param
from specdec_core.course.block import CHAINS, DRAFTS

MAX_ROUNDS = 200
SHAPES = ("2-2", "3-1", "2-1-1", "2-2-1", "3-2", "1-1-1-1")


@dataclass(frozen=True)
class TreeDraftsForm(Form):
    """The stepped demo (chain, draft, shape, seed, temperature, rounds so far), the shapes'
    node budget, and one position's candidates (how many, with replacement or not)."""

    chain: Param
    draft: Param
    shape: Param
    seed: Param
    t: Param
    round: Param
    budget: Param
    k: Param
    repl: Param


FORM = TreeDraftsForm(
    chain=choice_param("trd_chain", "story", CHAINS),
    draft=choice_param("trd_draft", "poor", DRAFTS),
    shape=choice_param("trd_shape", "2-2", SHAPES),
    seed=int_param("trd_seed", 7, 0, 2**32 - 1),
    t=float_param("trd_t", 1.0, 0.0, 2.0),
    round=int_param("trd_round", 0, 0, MAX_ROUNDS),
    budget=int_param("trd_budget", 6, 2, 10),
    k=int_param("trd_k", 2, 1, 3),
    repl=bool_param("trd_repl", False),
)
