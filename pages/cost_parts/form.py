"""The cost lesson's settings, named once: key (also the URL name), default, bounds or options.

The measured-draft picker (``cost_preset``) is not among them: it only loads α, c and the
verification cost, which the link carries themselves. β's default is the β of this machine's
profile (else the memory-bound reference's), which the page reads at each run and hands in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pages.common.form import Form
from pages.common.profile import MAX_GAMMA
from pages.common.urlstate import Param, choice_param, float_param, int_param

#: The bounds of β's slider, and its step (the default snaps to it, so the figures use the β
#: the slider shows).
BETA_LO, BETA_HI, BETA_STEP = 0.0, 0.5, 0.005


@dataclass(frozen=True)
class CostForm(Form):
    """α, γ, c, the verification cost model and its β."""

    alpha: Param
    gamma: Param
    c: Param
    verify: Param
    beta: Param


#: The settings, β's default the memory-bound reference's (a verification costs one step): the
#: page runs :func:`cost_form` with its profile's β.
FORM = CostForm(
    alpha=float_param("cost_alpha", 0.8, 0.0, 1.0),
    gamma=int_param("cost_gamma", 4, 1, MAX_GAMMA),
    c=float_param("cost_c", 0.05, 0.0, 1.0),
    verify=choice_param("cost_verify", "constant", ("constant", "linear")),
    beta=float_param("cost_beta", 0.0, BETA_LO, BETA_HI),
)


def cost_form(beta: float) -> CostForm:
    """:data:`FORM` with β's default `beta` (the linear model 1 + β·γ through the profile's
    5-token verification), kept within the slider's bounds and on its steps."""
    default = round(round(min(max(beta, BETA_LO), BETA_HI) / BETA_STEP) * BETA_STEP, 3)
    return replace(FORM, beta=float_param("cost_beta", default, BETA_LO, BETA_HI))
