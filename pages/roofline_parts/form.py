"""The roofline lesson's settings, named once: key (also the URL name), default, bounds or options."""

from __future__ import annotations

from pages.common.form import Form
from pages.common.urlstate import choice_param, float_param, int_param, steps_param
from specdec_core.course.roofline import MODELS, PRECISIONS

#: "this" is the machine the app runs on, offered once its profile has been measured.
HARDWARE = ("this", "laptop", "a100", "h100")
BATCHES = tuple(2**i for i in range(11))
CONTEXTS = (256, 1024, 4096, 16384, 32768, 65536, 131072)
MAX_GAMMA = 8


class RooflineForm(Form):
    """Hardware, target and draft sizes, precision, batch, context, γ and α."""

    prefix = "roof"
    hw = choice_param("h100", HARDWARE)
    target = choice_param("llama_8b", tuple(MODELS))
    draft = choice_param("llama_1b", tuple(MODELS))
    precision = choice_param("bf16", tuple(PRECISIONS))
    batch = steps_param(1, BATCHES)
    context = steps_param(4096, CONTEXTS)
    gamma = int_param(4, 1, MAX_GAMMA)
    alpha = float_param(0.8, 0.0, 0.99)


FORM = RooflineForm()
