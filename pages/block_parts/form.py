"""The block lesson's settings, named once: key (also the URL name), default, bounds or options."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.urlstate import choice_param, float_param, int_param
from specdec_core.course import block as block_demo

MAX_ROUNDS = 500


class BlockForm(Form):
    """The chain, draft, γ, seed and temperature of a demo, and how many rounds it has stepped."""

    prefix = "block"
    chain = choice_param("story", block_demo.CHAINS)
    draft = choice_param("good", block_demo.DRAFTS)
    k = int_param(4, 1, 8)
    seed = int_param(7, 0, 2**32 - 1)
    t = float_param(1.0, 0.0, 2.0)
    round = int_param(0, 0, MAX_ROUNDS)


FORM = BlockForm()
