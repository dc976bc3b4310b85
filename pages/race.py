"""Draft race, "three apprentices": several drafts on one prompt, against one target-only run.

Controls → models (loaded once per process) → ``specdec_core.live.race.Race`` streamed with a
progress bar, as a job that survives Stop (pages/common/jobs.py) → a ``RaceResult`` kept per
prompt in session state → table, bars, each draft on its own theory curve, and the best
draft per task once several prompts have run (pages/common/race_view.py).
"""

from __future__ import annotations

from typing import NoReturn

import streamlit as st

from pages.common.i18n import strings
from pages.common.jobs import WAIT_LIMIT, Job, stop_if_pressed
from pages.common.model_form import (
    chat_on,
    decoding_controls,
    decoding_params,
    decoding_values,
    follow_preset,
    layer_bound,
    preset_text,
    set_prompt,
    source_input,
    target_choices,
    target_spec,
)
from pages.common.models import access, get_draft, get_target, loaded_models_panel, wait_notice
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.race_view import by_task, show
from pages.common.urlstate import bool_param, choice_param, int_param, mirror, restore, text_param
from specdec_core.live.access import drafts
from specdec_core.live.limits import MAX_PROMPT_CHARS, MAX_RACE_NEW_TOKENS, MAX_SOURCE_CHARS
from specdec_core.live.model_choices import HF_DRAFTS, TARGETS, TOY_DRAFTS, DraftSpec
from specdec_core.live.presets import PRESETS
from specdec_core.live.race import (
    BASELINE,
    TREE_SUFFIX,
    Race,
    RaceResult,
    RaceSettings,
    layerskip_depth,
    race_entries,
    race_task,
)
from specdec_core.live.runs import Pacer, encode_prompt

PAINT_EVERY = 0.2
RESULTS_KEY = "race_results"
HF_CHOICES = HF_DRAFTS
TOY_CHOICES = tuple(k for k in TOY_DRAFTS if k != "custom")  # the race offers no custom draft on the toy pair
PARAMS = [
    choice_param("race_target", "bundled", TARGETS),
    text_param("race_target_src", "", MAX_SOURCE_CHARS),
    text_param("race_depths", "10, 20, 27", 100),
    text_param("race_draft_src", "", MAX_SOURCE_CHARS),
    choice_param("race_preset", "copy", PRESETS),
    bool_param("race_chat", True),
    *decoding_params("race"),
    int_param("race_seed", 0, 0, 2**31 - 1),
    int_param("race_max", 40, 4, MAX_RACE_NEW_TOKENS),
    int_param("race_repeats", 1, 1, 5),
]

s, text = start("race")
ls = strings("live")  # labels shared with the live page
rejected_keys = restore(PARAMS)
if rejected_keys:
    st.warning(s("url_rejected", keys=", ".join(rejected_keys)))
job = Job("race")


def _choices() -> tuple[str, ...]:
    if st.session_state["race_target"] == "toy":
        return TOY_CHOICES
    return tuple(k for k in HF_CHOICES if k in drafts(access(), "bundled"))  # custom: only if offered


def _target_changed() -> None:
    st.session_state["race_drafts"] = list(_choices()[:3])
    set_prompt("race")


targets = target_choices("race")
if "race_drafts" not in st.session_state or not set(st.session_state["race_drafts"]) <= set(_choices()):
    st.session_state["race_drafts"] = list(_choices()[:3])
follow_preset("race")


text.show("intro")

with st.container(border=True):
    st.markdown(f"**{s['controls']}**")
    c1, c2, c3 = st.columns([1.1, 1.6, 1])
    target_kind = c1.selectbox(
        s["target"],
        targets,
        format_func=lambda k: ls[f"targets.{k}"],
        key="race_target",
        on_change=_target_changed,
    )
    if target_kind == "custom":
        source_input(c1, "race_target_src", s["source"], ls["source_help"])
    chosen = c2.multiselect(
        s["drafts_label"],
        _choices(),
        format_func=lambda k: s[f"short.{k}"],
        key="race_drafts",
        help=s["drafts_help"],
    )
    if "layerskip" in chosen:
        layers = layer_bound("race")
        depths_help = s["depths_help"] + ("" if layers is None else " " + s("depths_bound", n=layers))
        c2.text_input(s["depths"], key="race_depths", help=depths_help)
    if "custom" in chosen:
        source_input(c2, "race_draft_src", s["draft_source"], ls["source_help"])
    c3.radio(
        s["preset"],
        PRESETS,
        format_func=lambda k: ls[f"presets.{k}"],
        key="race_preset",
        on_change=set_prompt,
        args=("race",),
    )
    c3.toggle(ls["chat"], key="race_chat", disabled=target_kind == "toy")
    st.text_area(s["prompt"], key="race_prompt", height=110, help=ls("prompt_help", limit=MAX_PROMPT_CHARS))
    g1, g2, g3, g4 = st.columns(4)
    decoding_controls(g1, g2, "race")
    g3.number_input(ls["seed"], min_value=0, max_value=2**31 - 1, step=1, key="race_seed")
    g4.slider(
        ls["max_new"],
        4,
        MAX_RACE_NEW_TOKENS,
        key="race_max",
        help=ls("max_new_help", limit=MAX_RACE_NEW_TOKENS),
    )
    g4.number_input(
        s["repeats"], min_value=1, max_value=5, step=1, key="race_repeats", help=s["repeats_help"]
    )
    loaded_models_panel()
mirror(PARAMS)


def _entries() -> list[tuple[str, DraftSpec]]:
    ss = st.session_state
    try:
        entries = race_entries(ss["race_drafts"], ss["race_depths"], ss["race_draft_src"])
    except ValueError:  # only the depths can be wrong
        raise ValueError(s("bad_depths", raw=ss["race_depths"])) from None
    layers = layer_bound("race")
    deepest = max((d.k for _, d in entries if d.kind == "layerskip"), default=0)
    if layers is not None and deepest > layers:  # refused before any model loads
        raise ValueError(s("too_deep", k=deepest, n=layers))
    return entries


def _name(key: str, tree: tuple[int, ...] = ()) -> str:
    if key == BASELINE:
        return s["baseline"]
    if key.endswith(TREE_SUFFIX):
        shape = "-".join(str(b) for b in tree)
        return s("tree_name", draft=_name(key.removesuffix(TREE_SUFFIX)), shape=shape)
    depth = layerskip_depth(key)
    return s[f"short.{key}"] if depth is None else s("layerskip_name", k=depth)


def _run() -> NoReturn:
    """Load the models, run the race with a progress bar, hand the result over."""
    ss = st.session_state
    settings = RaceSettings(
        **decoding_values("race"),
        seed=int(ss["race_seed"]),
        max_new_tokens=int(ss["race_max"]),
        repeats=int(ss["race_repeats"]),
    )
    spec = target_spec("race")
    with job.preparing():
        entries = _entries()
        if not entries:
            raise ValueError(s["no_drafts"])
        target = get_target(spec)
        drafts = [(key, get_draft(spec, target, draft)) for key, draft in entries]
        ids = encode_prompt(target, ss["race_prompt"], chat_on("race"), settings.max_new_tokens)
    status = st.empty()
    bar = st.progress(0.0)
    race = Race(target, drafts, ids, settings, on_wait=wait_notice(status), timeout=WAIT_LIMIT)
    prompt = ss["race_prompt"]
    task = race_task(prompt, ss["race_preset"], preset_text("race"))
    runs = iter(race)

    def stream() -> None:
        pacer = Pacer(PAINT_EVERY)
        for key, event in runs:
            stop_if_pressed()  # Stop, pressed in the same fragment as this run (Job.panel)
            if pacer.due(event.finished):
                produced = event.position + len(event.committed)
                bar.progress(
                    race.progress(key, produced),
                    text=s("progress", name=_name(key, settings.tree), n=produced),
                )

    def result(finished: bool) -> RaceResult | None:  # no Streamlit call in here (see Job.run)
        runs.close()  # type: ignore[attr-defined]
        if not race.records:
            return None
        names = {k: _name(k, settings.tree) for k in race.keys}
        records = dict(race.records)
        return RaceResult(
            task, prompt, str(target.name), spec.kind, names, settings, records, stopped=not finished
        )

    job.run(stream, result)


def _keep(result: RaceResult) -> None:
    st.session_state.setdefault(RESULTS_KEY, {})[result.task] = result
    st.session_state["_race_last"] = result.task


job.panel(s["run"], "race_run", ":material/sports_score:", _keep, _run, PARAMS)

results: dict[str, RaceResult] = st.session_state.get(RESULTS_KEY, {})
last_task = st.session_state.get("_race_last")
if last_task in results:
    show(results[last_task])
    by_task(results)
else:
    st.info(s["press_run"])
text.show("apprentices")
quiz(s)
