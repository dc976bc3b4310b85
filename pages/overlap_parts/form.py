"""The overlap lesson's settings, named once: key (also the URL name), default, bounds, options
or steps. The pair's come from :class:`~pages.common.pair_input.PairInput`; the broken
variants' and the Monte Carlo's are mirrored by their own sections."""

from __future__ import annotations

from dataclasses import dataclass

from pages.common.form import Form
from pages.common.pair_input import PairForm, PairInput
from pages.common.urlstate import Param, choice_param, int_param, temperature_param
from specdec_core.course import overlap as one_step
from specdec_core.course.sampling_lab import temperature_scale

PAIR = PairInput("ov", random_size=20)
BROKEN = ("resample_from_p", "argmax_match", "draft_mismatch")
LAWS = ("exact", *BROKEN)
TRIALS = (100, 1_000, 10_000, 100_000, 1_000_000)
TEMPERATURES = temperature_scale(-2, 2)


def _trials(raw: str) -> int:
    value = int(raw)
    if value not in TRIALS:
        raise ValueError(raw)
    return value


@dataclass(frozen=True)
class BrokenForm(Form):
    """The temperature of the α(T) figure, the broken variant shown and what the draft samples."""

    t: Param
    variant: Param
    draft: Param


@dataclass(frozen=True)
class MonteCarloForm(Form):
    """The Monte Carlo's trials, seed and rule (its own fragment mirrors them)."""

    n: Param
    seed: Param
    law: Param


@dataclass(frozen=True)
class OverlapForm(Form):
    pair: PairForm
    broken: BrokenForm
    mc: MonteCarloForm


FORM = OverlapForm(
    pair=PAIR.form,
    broken=BrokenForm(
        t=temperature_param("ov_T", 1.0, TEMPERATURES),
        variant=choice_param("ov_variant", "resample_from_p", BROKEN),
        draft=choice_param("ov_draft", "greedy", tuple(one_step.DRAFT_LAWS)),
    ),
    mc=MonteCarloForm(
        n=Param("ov_n", 10_000, _trials, options=TRIALS),
        seed=int_param("ov_mc_seed", 0, 0, 9999),
        law=choice_param("ov_mc_law", "exact", LAWS),
    ),
)
