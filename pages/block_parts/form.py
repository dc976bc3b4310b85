"""The block lesson's settings, named once: key (also the URL name), default, bounds or options."""

from __future__ import annotations

from dataclasses import dataclass

from pages.common.form import Form
from pages.common.urlstate import Param, choice_param, float_param, int_param
from specdec_core.course import block as block_demo

MAX_ROUNDS = 500


@dataclass(frozen=True)
class BlockForm(Form):
    """The chain, draft, γ, seed and temperature of a demo, and how many rounds it has stepped."""

    chain: Param
    draft: Param
    k: Param
    seed: Param
    t: Param
    round: Param


FORM = BlockForm(
    chain=choice_param("block_chain", "story", block_demo.CHAINS),
    draft=choice_param("block_draft", "good", block_demo.DRAFTS),
    k=int_param("block_k", 4, 1, 8),
    seed=int_param("block_seed", 7, 0, 2**32 - 1),
    t=float_param("block_t", 1.0, 0.0, 2.0),
    round=int_param("block_round", 0, 0, MAX_ROUNDS),
)
