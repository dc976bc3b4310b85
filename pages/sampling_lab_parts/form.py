"""The sampling lab's settings, named once: key (also the URL name), default, bounds, options or
steps. The example (:data:`SOURCE`) is restored first: the logits' default is the example it
names, so the rest (:class:`LabForm`, given those logits) is built after it."""

from __future__ import annotations

import itertools

from pages.common.form import Form
from pages.common.urlstate import Param, bool_param, choice_param, float_param, int_param, temperature_param
from specdec_core.course.sampling_lab import (
    Rows,
    examples,
    rows_from_url,
    rows_to_url,
    temperature_scale,
)
from specdec_core.live.limits import MAX_LOGIT_ROWS, MIN_LOGIT_ROWS
from specdec_core.sampling import TRANSFORMS

PRESETS = (*examples()["presets"], "random")
TEMPERATURES = temperature_scale(-4, 1)
MIN_TOKENS, MAX_TOKENS = MIN_LOGIT_ROWS, MAX_LOGIT_ROWS
#: Every order of the transforms, by URL code: t = temperature, k = top-k, p = top-p.
CODES = {"temperature": "t", "top_k": "k", "top_p": "p"}
ORDERS = {"".join(CODES[n] for n in order): order for order in itertools.permutations(TRANSFORMS)}


def parse_table(raw: str) -> Rows:
    return rows_from_url(raw, MIN_TOKENS, MAX_TOKENS)


class SourceForm(Form):
    """The example: its name, and the random one's seed and size."""

    preset = choice_param("peaked", PRESETS)
    seed = int_param(0, 0, 9999)
    size = int_param(6, MIN_TOKENS, MAX_TOKENS)


class SettingsForm(Form):
    """The logits (by default the example :data:`SOURCE` names: built with ``logits=``), and
    the sampling settings applied to them."""

    logits = Param((), parse_table, rows_to_url)
    t0 = bool_param(False, key="T0")
    t = temperature_param(1.0, TEMPERATURES, key="T")
    k = int_param(0, 0, MAX_TOKENS)
    p = float_param(1.0, 0.01, 1.0)
    min_keep = int_param(1, 1, MAX_TOKENS)
    order = choice_param("tkp", tuple(ORDERS))

    def sampling(self) -> list[Param]:
        """The sampling settings (all but the logits): what an experiment sets."""
        return [self.t0, self.t, self.k, self.p, self.min_keep, self.order]


class LabForm(Form):
    source = SourceForm
    settings = SettingsForm


SOURCE = SourceForm()
