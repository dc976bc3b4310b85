"""The roofline lesson's settings, named once: key (also the URL name), default, bounds or options."""

from __future__ import annotations

from dataclasses import dataclass

from pages.common.form import Form
from pages.common.urlstate import Param, choice_param, float_param, int_param
from specdec_core.course.roofline import MODELS, PRECISIONS

#: "this" is the machine the app runs on, offered once its profile has been measured.
HARDWARE = ("this", "laptop", "a100", "h100")
BATCHES = tuple(2**i for i in range(11))
CONTEXTS = (256, 1024, 4096, 16384, 32768, 65536, 131072)
MAX_GAMMA = 8


def _steps(key: str, default: int, steps: tuple[int, ...]) -> Param:
    """A select slider over `steps` (a link's value must be one of them)."""

    def parse(raw: str) -> int:
        value = int(raw)
        if value not in steps:
            raise ValueError(raw)
        return value

    return Param(key, default, parse, str, options=steps)


@dataclass(frozen=True)
class RooflineForm(Form):
    """Hardware, target and draft sizes, precision, batch, context, γ and α."""

    hardware: Param
    target: Param
    draft: Param
    precision: Param
    batch: Param
    context: Param
    gamma: Param
    alpha: Param


FORM = RooflineForm(
    hardware=choice_param("roof_hw", "h100", HARDWARE),
    target=choice_param("roof_target", "llama_8b", tuple(MODELS)),
    draft=choice_param("roof_draft", "llama_1b", tuple(MODELS)),
    precision=choice_param("roof_precision", "bf16", tuple(PRECISIONS)),
    batch=_steps("roof_batch", 1, BATCHES),
    context=_steps("roof_context", 4096, CONTEXTS),
    gamma=int_param("roof_gamma", 4, 1, MAX_GAMMA),
    alpha=float_param("roof_alpha", 0.8, 0.0, 0.99),
)
