"""The cost lesson's settings, named once: key (also the URL name), default, bounds or options.

The measured-draft picker (``cost_preset``) is not among them: it only loads α, c and the
verification cost, which the link carries themselves. β's default is the β of this machine's
profile (else the memory-bound reference's), which the page hands in when it builds the form
(``CostForm(beta=…)``, snapped to the slider's step so the figures use the β the slider shows).
"""

from __future__ import annotations

from pages.common.form import Form
from pages.common.profile import MAX_GAMMA
from pages.common.urlstate import choice_param, float_param, int_param


class CostForm(Form):
    """α, γ, c, the verification cost model and its β (by default the memory-bound
    reference's: a verification costs one step)."""

    prefix = "cost"
    alpha = float_param(0.8, 0.0, 1.0)
    gamma = int_param(4, 1, MAX_GAMMA)
    c = float_param(0.05, 0.0, 1.0)
    verify = choice_param("constant", ("constant", "linear"))
    beta = float_param(0.0, 0.0, 0.5, step=0.005)
