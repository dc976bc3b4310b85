"""The tree drafts lesson's settings, named once: key (also the URL name), default, bounds or
options."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.urlstate import bool_param, choice_param, float_param, int_param
from specdec_core.course.block import CHAINS, DRAFTS

MAX_ROUNDS = 200
SHAPES = ("2-2", "3-1", "2-1-1", "2-2-1", "3-2", "1-1-1-1")


class TreeDraftsForm(Form):
    """The stepped demo (chain, draft, shape, seed, temperature, rounds so far), the shapes'
    node budget, and one position's candidates (how many, with replacement or not)."""

    prefix = "trd"
    chain = choice_param("story", CHAINS)
    draft = choice_param("poor", DRAFTS)
    shape = choice_param("2-2", SHAPES)
    seed = int_param(7, 0, 2**32 - 1)
    t = float_param(1.0, 0.0, 2.0)
    round = int_param(0, 0, MAX_ROUNDS)
    budget = int_param(6, 2, 10)
    k = int_param(2, 1, 3)
    repl = bool_param(False)


FORM = TreeDraftsForm()
