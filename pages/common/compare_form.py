"""The Compare page's settings, named once, and the grid they describe (the page reads them; so
does the teacher's warm-up, from the teaching route's link).

:class:`CompareForm` gives every setting (key ``cmp_*``, also its URL name; default; bounds or
options); :func:`grid_spec` reads it back as a :class:`~specdec_core.live.compare.GridSpec`, and
:func:`grid_problem` says, in the page's language, why a grid cannot run here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import strings
from pages.common.models import access
from pages.common.urlstate import (
    Param,
    bool_param,
    choice_param,
    float_param,
    int_param,
    keys_param,
    text_param,
)
from specdec_core.live.compare import (
    CATEGORIES,
    DEFAULT_DRAFTS,
    DEFAULT_TARGETS,
    DRAFT_KEYS,
    MAX_PER_CATEGORY,
    GridError,
    GridSpec,
    target_keys,
)
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.spec_bench import QuestionSample
from specdec_core.viz.compare import METRICS

#: The projection's c: "own" is each draft's own cost from its weights; the rest override it for every draft.
C_CHOICES = ("own", "0.01", "0.05", "0.1", "0.25")


@dataclass(frozen=True)
class CompareForm(Form):
    """Every setting of the Compare page, named once."""

    targets: Param
    source: Param
    drafts: Param
    cats: Param
    n: Param
    qseed: Param
    gamma: Param
    adaptive: Param
    temp: Param
    max: Param
    metric: Param
    c: Param


def compare_form() -> CompareForm:
    """The page's settings, built per script run (the targets are the registry's now)."""
    return CompareForm(
        targets=keys_param("cmp_targets", DEFAULT_TARGETS, target_keys()),
        source=text_param("cmp_source", "", MAX_SOURCE_CHARS),
        drafts=keys_param("cmp_drafts", DEFAULT_DRAFTS, DRAFT_KEYS),
        cats=keys_param("cmp_cats", CATEGORIES[:6], CATEGORIES),
        n=int_param("cmp_n", 1, 1, MAX_PER_CATEGORY),
        qseed=int_param("cmp_qseed", 0, 0, 1_000_000),
        gamma=int_param("cmp_gamma", 4, 1, 16),
        adaptive=bool_param("cmp_adaptive", False),
        temp=float_param("cmp_temp", 0.0, 0.0, 2.0),
        max=int_param("cmp_max", 32, 8, 128),
        metric=choice_param("cmp_metric", "tau", METRICS),
        c=choice_param("cmp_c", "own", C_CHOICES),
    )


def offered_targets(f: CompareForm) -> tuple[str, ...]:
    """The grid's targets this server offers (in classroom mode the teacher's preloaded ones);
    a chosen target it does not offer is dropped (the first offered stands in when none is left)."""
    offered = tuple(k for k in f.targets.options if k in access().targets)
    now = list(st.session_state.get(f.targets.key, ()))
    chosen = [k for k in now if k in offered]
    if chosen != now:
        st.session_state[f.targets.key] = chosen or list(offered[:1])
    return offered


def grid_spec(
    f: CompareForm, read: Callable[[Param], Any] = form.value, picked: QuestionSample | None = None
) -> GridSpec:
    """The grid the controls describe (not checked; `read`: a control's value, by default the
    session's), running the Spec-Bench questions `picked` where given."""
    v = read
    return GridSpec(
        targets=tuple(v(f.targets)),
        drafts=tuple(v(f.drafts)),
        categories=tuple(v(f.cats)),
        per_category=int(v(f.n)),
        settings=DecodeSettings(
            gamma=int(v(f.gamma)),
            adaptive=bool(v(f.adaptive)),
            temperature=float(v(f.temp)),
            max_new_tokens=int(v(f.max)),
        ),
        custom_source=v(f.source),
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
