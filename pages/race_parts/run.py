"""The draft race's run: every chosen draft on one prompt, after one target-only run.

Start hands a :class:`~specdec_core.live.race_job.RaceJob` built from the controls to the run
service; :func:`show_progress` draws a running race's bar; finished races (and a stopped one's
finished runs) are kept per task under ``RESULTS_KEY``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from pages.common import form
from pages.common.form import Form
from pages.common.i18n import Strings, strings
from pages.common.model_form import (
    DecodingForm,
    chat_on,
    decoding_form,
    decoding_values,
    layer_bound,
    preset_text,
    target_spec,
)
from pages.common.models import access, shelf
from pages.common.service_run import show_status
from pages.common.urlstate import Param, bool_param, choice_param, int_param, text_param
from specdec_core.live.limits import MAX_RACE_NEW_TOKENS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import DraftSpec, targets
from specdec_core.live.presets import PRESETS
from specdec_core.live.race import (
    BASELINE,
    TREE_SUFFIX,
    RaceResult,
    RaceSettings,
    layerskip_depth,
    race_entries,
    race_task,
)
from specdec_core.live.race_job import RaceJob, RaceProgress, RaceRequest
from specdec_core.live.run_service import Snapshot

RESULTS_KEY = "race_results"
LAST_KEY = "_race_last"


@dataclass(frozen=True)
class RaceForm(Form):
    """Every URL-mirrored setting of the race, named once (the chosen drafts are not in the URL)."""

    target: Param
    target_src: Param
    depths: Param
    draft_src: Param
    preset: Param
    chat: Param
    decoding: DecodingForm
    seed: Param
    max: Param
    repeats: Param


def race_form() -> RaceForm:
    """The race's settings, built per script run (the targets are the registry's now)."""
    return RaceForm(
        target=choice_param("race_target", "bundled", targets()),
        target_src=text_param("race_target_src", "", MAX_SOURCE_CHARS),
        depths=text_param("race_depths", "10, 20, 27", 100),
        draft_src=text_param("race_draft_src", "", MAX_SOURCE_CHARS),
        preset=choice_param("race_preset", "copy", PRESETS),
        chat=bool_param("race_chat", True),
        decoding=decoding_form("race"),
        seed=int_param("race_seed", 0, 0, 2**31 - 1),
        max=int_param("race_max", 40, 4, MAX_RACE_NEW_TOKENS),
        repeats=int_param("race_repeats", 1, 1, 5),
    )


def entries(f: RaceForm) -> list[tuple[str, DraftSpec]]:
    """The chosen drafts as (race key, spec); a bad depth list or a layer-skip deeper than the
    target is refused (ValueError with the page's message) before any model loads."""
    s, v = strings("race"), form.value
    try:
        chosen = race_entries(st.session_state.get("race_drafts", []), v(f.depths), v(f.draft_src))
    except ValueError:  # only the depths can be wrong
        raise ValueError(s("bad_depths", raw=v(f.depths))) from None
    layers = layer_bound("race")
    deepest = max((d.k for _, d in chosen if d.kind == "layerskip"), default=0)
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
    depth = layerskip_depth(key)
    return s[f"short.{key}"] if depth is None else s("layerskip_name", k=depth)


def race_request(f: RaceForm) -> RaceRequest:
    """The race the controls describe, its runs named in the page's language; a bad depth list,
    a layer-skip deeper than the target or no draft is refused (ValueError, the page's message)."""
    ss, s, v = st.session_state, strings("race"), form.value
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
    prompt: str = ss["race_prompt"]
    return RaceRequest(
        target=target_spec("race"),
        entries=tuple(chosen),
        prompt=prompt,
        chat=chat_on("race"),
        settings=settings,
        task=race_task(prompt, v(f.preset), preset_text("race")),
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
