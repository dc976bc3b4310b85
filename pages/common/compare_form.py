"""The Compare page's settings, named once, and the grid they describe (the page reads them; so
does the teacher's warm-up, from the teaching route's link).

:class:`CompareForm` gives every setting (key ``cmp_*``, also its URL name; default; bounds or
options); :func:`grid_spec` reads it back as a :class:`~specdec_core.live.compare.GridSpec`, and
:func:`grid_problem` says, in the page's language, why a grid cannot run here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

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
    MAX_PER_CATEGORY,
    GridError,
    GridSpec,
    default_drafts,
    default_targets,
    draft_keys,
    target_keys,
)
from specdec_core.live.limits import MAX_SOURCE_CHARS
from specdec_core.live.settings import DecodeSettings
from specdec_core.live.spec_bench import QuestionSample
from specdec_core.viz.compare import METRICS

#: The projection's c: "own" is each draft's own cost from its weights; the rest override it for every draft.
C_CHOICES = ("own", "0.01", "0.05", "0.1", "0.25")


class CompareForm(Form):
    """Every setting of the Compare page, named once (the targets and drafts, and the default
    grid's, are the catalog's when the form is built)."""

    prefix = "cmp"
    targets = keys_param(lambda: list(default_targets()), target_keys)
    source = text_param("", MAX_SOURCE_CHARS)
    drafts = keys_param(lambda: list(default_drafts()), draft_keys)
    cats = keys_param(CATEGORIES[:6], CATEGORIES)
    n = int_param(1, 1, MAX_PER_CATEGORY)
    qseed = int_param(0, 0, 1_000_000)
    gamma = int_param(4, 1, 16)
    adaptive = bool_param(False)
    temp = float_param(0.0, 0.0, 2.0)
    max = int_param(32, 8, 128)
    metric = choice_param("tau", METRICS)
    c = choice_param("own", C_CHOICES)


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
    f: CompareForm, read: Callable[[Param], Any] | None = None, picked: QuestionSample | None = None
) -> GridSpec:
    """The grid the controls describe (not checked; `read`: a control's value, by default the
    session's), running the Spec-Bench questions `picked` where given."""
    v = f.read(read)
    return GridSpec(
        targets=tuple(v.targets),
        drafts=tuple(v.drafts),
        categories=tuple(v.cats),
        per_category=int(v.n),
        settings=DecodeSettings(
            gamma=int(v.gamma),
            adaptive=bool(v.adaptive),
            temperature=float(v.temp),
            max_new_tokens=int(v.max),
        ),
        custom_source=v.source,
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
