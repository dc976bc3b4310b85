"""How long the Compare page's grid should take, and where its results and questions are kept.

A press on "Run the grid" hands the grid (pages/common/compare_form.py) to the run service
(pages/compare_parts/watch.py); its runs go through the class's shared cache, so a class
pressing Run on the same grid runs it once.
"""

from __future__ import annotations

from pages.common.i18n import strings
from pages.common.models import classroom, shelf
from specdec_core.live.classroom import FIRST_GUESS_S_PER_TOKEN
from specdec_core.live.compare import GridSpec
from specdec_core.live.compare_run import missing_models, paces
from specdec_core.viz.escape import md

RESULT_KEY = "_cmp_result"  # a GridResult
SAMPLE_KEY = "_cmp_sample"  # the Spec-Bench questions the grid runs (a QuestionSample), if any


def estimate(spec: GridSpec) -> str:
    """How long `spec` should take here, where the pace comes from, and which models must load."""
    s = strings("compare")
    pace = paces(spec, classroom(), shelf(), FIRST_GUESS_S_PER_TOKEN)
    minutes = spec.estimate_s({t: p for t, (p, _) in pace.items()}) / 60
    sources = ", ".join(s(f"pace.{src}", target=md(t), ms=1000 * p) for t, (p, src) in pace.items())
    line = s("estimate", runs=spec.runs, tokens=spec.settings.max_new_tokens, minutes=minutes, pace=sources)
    missing = missing_models(spec, shelf())
    return line + (s("must_load", models=md(", ".join(missing))) if missing else "")
