"""Live generation: a real model pair decoding, every token coloured by what happened to it.

Controls → models (loaded once per process) → the engine's events streamed into the page →
a ``LiveTrace`` kept in session state. The finished view (text, stats, timeline, inspector)
is drawn from the trace alone, so a run loaded from a JSON file looks exactly the same.
"""

from __future__ import annotations

import time
from typing import Any, NoReturn

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
from specdec_core import live_stats, live_text
from specdec_core.engine import RoundEvent, autoregressive, generate, summarize
from specdec_core.live_inspect import POOL_P, position_view, slot_kind
from specdec_core.live_presets import PRESETS, preset_prompt
from specdec_core.live_run import Handoff, PromptError, Stream, encode_prompt
from specdec_core.live_trace import LiveSettings, LiveTrace, RunRecord, TraceError, build, from_json, to_json
from specdec_core.model_choices import DRAFTS, TARGETS, TOY_WORDS, DraftSpec, TargetSpec, drafts_for
from specdec_core.models import ModelBusyError
from specdec_core.tree_paths import path_nodes, tree_view
from specdec_core.verify import StepResult, decompose
from specdec_core.viz import live as viz
from specdec_core.viz import overlap as overlap_viz
from specdec_core.viz import palette
from specdec_core.viz import tree as tree_viz
from specdec_core.viz.block import tokens_histogram

TOP_N = 20  # probabilities kept per row for the inspector
PAINT_EVERY = 0.12  # seconds between repaints while streaming
WAIT_LIMIT = 600.0  # seconds to wait for another session's generation
PLAYBACK_MAX_PAUSE = 0.4
PROMPT_TAIL = 160  # characters of the prompt shown before the generated text
TRACE_KEY = "live_trace"
ERROR_KEY = "_live_error"
JOB_KEY = "_live_job"
PARAMS = [
    choice_param("live_target", "bundled", TARGETS),
    text_param("live_target_src", "", 500),
    choice_param("live_draft", "ngram", DRAFTS),
    int_param("live_k", 20, 1, 256),
    text_param("live_draft_src", "", 500),
    choice_param("live_preset", "copy", PRESETS),
    bool_param("live_chat", True),
    int_param("live_gamma", 4, 1, 16),
    bool_param("live_adaptive", False),
    float_param("live_t", 0.0, 0.0, 2.0),
    int_param("live_topk", 0, 0, 1000),
    float_param("live_topp", 1.0, 0.05, 1.0),
    int_param("live_seed", 0, 0, 2**31 - 1),
    int_param("live_max", 64, 4, 512),
    bool_param("live_compare", True),
    bool_param("live_void", False),
    int_param("live_shown", 8, 3, 20),
]

s, text = start("live")
lang = s.lang
kinds_text = {k: s[f"kinds.{k}"] for k in ("accepted", "rejected", "corrected", "bonus", "target")}
fig_text = {**s["fig"], **kinds_text, "void": s["void"]}
overlap_text = strings("overlap")["chart.overlap"]  # the lessons' own figures, in their own words
tree_text = strings("tree")["chart"]
rejected_keys = restore(PARAMS)
if rejected_keys:
    st.warning(s("url_rejected", keys=", ".join(rejected_keys)))


# ---------------------------------------------------------------- prompt and model choices
def _preset_text() -> str:
    return preset_prompt(st.session_state["live_preset"], lang, st.session_state["live_target"] == "toy")


def _set_prompt() -> None:
    st.session_state["live_prompt"] = _preset_text()
    st.session_state["_live_prompt_origin"] = st.session_state["live_prompt"]


def _target_changed() -> None:
    options = drafts_for(st.session_state["live_target"])
    if st.session_state["live_draft"] not in options:
        st.session_state["live_draft"] = options[0]
    _set_prompt()


if st.session_state["live_draft"] not in drafts_for(st.session_state["live_target"]):
    st.session_state["live_draft"] = drafts_for(st.session_state["live_target"])[0]
origin = st.session_state.get("_live_prompt_origin")
if "live_prompt" not in st.session_state or (
    st.session_state["live_prompt"] == origin and origin != _preset_text()
):  # an unedited preset follows the language and the target
    _set_prompt()


def _go() -> None:
    st.session_state["_live_go"] = True


def _import() -> None:
    upload = st.session_state.get("live_upload")
    if upload is not None:
        st.session_state["_live_import"] = upload.getvalue()


def _select_round() -> None:
    points = st.session_state["live_timeline"].selection.points
    if points:
        st.session_state["live_round"] = int(points[0]["x"])


text.show("intro")

with st.container(border=True):
    st.markdown(f"**{s['controls']}**")
    c1, c2, c3 = st.columns([1.2, 1.2, 1])
    target_kind = c1.selectbox(
        s["target"],
        TARGETS,
        format_func=lambda k: s[f"targets.{k}"],
        key="live_target",
        on_change=_target_changed,
        help=s["target_help"],
    )
    if target_kind == "custom":
        c1.text_input(
            s["source"], key="live_target_src", placeholder=s["source_placeholder"], help=s["source_help"]
        )
    draft_kind = c2.selectbox(
        s["draft"],
        drafts_for(target_kind),
        format_func=lambda k: s[f"drafts.{k}"],
        key="live_draft",
        help=s["draft_help"],
    )
    if draft_kind == "layerskip":
        c2.number_input(s["k"], min_value=1, max_value=256, step=1, key="live_k", help=s["k_help"])
    if draft_kind == "custom":
        c2.text_input(
            s["draft_source"],
            key="live_draft_src",
            placeholder=s["source_placeholder"],
            help=s["source_help"],
        )
    c3.selectbox(
        s["preset"],
        PRESETS,
        format_func=lambda k: s[f"presets.{k}"],
        key="live_preset",
        on_change=_set_prompt,
        help=s["preset_help"],
    )
    c3.toggle(s["chat"], key="live_chat", disabled=target_kind == "toy", help=s["chat_help"])
    st.text_area(s["prompt"], key="live_prompt", height=130, help=s["prompt_help"])
    if target_kind == "toy":
        st.caption(s("toy_words", words=" ".join(TOY_WORDS)))
    g1, g2, g3, g4, g5, g6 = st.columns([1.3, 1.3, 1, 1, 1, 1.3])
    g1.slider(s["gamma"], 1, 16, key="live_gamma", help=s["gamma_help"])
    g1.toggle(s["adaptive"], key="live_adaptive", help=s["adaptive_help"])
    g2.slider(s["temperature"], 0.0, 2.0, step=0.05, key="live_t", help=s["temperature_help"])
    g3.number_input(s["top_k"], min_value=0, max_value=1000, step=1, key="live_topk", help=s["top_k_help"])
    g4.slider(s["top_p"], 0.05, 1.0, step=0.05, key="live_topp", help=s["top_p_help"])
    g5.number_input(s["seed"], min_value=0, max_value=2**31 - 1, step=1, key="live_seed", help=s["seed_help"])
    g6.slider(s["max_new"], 4, 512, key="live_max", help=s["max_new_help"])
    b1, b2, b3 = st.columns([1, 1, 3])
    going = bool(st.session_state.get("_live_go"))
    b1.button(
        s["generate"],
        type="primary",
        key="live_generate",
        on_click=_go,
        width="stretch",
        icon=":material/play_arrow:",
    )
    b2.button(s["stop"], key="live_stop", disabled=not going, width="stretch", icon=":material/stop:")
    b3.toggle(s["compare"], key="live_compare", help=s["compare_help"])
    with st.expander(s["replay_title"]):
        st.file_uploader(
            s["upload"], type=["json"], key="live_upload", on_change=_import, help=s["upload_help"]
        )
mirror(PARAMS)


def _settings() -> LiveSettings:
    ss = st.session_state
    draft = ss["live_draft"]
    return LiveSettings(
        target=TargetSpec(
            ss["live_target"], ss["live_target_src"].strip() if ss["live_target"] == "custom" else ""
        ),
        draft=DraftSpec(
            draft,
            int(ss["live_k"]) if draft == "layerskip" else 0,
            ss["live_draft_src"].strip() if draft == "custom" else "",
        ),
        chat=bool(ss["live_chat"]) and ss["live_target"] != "toy",
        gamma=int(ss["live_gamma"]),
        adaptive=bool(ss["live_adaptive"]),
        temperature=float(ss["live_t"]),
        top_k=int(ss["live_topk"]),
        top_p=float(ss["live_topp"]),
        seed=int(ss["live_seed"]),
        max_new_tokens=int(ss["live_max"]),
        compare=bool(ss["live_compare"]),
    )


# ---------------------------------------------------------------- streaming a run
def _paint(area: Any, status: Any, prompt: str, events: list[RoundEvent], text_of: Any, label: str) -> None:
    area.html(viz.tokens_html(prompt, live_text.spans(events), text_of, fig_text, prompt_chars=PROMPT_TAIL))
    sm = summarize(events)
    status.caption(s("streaming", label=label, rounds=sm.rounds, tokens=sm.tokens, rate=sm.tokens_per_second))


def _stream(
    run: Stream, area: Any, status: Any, prompt: str, text_of: Any, label: str, events: list[RoundEvent]
) -> None:
    last = 0.0
    for event in run:
        events.append(event)
        now = time.perf_counter()
        if now - last >= PAINT_EVERY or event.finished:
            _paint(area, status, prompt, events, text_of, label)
            last = now


def _run(settings: LiveSettings, prompt: str) -> NoReturn:
    """Load the models, stream the speculative run (and the baseline), hand the trace over.

    Errors become messages for the next run, so the page comes back usable. A Stop (or
    any rerun) interrupts the stream; ``finally`` releases the models and hands over what
    was made, which the next run collects (:func:`_collect`) even if it starts at once in
    another thread.
    """
    try:
        target = get_target(settings.target)
        draft = get_draft(settings.target, target, settings.draft)
        ids = encode_prompt(target, prompt, settings.chat, settings.max_new_tokens)
    except PromptError as exc:
        _fail(s(f"prompt_errors.{exc.code}", **exc.params))
    except (ValueError, OSError) as exc:  # a missing model, a mismatched pair, a bad layer count
        _fail(s("model_error", message=exc))
    st.session_state.pop(TRACE_KEY, None)
    job = Handoff()
    st.session_state[JOB_KEY] = job
    cols = st.columns(2) if settings.compare else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}**")
    spec_status, spec_area = cols[0].empty(), cols[0].empty()
    if settings.compare:
        cols[1].markdown(f"**{s['base_title']}**")
        base_status, base_area = cols[1].empty(), cols[1].empty()
        base_status.caption(s["base_waiting"])
    cfg = settings.sampling()
    spec_events: list[RoundEvent] = []
    base_events: list[RoundEvent] = []
    spec_run = Stream(
        lambda wait: generate(
            target,
            draft,
            ids,
            cfg,
            settings.gamma,
            settings.max_new_tokens,
            settings.seed,
            settings.adaptive,
            top_n=TOP_N,
            lock_timeout=wait,
        ),
        wait_notice(spec_status),
        WAIT_LIMIT,
    )
    base_run = Stream(
        lambda wait: autoregressive(
            target, ids, cfg, settings.max_new_tokens, settings.seed, top_n=TOP_N, lock_timeout=wait
        ),
        wait_notice(base_status) if settings.compare else None,
        WAIT_LIMIT,
    )
    stage = "spec"
    error = None
    try:
        _stream(spec_run, spec_area, spec_status, prompt, target.token_text, s["spec_short"], spec_events)
        stage = "base"
        if settings.compare:
            _stream(base_run, base_area, base_status, prompt, target.token_text, s["base_short"], base_events)
        stage = "done"
    except ModelBusyError:
        error = s("busy_timeout", seconds=int(WAIT_LIMIT))
    except ValueError as exc:
        error = s("run_error", message=exc)
    finally:  # no Streamlit call in here: after a Stop each one would raise again
        spec_run.close()
        base_run.close()
        trace = None
        if spec_events:
            spec = RunRecord(spec_events, spec_run.wall_s, stopped=stage == "spec")
            base = RunRecord(base_events, base_run.wall_s, stopped=stage == "base") if base_events else None
            trace = build(settings, prompt, ids, target, draft, spec, base)
        job.finish(trace, error)
    st.rerun()


def _collect() -> None:
    """Take over the result of the last run (waiting for an interrupted one to wind down)."""
    job = st.session_state.get(JOB_KEY)
    if job is None:
        return
    if not job.done:
        with st.spinner(s["stopping"]):
            job.wait(WAIT_LIMIT)
    del st.session_state[JOB_KEY]
    if job.value is not None:
        st.session_state[TRACE_KEY] = job.value
        st.session_state["live_round"] = 0
        st.session_state["live_slot"] = 0
    if job.error:
        st.session_state[ERROR_KEY] = job.error


def _fail(message: str) -> NoReturn:
    """Keep `message` for the next run and rerun, so the page comes back usable."""
    st.session_state[ERROR_KEY] = message
    st.rerun()


def _playback(trace: LiveTrace) -> None:
    """Stream a kept run again at its recorded pace (each round's pause capped)."""
    area, status = st.empty(), st.empty()
    shown: list[RoundEvent] = []
    for event in trace.speculative.events:
        shown.append(event)
        _paint(area, status, trace.prompt, shown, trace.text, s["spec_short"])
        time.sleep(min(event.total_s, PLAYBACK_MAX_PAUSE))
    st.rerun()


# ---------------------------------------------------------------- the finished view
def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _comparison(trace: LiveTrace) -> None:
    base = trace.baseline
    if base is None:
        return
    cmp = live_stats.compare(trace.speculative, base)
    m = st.columns(4)
    m[0].metric(s["speedup"], f"{cmp.wall_speedup:.2f}×" if cmp.wall_speedup else "—", help=s["speedup_help"])
    m[1].metric(s["wall_spec"], f"{cmp.spec_wall:.2f} s")
    m[2].metric(s["wall_base"], f"{cmp.base_wall:.2f} s")
    m[3].metric(
        s["decode_speedup"],
        f"{cmp.decode_speedup:.2f}×" if cmp.decode_speedup else "—",
        help=s["decode_speedup_help"],
    )
    if trace.settings.target.kind == "toy":
        st.caption(s["toy_timing"])
    if cmp.identical is None:
        st.info(s["compare_incomplete"])
    elif trace.settings.greedy and cmp.identical:
        st.success(s("identical", n=cmp.spec_tokens), icon=":material/check_circle:")
    elif trace.settings.greedy:
        st.warning(s("not_identical", pos=(cmp.first_difference or 0) + 1))
    else:
        st.info(s("sampled_differ", same=s["same_yes"] if cmp.identical else s["same_no"]))


def _stats(trace: LiveTrace) -> live_stats.LiveStats:
    stats = live_stats.live_stats(trace.speculative.events)
    sm = stats.summary
    m = st.columns(5)
    m[0].metric(s["alpha"], _f(stats.alpha), help=s["alpha_help"])
    m[1].metric(
        s["per_round"],
        f"{stats.mean_measured:.2f}",
        help=s["per_round_help"],
        delta=None if stats.mean_theory is None else s("theory_delta", value=stats.mean_theory),
        delta_color="off",
    )
    m[2].metric(s["tokens_per_s"], f"{sm.tokens_per_second:.1f}", help=s["tokens_per_s_help"])
    m[3].metric(
        s["saved"],
        f"{stats.forwards_saved}",
        help=s["saved_help"],
        delta=s("saved_delta", rounds=sm.target_forwards, tokens=sm.tokens),
        delta_color="off",
    )
    m[4].metric(s["rejections"], f"{sm.rejections} / {sm.rounds}", help=s["rejections_help"])
    return stats


def _inspector(trace: LiveTrace) -> None:
    events = trace.speculative.events
    st.subheader(s["inspect_title"])
    text.show("inspect")
    last = len(events) - 1
    st.session_state["live_round"] = min(max(int(st.session_state.get("live_round", 0)), 0), last)
    c1, c2 = st.columns([3, 1])
    if last > 0:
        c1.slider(s["round"], 0, last, key="live_round")
    c2.slider(s["shown"], 3, 20, key="live_shown", help=s["shown_help"])
    event = events[st.session_state["live_round"]]
    if not event.p_rows:
        st.info(s["no_rows"])
        return
    n = len(event.committed)
    st.session_state["live_slot"] = min(max(int(st.session_state.get("live_slot", 0)), 0), n - 1)
    st.radio(
        s["slot"],
        range(n),
        key="live_slot",
        horizontal=True,
        format_func=lambda i: (
            f"{i + 1} · {s[f'kinds.{slot_kind(event, i)}']} “{viz.label(trace.text(event.committed[i]))}”"
        ),
    )
    drafts = ", ".join(f"“{viz.label(trace.text(t))}”" for t in event.draft_tokens) or s["no_drafts"]
    st.markdown(
        s(
            "round_line",
            n=event.index,
            gamma=event.gamma,
            drafts=drafts,
            a=event.accepted_count,
            k=len(event.draft_tokens),
            c=n,
        )
    )
    view = position_view(
        event, st.session_state["live_slot"], trace.vocab_size, st.session_state["live_shown"]
    )
    pool_names = {
        t: s[f"pool.{t}"] if view.q is not None else s["other"] for t in view.ids if isinstance(t, str)
    }
    labels = [pool_names[t] if isinstance(t, str) else viz.label(trace.text(t)) for t in view.ids]

    def tok(token: int) -> str:
        return viz.label(trace.text(token))

    if view.draft_token is not None:
        verdict = s["verdict_accepted"] if view.accepted else s("verdict_rejected", y=tok(view.emitted))
        st.markdown(
            s(
                "decision",
                x=tok(view.draft_token),
                q=viz.number(view.q_x),
                p=viz.number(view.p_x),
                a=viz.number(view.accept_prob),
                verdict=verdict,
            )
        )
    elif view.kind == "bonus":
        st.markdown(
            s("decision_bonus", y=tok(view.emitted), p=viz.number(view.p_x), k=len(event.draft_tokens))
        )
    else:
        st.markdown(s("decision_target", y=tok(view.emitted), p=viz.number(view.p_x)))
    if view.one_hot:
        st.caption(s["one_hot_note"])
    if view.q is not None:
        d = decompose(view.p, view.q)
        st.plotly_chart(
            overlap_viz.overlap_bars(labels, d.overlap, d.deficit, d.surplus, text=overlap_text),
            theme=None,
            key="live_overlap",
        )
        tv = tree_view(view.p, view.q, labels)
        emitted = view.bar(view.emitted)
        if emitted is None:  # a pooled replacement comes from the pool's deficit, "p only"
            emitted = view.ids.index(POOL_P)
        path = path_nodes(tv, StepResult(view.bar(view.draft_token), bool(view.accepted), emitted))
        st.plotly_chart(tree_viz.tree_figure(tv, highlight=path, text=tree_text), theme=None, key="live_tree")
        lo, hi = view.alpha
        if not view.exact:
            st.caption(s("pool_note", n=view.pool_size, lo=lo, hi=hi))
        elif view.has_pool:
            st.caption(s("pool_exact", n=view.pool_size, alpha=lo))
        else:
            st.caption(s("exact_note", alpha=lo))
    else:
        st.plotly_chart(viz.row_bars(labels, view.p, view.bar(view.emitted), text=fig_text), theme=None,
                        key="live_row")  # fmt: skip
        if view.has_pool:
            st.caption(s("pool_p_note", n=view.pool_size))


def _view(trace: LiveTrace) -> None:
    events = trace.speculative.events
    selected = int(st.session_state.get("live_round", 0))
    st.subheader(s["output_title"])
    if trace.meta.get("replayed"):
        st.info(s("replayed", created=trace.meta.get("created", "?")), icon=":material/replay:")
    if trace.speculative.stopped or (trace.baseline and trace.baseline.stopped):
        st.warning(s["stopped"])
    kinds = ["accepted", "rejected", "corrected", "bonus"] + (
        ["void"] if st.session_state["live_void"] else []
    )
    items = live_text.spans(events, show_void=st.session_state["live_void"])
    counts = live_text.counts(items)
    plain = trace.baseline is not None or counts["target"] > 0
    numbered = {k: n for k, n in counts.items() if k != "target"}  # "target" also names the other column
    st.html(viz.legend_html(kinds + (["target"] if plain else []), fig_text, numbered))
    cols = st.columns(2) if trace.baseline else [st.container()]
    cols[0].markdown(f"**{s['spec_title']}** · {trace.target_name} + {trace.draft_name}")
    cols[0].html(
        viz.tokens_html(
            trace.prompt, items, trace.text, fig_text, selected_round=selected, prompt_chars=PROMPT_TAIL
        )
    )
    if trace.baseline:
        cols[1].markdown(f"**{s['base_title']}** · {trace.target_name}")
        cols[1].html(
            viz.tokens_html(
                trace.prompt,
                live_text.spans(trace.baseline.events),
                trace.text,
                fig_text,
                prompt_chars=PROMPT_TAIL,
            )
        )
    st.toggle(s["show_void"], key="live_void", help=s["show_void_help"])
    _comparison(trace)
    text.show("colours")

    st.subheader(s["stats_title"])
    stats = _stats(trace)
    st.plotly_chart(
        viz.timeline_figure(live_stats.timeline(events), selected, fig_text),
        theme=None,
        key="live_timeline",
        on_select=_select_round,
        selection_mode="points",
    )
    st.caption(s["timeline_caption"])
    h1, h2 = st.columns(2)
    with h1:
        if stats.law is not None:
            st.plotly_chart(
                tokens_histogram(stats.counts, stats.law, stats.alpha, s["fig_hist"]),
                theme=None,
                key="live_hist",
            )
            st.caption(s("hist_caption", measured=stats.mean_measured, theory=stats.mean_theory))
        else:
            st.info(s["hist_none"])
    with h2:
        curves = [(s["spec_short"], *live_stats.progress_curve(events), palette.ACCEPTED)]
        if trace.baseline:
            curves.append(
                (s["base_short"], *live_stats.progress_curve(trace.baseline.events), palette.TARGET_ONLY)
            )
        st.plotly_chart(viz.speed_figure(curves, fig_text), theme=None, key="live_speed")
        st.caption(s["speed_caption"])
    text.show("stats")
    _inspector(trace)
    st.download_button(
        s["download"],
        data=to_json(trace),
        file_name="specdec-live-trace.json",
        mime="application/json",
        icon=":material/download:",
        key="live_download",
    )


# ---------------------------------------------------------------- what this run does
raw = st.session_state.pop("_live_import", None)
if raw is not None:
    try:
        st.session_state[TRACE_KEY] = from_json(raw).replayed()
        st.session_state["live_round"] = 0
        st.session_state["live_slot"] = 0
        st.session_state.pop(ERROR_KEY, None)
    except TraceError as exc:
        st.session_state[ERROR_KEY] = s("import_error", message=exc)
_collect()
if st.session_state.pop("_live_go", False):
    st.session_state.pop(ERROR_KEY, None)
    _run(_settings(), st.session_state["live_prompt"])
if st.session_state.get(ERROR_KEY):
    st.error(st.session_state[ERROR_KEY], icon=":material/error:")

trace = st.session_state.get(TRACE_KEY)
if trace is not None:
    if st.button(s["playback"], key="live_playback", icon=":material/replay:", help=s["playback_help"]):
        _playback(trace)
    _view(trace)
else:
    st.info(s["press_generate"])
    text.show("colours")

quiz(s)
