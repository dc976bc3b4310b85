"""The grid a press on "Run the grid" starts (a :class:`~pages.common.jobs.Run`), as the controls say.

Its models come through the page's shelf (progress bars, the classroom's rules) and its runs go
through the class's shared cache, so a class pressing Run on the same grid runs it once.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages.common.i18n import strings
from pages.common.models import access, classroom, get_draft, get_target, shelf, wait_notice
from pages.common.stop import stop_if_pressed
from specdec_core.live.classroom import FIRST_GUESS_S_PER_TOKEN
from specdec_core.live.compare import GridError, GridResult, GridSpec
from specdec_core.live.compare_run import GridRun, draft_spec, missing_models, paces, target_spec
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


class PageModels:
    """The grid's models through the page's shelf."""

    def __init__(self, custom_source: str) -> None:
        self.custom_source = custom_source

    def target(self, key: str) -> Any:
        return get_target(target_spec(key, self.custom_source))

    def draft(self, target_key: str, key: str, target: Any) -> Any:
        return get_draft(target_spec(target_key, self.custom_source), target, draft_spec(key)[0])


class CompareRun:
    """One grid, run cell by cell with a progress bar; Stop keeps the runs that finished."""

    def __init__(self) -> None:
        self.spec = grid_spec()
        self.strings = strings("compare")  # read now: result() makes no Streamlit call
        self.grid: GridRun | None = None

    def prepare(self) -> None:
        """Check the grid (empty selections, the classroom's cap)."""
        problem = grid_problem(self.spec)
        if problem is not None:
            raise ValueError(problem)

    def stream(self) -> None:
        """Run every prompt target-only and with each draft, a progress bar per run."""
        s = self.strings
        status = st.empty()
        bar = st.progress(0.0)
        self.grid = GridRun(self.spec, PageModels(self.spec.custom_source), classroom(), wait_notice(status))
        names = s["category_names"]
        for step in self.grid:
            stop_if_pressed()
            label = s("progress", done=step.done, total=step.total, target=step.target, draft=step.draft,
                      category=names[step.category])  # fmt: skip
            bar.progress(step.done / step.total, text=md(label + (s["replayed"] if step.replayed else "")))

    def result(self, finished: bool) -> GridResult | None:
        """What ran so far (the grid and its finished runs), or None when nothing finished."""
        if self.grid is None or not self.grid.measured:
            return None
        return GridResult(self.spec, tuple(self.grid.measured), finished, dict(self.grid.skipped))

    def keep(self, value: Any) -> None:
        st.session_state[RESULT_KEY] = value
