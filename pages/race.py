"""Draft race, "three apprentices": several drafts on one prompt, against one target-only run.

Controls → models (loaded once per process) → ``specdec_core.race.Race`` streamed with a
progress bar → a ``RaceResult`` kept per prompt in session state → table, bars, each draft
on its own theory curve, and the best draft per task once several prompts have run.
"""

from __future__ import annotations

import time
from typing import NoReturn

import pandas as pd
import streamlit as st

from pages.common.i18n import strings
from pages.common.models import get_draft, get_target, wait_notice
from pages.common.page import start
from pages.common.quiz import quiz
from pages.common.urlstate import (
    bool_param,
    choice_param,
    float_param,
    int_param,
    mirror,
    restore,
    text_param,
)
from specdec_core.live_presets import PRESETS, preset_prompt
from specdec_core.live_run import Handoff, PromptError, encode_prompt
from specdec_core.model_choices import TARGETS, DraftSpec, TargetSpec
from specdec_core.models import ModelBusyError
from specdec_core.race import BASELINE, Race, RaceResult, RaceSettings, best, result_json
from specdec_core.viz import race as viz

WAIT_LIMIT = 600.0
PAINT_EVERY = 0.2
RESULTS_KEY = "race_results"
ERROR_KEY = "_race_error"
JOB_KEY = "_race_job"
HF_CHOICES = ("ngram", "bf16", "layerskip", "custom")
TOY_CHOICES = ("toy_draft", "ngram")
PARAMS = [
    choice_param("race_target", "bundled", TARGETS),
    text_param("race_target_src", "", 500),
    text_param("race_depths", "10, 20, 27", 100),
    text_param("race_draft_src", "", 500),
    choice_param("race_preset", "copy", PRESETS),
    bool_param("race_chat", True),
    int_param("race_gamma", 4, 1, 16),
    bool_param("race_adaptive", False),
    float_param("race_t", 0.0, 0.0, 2.0),
    int_param("race_seed", 0, 0, 2**31 - 1),
    int_param("race_max", 40, 4, 256),
    int_param("race_repeats", 1, 1, 5),
]

s, text = start("race")
ls = strings("live")  # labels shared with the live page
lang = s.lang
rejected_keys = restore(PARAMS)
if rejected_keys:
    st.warning(s("url_rejected", keys=", ".join(rejected_keys)))


def _choices() -> tuple[str, ...]:
    return TOY_CHOICES if st.session_state["race_target"] == "toy" else HF_CHOICES


def _preset_text() -> str:
    return preset_prompt(st.session_state["race_preset"], lang, st.session_state["race_target"] == "toy")


def _set_prompt() -> None:
    st.session_state["race_prompt"] = _preset_text()
    st.session_state["_race_prompt_origin"] = st.session_state["race_prompt"]


def _target_changed() -> None:
    st.session_state["race_drafts"] = list(_choices()[:3])
    _set_prompt()


if "race_drafts" not in st.session_state or not set(st.session_state["race_drafts"]) <= set(_choices()):
    st.session_state["race_drafts"] = list(_choices()[:3])
origin = st.session_state.get("_race_prompt_origin")
if "race_prompt" not in st.session_state or (
    st.session_state["race_prompt"] == origin and origin != _preset_text()
):
    _set_prompt()


def _go() -> None:
    st.session_state["_race_go"] = True


def _depths(raw: str) -> list[int]:
    try:
        values = sorted({int(v) for v in raw.replace("，", ",").split(",") if v.strip()})
    except ValueError:
        raise ValueError(s("bad_depths", raw=raw)) from None
    if not values or values[0] < 1:
        raise ValueError(s("bad_depths", raw=raw))
    return values


text.show("intro")

with st.container(border=True):
    st.markdown(f"**{s['controls']}**")
    c1, c2, c3 = st.columns([1.1, 1.6, 1])
    target_kind = c1.selectbox(
        s["target"],
        TARGETS,
        format_func=lambda k: ls[f"targets.{k}"],
        key="race_target",
        on_change=_target_changed,
    )
    if target_kind == "custom":
        c1.text_input(s["source"], key="race_target_src", placeholder=ls["source_placeholder"])
    chosen = c2.multiselect(
        s["drafts_label"],
        _choices(),
        format_func=lambda k: s[f"short.{k}"],
        key="race_drafts",
        help=s["drafts_help"],
    )
    if "layerskip" in chosen:
        c2.text_input(s["depths"], key="race_depths", help=s["depths_help"])
    if "custom" in chosen:
        c2.text_input(s["draft_source"], key="race_draft_src", placeholder=ls["source_placeholder"])
    c3.radio(
        s["preset"],
        PRESETS,
        format_func=lambda k: ls[f"presets.{k}"],
        key="race_preset",
        on_change=_set_prompt,
    )
    c3.toggle(ls["chat"], key="race_chat", disabled=target_kind == "toy")
    st.text_area(s["prompt"], key="race_prompt", height=110)
    g1, g2, g3, g4 = st.columns(4)
    g1.slider(ls["gamma"], 1, 16, key="race_gamma", help=ls["gamma_help"])
    g1.toggle(ls["adaptive"], key="race_adaptive", help=ls["adaptive_help"])
    g2.slider(ls["temperature"], 0.0, 2.0, step=0.05, key="race_t", help=ls["temperature_help"])
    g3.number_input(ls["seed"], min_value=0, max_value=2**31 - 1, step=1, key="race_seed")
    g4.slider(ls["max_new"], 4, 256, key="race_max")
    g4.number_input(
        s["repeats"], min_value=1, max_value=5, step=1, key="race_repeats", help=s["repeats_help"]
    )
    going = bool(st.session_state.get("_race_go"))
    b1, b2, _ = st.columns([1, 1, 3])
    b1.button(
        s["run"],
        type="primary",
        key="race_run",
        on_click=_go,
        width="stretch",
        icon=":material/sports_score:",
    )
    b2.button(ls["stop"], key="race_stop", disabled=not going, width="stretch", icon=":material/stop:")
mirror(PARAMS)


def _entries(target_spec: TargetSpec) -> list[tuple[str, DraftSpec]]:
    ss = st.session_state
    out: list[tuple[str, DraftSpec]] = []
    for kind in ss["race_drafts"]:
        if kind == "layerskip":
            out += [(f"layerskip-{k}", DraftSpec("layerskip", k)) for k in _depths(ss["race_depths"])]
        elif kind == "custom":
            out.append(("custom", DraftSpec("custom", source=ss["race_draft_src"].strip())))
        else:
            out.append((kind, DraftSpec(kind)))
    return out


def _name(key: str) -> str:
    if key == BASELINE:
        return s["baseline"]
    if key.startswith("layerskip-"):
        return s("layerskip_name", k=key.split("-", 1)[1])
    return s[f"short.{key}"]


def _run() -> NoReturn:
    ss = st.session_state
    settings = RaceSettings(
        gamma=int(ss["race_gamma"]),
        adaptive=bool(ss["race_adaptive"]),
        temperature=float(ss["race_t"]),
        seed=int(ss["race_seed"]),
        max_new_tokens=int(ss["race_max"]),
        repeats=int(ss["race_repeats"]),
    )
    target_spec = TargetSpec(
        ss["race_target"], ss["race_target_src"].strip() if ss["race_target"] == "custom" else ""
    )
    try:
        entries = _entries(target_spec)
        if not entries:
            raise ValueError(s["no_drafts"])
        target = get_target(target_spec)
        drafts = [(key, get_draft(target_spec, target, spec)) for key, spec in entries]
        chat = bool(ss["race_chat"]) and ss["race_target"] != "toy"
        ids = encode_prompt(target, ss["race_prompt"], chat, settings.max_new_tokens)
    except PromptError as exc:
        _fail(ls(f"prompt_errors.{exc.code}", **exc.params))
    except (ValueError, OSError) as exc:
        _fail(ls("model_error", message=exc))
    status = st.empty()
    bar = st.progress(0.0)
    race = Race(target, drafts, ids, settings, on_wait=wait_notice(status), timeout=WAIT_LIMIT)
    keys = race.keys
    prompt = ss["race_prompt"]
    task = ss["race_preset"] if prompt == _preset_text() else "custom"
    job = Handoff()
    ss[JOB_KEY] = job
    done = False
    error = None
    last = 0.0
    runs = iter(race)
    try:
        for key, event in runs:
            produced = event.position + len(event.committed)
            now = time.perf_counter()
            if now - last >= PAINT_EVERY or event.finished:
                reps = settings.repeats
                step = keys.index(key) * reps + race.repeat + produced / settings.max_new_tokens
                bar.progress(
                    min(1.0, step / (len(keys) * reps)), text=s("progress", name=_name(key), n=produced)
                )
                last = now
        done = True
    except ModelBusyError:
        error = ls("busy_timeout", seconds=int(WAIT_LIMIT))
    except ValueError as exc:
        error = ls("run_error", message=exc)
    finally:  # no Streamlit call in here (after a Stop each would raise again); finished runs are kept
        runs.close()  # type: ignore[attr-defined]
        result = None
        if race.records:
            names = {k: _name(k) for k in keys}
            result = RaceResult(
                task,
                prompt,
                str(target.name),
                target_spec.kind,
                names,
                settings,
                dict(race.records),
                stopped=not done,
            )
        job.finish(result, error)
    st.rerun()


def _collect() -> None:
    """Take over the result of the last race (waiting for an interrupted one to wind down)."""
    job = st.session_state.get(JOB_KEY)
    if job is None:
        return
    if not job.done:
        with st.spinner(ls["stopping"]):
            job.wait(WAIT_LIMIT)
    del st.session_state[JOB_KEY]
    if job.value is not None:
        st.session_state.setdefault(RESULTS_KEY, {})[job.value.task] = job.value
        st.session_state["_race_last"] = job.value.task
    if job.error:
        st.session_state[ERROR_KEY] = job.error


def _fail(message: str) -> NoReturn:
    """Keep `message` for the next run and rerun, so the page comes back usable."""
    st.session_state[ERROR_KEY] = message
    st.rerun()


def _table(result: RaceResult) -> None:
    rows = result.rows
    frame = pd.DataFrame(
        {
            s["col.draft"]: [result.names[r.key] for r in rows],
            s["col.alpha"]: [r.alpha for r in rows],
            s["col.per_round"]: [r.tokens_per_round for r in rows],
            s["col.cost"]: [r.cost_ratio for r in rows],
            s["col.verify"]: [r.verify_cost for r in rows],
            s["col.wall"]: [r.wall_s for r in rows],
            s["col.wall_speedup"]: [r.wall_speedup for r in rows],
            s["col.decode_speedup"]: [r.decode_speedup for r in rows],
            s["col.predicted"]: [r.predicted_speedup for r in rows],
        }
    )
    fmt = {c: "{:.3f}" for c in frame.columns[1:]}
    fmt[s["col.wall"]] = "{:.2f} s"
    for c in (s["col.wall_speedup"], s["col.decode_speedup"], s["col.predicted"]):
        fmt[c] = "{:.2f}×"
    st.dataframe(frame.style.format(fmt, na_rep="—"), hide_index=True, width="stretch", key="race_table")
    base = result.records[BASELINE]
    st.caption(s("table_caption", wall=base.wall_s, tokens=len(base.tokens), repeats=result.settings.repeats))


def _by_task(results: dict[str, RaceResult]) -> None:
    if len(results) < 2:
        return
    st.subheader(s["by_task_title"])
    names = sorted({n for r in results.values() for k, n in r.names.items() if k != BASELINE})
    data = {s["col.task"]: [s[f"tasks.{task}"] for task in results]}
    for name in names:
        data[name] = [
            next((row.decode_speedup for row in r.rows if r.names[row.key] == name), None)
            for r in results.values()
        ]
    frame = pd.DataFrame(data)
    styled = frame.style.format(dict.fromkeys(names, "{:.2f}×"), na_rep="—").highlight_max(
        axis=1, subset=names, props="font-weight:700;background-color:#DDF3E5"
    )
    st.dataframe(styled, hide_index=True, width="stretch", key="race_by_task")
    st.caption(s["by_task_caption"])


def _view(result: RaceResult) -> None:
    st.subheader(s("results_title", task=s[f"tasks.{result.task}"]))
    if result.stopped:
        st.warning(s["stopped"])
    rows = result.rows
    if not rows:
        st.info(s["no_rows"])
        return
    winner = best(rows)
    if winner is not None and winner.decode_speedup >= 1:
        st.success(s("winner", name=result.names[winner.key], speedup=winner.decode_speedup))
    elif winner is not None:
        st.warning(s("no_winner", name=result.names[winner.key], speedup=winner.decode_speedup))
    if result.target_kind == "toy":
        st.caption(ls["toy_timing"])
    if result.settings.temperature == 0:
        same = all(r.same_text for r in rows)
        st.caption(s["greedy_same"] if same else s["greedy_differ"])
    _table(result)
    points = [
        viz.RacePoint(
            result.names[r.key],
            r.alpha,
            r.decode_speedup,
            r.wall_speedup,
            r.drafted,
            r.cost_ratio,
            r.verify_cost,
        )
        for r in rows
    ]
    st.plotly_chart(viz.bars_figure(points, s["fig"]), theme=None, key="race_bars")
    st.plotly_chart(viz.theory_figure(points, s["fig"]), theme=None, key="race_theory")
    st.caption(s["theory_caption"])
    st.download_button(
        s["download"],
        data=result_json(result),
        file_name=f"specdec-race-{result.task}.json",
        mime="application/json",
        icon=":material/download:",
        key="race_download",
    )


_collect()
if st.session_state.pop("_race_go", False):
    st.session_state.pop(ERROR_KEY, None)
    _run()
if st.session_state.get(ERROR_KEY):
    st.error(st.session_state[ERROR_KEY], icon=":material/error:")

results: dict[str, RaceResult] = st.session_state.get(RESULTS_KEY, {})
last_task = st.session_state.get("_race_last")
if last_task in results:
    _view(results[last_task])
    _by_task(results)
else:
    st.info(s["press_run"])
text.show("apprentices")
quiz(s)
