"""The grid the Compare page's controls describe, why it cannot run, and how long it should take.

A press on "Run the grid" hands this grid to the run service (pages/compare_parts/watch.py); its
runs go through the class's shared cache, so a class pressing Run on the same grid runs it once.
"""

from __future__ import annotations

import streamlit as st

from pages.common.i18n import strings
from pages.common.models import access, classroom, shelf
from specdec_core.live.classroom import FIRST_GUESS_S_PER_TOKEN
from specdec_core.live.compare import GridError, GridSpec
from specdec_core.live.compare_run import missing_models, paces
from specdec_core.live.settings import DecodeSettings
from specdec_core.viz.escape import md

RESULT_KEY = "_cmp_result"  # a GridResult
SAMPLE_KEY = "_cmp_sample"  # the Spec-Bench questions the grid runs (a QuestionSample), if any


def grid_spec() -> GridSpec:
    """The grid the controls describe (not checked), with the Spec-Bench questions loaded."""
    ss = st.session_state
    picked = ss.get(SAMPLE_KEY)
    return GridSpec(
        targets=tuple(ss["cmp_targets"]),
        drafts=tuple(ss["cmp_drafts"]),
        categories=tuple(ss["cmp_cats"]),
        per_category=int(ss["cmp_n"]),
        settings=DecodeSettings(
            gamma=int(ss["cmp_gamma"]),
            adaptive=bool(ss["cmp_adaptive"]),
            temperature=float(ss["cmp_temp"]),
            max_new_tokens=int(ss["cmp_max"]),
        ),
        custom_source=ss["cmp_source"],
        own_prompts=picked.own_prompts if picked else (),
        questions=picked.questions if picked else (),
    )


def grid_problem(spec: GridSpec) -> str | None:
    """Why `spec` cannot run here, in the page's language; None when it can."""
    s = strings("compare")
    try:
        spec.check()
        spec.check_size(access().max_grid_runs)
    except GridError as exc:
        if exc.code == "too_big":
            return s("too_big", limit=access().max_grid_runs, runs=spec.runs)
        return s[exc.code]
    return None


def estimate(spec: GridSpec) -> str:
    """How long `spec` should take here, where the pace comes from, and which models must load."""
    s = strings("compare")
    pace = paces(spec, classroom(), shelf(), FIRST_GUESS_S_PER_TOKEN)
    minutes = spec.estimate_s({t: p for t, (p, _) in pace.items()}) / 60
    sources = ", ".join(s(f"pace.{src}", target=md(t), ms=1000 * p) for t, (p, src) in pace.items())
    line = s("estimate", runs=spec.runs, tokens=spec.settings.max_new_tokens, minutes=minutes, pace=sources)
    missing = missing_models(spec, shelf())
    return line + (s("must_load", models=md(", ".join(missing))) if missing else "")
