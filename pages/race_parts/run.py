"""The draft race's run: every chosen draft on one prompt, after one target-only run.

Start hands a :class:`~specdec_core.live.race_job.RaceJob` built from the controls to the run
service; :func:`show_progress` draws a running race's bar; finished races (and a stopped one's
finished runs) are kept per task under ``RESULTS_KEY``.
"""

from __future__ import annotations

import streamlit as st

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import Strings, strings
from pages.common.model_form import (
    DecodingForm,
    chat_on,
    decoding_values,
    draft_label,
    layer_bound,
    preset_text,
    target_spec,
)
from pages.common.models import access, shelf
from pages.common.service_run import show_status
from pages.common.urlstate import bool_param, choice_param, int_param, keys_param, text_param
from specdec_core.live.limits import MAX_PROMPT_CHARS, MAX_RACE_NEW_TOKENS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import DraftSpec, draft_kinds, targets
from specdec_core.live.presets import PRESETS
from specdec_core.live.race import (
    BASELINE,
    TREE_SUFFIX,
    RaceResult,
    RaceSettings,
    key_depth,
    race_entries,
    race_task,
)
from specdec_core.live.race_job import RaceJob, RaceProgress, RaceRequest
from specdec_core.live.run_service import Snapshot
from specdec_core.models import catalog

RESULTS_KEY = "race_results"
LAST_KEY = "_race_last"


class RaceForm(Form):
    """Every setting of the race, named once (the targets and drafts are the catalog's when the
    form is built; the drafts default to None, chosen by the page for the target)."""

    prefix = "race"
    target = choice_param(catalog.default_target("race"), targets)
    target_src = text_param("", MAX_SOURCE_CHARS)
    drafts = keys_param(None, draft_kinds)
    depths = text_param("10, 20, 27", 100)
    draft_src = text_param("", MAX_SOURCE_CHARS)
    preset = choice_param("copy", PRESETS)
    chat = bool_param(True)
    prompt = text_param(None, MAX_PROMPT_CHARS)
    decoding = DecodingForm
    seed = int_param(0, 0, 2**31 - 1)
    max = int_param(40, 4, MAX_RACE_NEW_TOKENS)
    repeats = int_param(1, 1, 5)


def entries(f: RaceForm) -> list[tuple[str, DraftSpec]]:
    """The chosen drafts as (race key, spec); a bad depth list or a layer-skip deeper than the
    target is refused (ValueError with the page's message) before any model loads."""
    s, v = strings("race"), form.value
    try:
        chosen = race_entries(v(f.drafts) or [], v(f.depths), v(f.draft_src))
    except ValueError:  # only the depths can be wrong
        raise ValueError(s("bad_depths", raw=v(f.depths))) from None
    layers = layer_bound(f)
    deepest = max((d.k for _, d in chosen), default=0)  # k is 0 for a draft without a depth
    if layers is not None and deepest > layers:
        raise ValueError(s("too_deep", k=deepest, n=layers))
    return chosen


def name(s: Strings, key: str, tree: tuple[int, ...] = ()) -> str:
    """A run's name in `s` (race.toml): the baseline, a draft, a layer-skip depth or a tree."""
    if key == BASELINE:
        return s["baseline"]
    if key.endswith(TREE_SUFFIX):
        shape = "-".join(str(b) for b in tree)
        return s("tree_name", draft=name(s, key.removesuffix(TREE_SUFFIX)), shape=shape)
    depth = key_depth(key)
    return draft_label(key, s, "short") if depth is None else s("layerskip_name", k=depth)


def race_request(f: RaceForm) -> RaceRequest:
    """The race the controls describe, its runs named in the page's language; a bad depth list,
    a layer-skip deeper than the target or no draft is refused (ValueError, the page's message)."""
    s, v = strings("race"), form.value
    chosen = entries(f)
    if not chosen:
        raise ValueError(s["no_drafts"])
    settings = RaceSettings(
        **decoding_values(f.decoding),
        seed=int(v(f.seed)),
        max_new_tokens=int(v(f.max)),
        repeats=int(v(f.repeats)),
    )
    keys = [BASELINE, *(k for k, _ in chosen), *(k + TREE_SUFFIX for k, _ in chosen)]
    prompt: str = v(f.prompt)
    return RaceRequest(
        target=target_spec(f),
        entries=tuple(chosen),
        prompt=prompt,
        chat=chat_on(f),
        settings=settings,
        task=race_task(prompt, v(f.preset), preset_text(f)),
        names={k: name(s, k, settings.tree) for k in keys},
    )


def race_job(f: RaceForm) -> RaceJob:
    """The job Start hands to the run service."""
    return RaceJob(race_request(f), shelf(), access())


def show_progress(snap: Snapshot) -> None:
    """A running race's model load, or the run going with its share done."""
    s, p = strings("race"), snap.progress
    show_status(snap)
    if isinstance(p, RaceProgress) and p.key is not None:
        st.progress(p.share, text=s("progress", name=p.name, n=p.produced))
    else:
        st.progress(0.0)


def keep(value: RaceResult) -> None:
    """Show `value` from now on (kept per task)."""
    st.session_state.setdefault(RESULTS_KEY, {})[value.task] = value
    st.session_state[LAST_KEY] = value.task
