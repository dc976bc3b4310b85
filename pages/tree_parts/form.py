"""The probability tree lesson's settings, named once: key (also the URL name), default, bounds
or options; the pair's come from :class:`~pages.common.pair_input.PairInput`."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.pair_input import PairForm, PairInput
from pages.common.urlstate import int_param

PAIR = PairInput("tree", random_size=30)
MAX_TOP_N = 8  # beyond 8 shown tokens (+ other) the tree stops being readable


class TreeForm(Form):
    """The pair, how many of its tokens the tree shows, and the sampling seed."""

    prefix = PAIR.prefix
    pair = PairForm
    top_n = int_param(6, 1, MAX_TOP_N)
    seed = int_param(0, 0, 999_999)


FORM = TreeForm()
