"""The overlap lesson's settings, named once: key (also the URL name), default, bounds, options
or steps. The pair's come from :class:`~pages.common.pair_input.PairInput`; the broken
variants' and the Monte Carlo's are mirrored by their own sections."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.pair_input import PairForm, PairInput
from pages.common.urlstate import choice_param, int_param, steps_param, temperature_param
from specdec_core.course import overlap as one_step
from specdec_core.course.sampling_lab import temperature_scale

PAIR = PairInput("ov", random_size=20)
BROKEN = ("resample_from_p", "argmax_match", "draft_mismatch")
LAWS = ("exact", *BROKEN)
TRIALS = (100, 1_000, 10_000, 100_000, 1_000_000)
TEMPERATURES = temperature_scale(-2, 2)


class BrokenForm(Form):
    """The temperature of the α(T) figure, the broken variant shown and what the draft samples."""

    t = temperature_param(1.0, TEMPERATURES, key="ov_T")
    variant = choice_param("resample_from_p", BROKEN)
    draft = choice_param("greedy", tuple(one_step.DRAFT_LAWS))


class MonteCarloForm(Form):
    """The Monte Carlo's trials, seed and rule (its own fragment mirrors them)."""

    n = steps_param(10_000, TRIALS)
    seed = int_param(0, 0, 9999, key="ov_mc_seed")
    law = choice_param("exact", LAWS, key="ov_mc_law")


class OverlapForm(Form):
    prefix = PAIR.prefix
    pair = PairForm
    broken = BrokenForm
    mc = MonteCarloForm


FORM = OverlapForm()
