"""The cost lesson's settings, named once: key (also the URL name), default, bounds or options.

The measured-draft picker (``cost_preset``) is not among them: it only loads α, c and the
verification cost, which the link carries themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from pages.common.form import Form
from pages.common.profile import MAX_GAMMA
from pages.common.urlstate import Param, choice_param, float_param, int_param
from specdec_core.course.cost import cost_data

#: The linear model 1 + β·γ through this machine's measured point (specdec_core.course.cost).
MEASURED_BETA = cost_data().measured_beta


@dataclass(frozen=True)
class CostForm(Form):
    """α, γ, c, the verification cost model and its β."""

    alpha: Param
    gamma: Param
    c: Param
    verify: Param
    beta: Param


FORM = CostForm(
    alpha=float_param("cost_alpha", 0.8, 0.0, 1.0),
    gamma=int_param("cost_gamma", 4, 1, MAX_GAMMA),
    c=float_param("cost_c", 0.05, 0.0, 1.0),
    verify=choice_param("cost_verify", "constant", ("constant", "linear")),
    beta=float_param("cost_beta", MEASURED_BETA, 0.0, 0.5),
)
