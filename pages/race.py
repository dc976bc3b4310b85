"""Draft race, "three apprentices": several drafts on one prompt, against one target-only run.

Controls → "Run the race" hands a ``RaceJob`` (race_parts/run.py) to the run service: models
loaded once per process, ``specdec_core.live.race.Race`` run in the service's worker and its
progress read while it goes, a ``RaceResult`` kept per prompt in session state → table, bars, each draft on
its own theory curve, and the best draft per task once several prompts have run
(race_parts/view.py).
"""

from __future__ import annotations

import streamlit as st

from pages.common import form
from pages.common import profile as shown
from pages.common.i18n import strings
from pages.common.model_form import (
    decoding_controls,
    draft_label,
    follow_preset,
    layer_bound,
    set_prompt,
    source_input,
    target_choices,
    target_label,
)
from pages.common.models import access, loaded_models_panel
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.service_run import ServiceRun
from pages.common.urlstate import mirror
from pages.race_parts.run import LAST_KEY, RESULTS_KEY, RaceForm, keep, race_job, show_progress
from pages.race_parts.view import by_task, show
from specdec_core.live.access import drafts
from specdec_core.live.limits import MAX_PROMPT_CHARS, MAX_RACE_NEW_TOKENS
from specdec_core.live.profile_quotes import course_costs
from specdec_core.live.race import RaceResult, race_choices
from specdec_core.models import catalog

f = RaceForm()
s, text = start("race", params=f.params())
ls = strings("live")  # labels shared with the live page


def _choices() -> tuple[str, ...]:
    target = form.value(f.target)
    return race_choices(drafts(access(), target), target)  # per target; a typed one only if offered


def _target_changed() -> None:
    st.session_state[f.drafts.key] = list(_choices()[:3])
    set_prompt(f)


offered = target_choices(f)
if form.value(f.drafts) is None or not set(form.value(f.drafts)) <= set(_choices()):
    st.session_state[f.drafts.key] = list(_choices()[:3])
follow_preset(f)


#: The drafts' costs the text quotes: this machine's profile, else the memory-bound reference.
VALUES = shown.course_values(s, course_costs())
text.show("intro", values=VALUES)

with st.container(border=True):
    st.markdown(f"**{s['controls']}**")
    c1, c2, c3 = st.columns([1.1, 1.6, 1])
    target_kind = form.select(
        c1,
        f.target,
        s["target"],
        offered,
        format_func=lambda k: target_label(k, ls),
        on_change=_target_changed,
    )
    if catalog.about(target_kind).needs_source:
        source_input(c1, f.target_src.key, s["source"], ls["source_help"])
    chosen = form.multi(
        c2,
        f.drafts,
        s["drafts_label"],
        _choices(),
        format_func=lambda k: draft_label(k, s, "short"),
        help=s["drafts_help"],
    )
    if any(catalog.draft(k).depth for k in chosen):
        layers = layer_bound(f)
        depths_help = s["depths_help"] + ("" if layers is None else " " + s("depths_bound", n=layers))
        form.text(c2, f.depths, s["depths"], help=depths_help)
    if any(catalog.draft(k).source for k in chosen):
        source_input(c2, f.draft_src.key, s["draft_source"], ls["source_help"])
    c3.radio(
        s["preset"],
        f.preset.options,
        format_func=lambda k: ls[f"presets.{k}"],
        key=f.preset.key,
        on_change=set_prompt,
        args=(f,),
    )
    form.toggle(c3, f.chat, ls["chat"], disabled=not catalog.about(target_kind).chat)
    st.text_area(s["prompt"], key=f.prompt.key, height=110, help=ls("prompt_help", limit=MAX_PROMPT_CHARS))
    g1, g2, g3, g4 = st.columns(4)
    decoding_controls(g1, g2, f.decoding)
    form.number(g3, f.seed, ls["seed"], step=1)
    form.slider(g4, f.max, ls["max_new"], help=ls("max_new_help", limit=MAX_RACE_NEW_TOKENS))
    form.number(g4, f.repeats, s["repeats"], step=1, help=s["repeats_help"])
    loaded_models_panel()
mirror(f.params())


ServiceRun("race", lambda: race_job(f), show_progress, keep).panel(
    s["run"], "race_run", ":material/sports_score:"
)

results: dict[str, RaceResult] = st.session_state.get(RESULTS_KEY, {})
last_task = st.session_state.get(LAST_KEY)
if last_task in results:
    show(results[last_task])
    by_task(results)
else:
    st.info(s["press_run"])
text.show("apprentices", values=VALUES)
quiz(s)
