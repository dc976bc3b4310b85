"""The live-generation page under AppTest, on the toy Markov pair (instant, exact).

Each scenario opens a fresh AppTest with its language, URL and state set before the first
run (see support/apptest.py). A click on Generate runs the real engine on the toy
models, streams, keeps the trace in session state and reruns into the finished view.
"""

import json
import re
import time

import pytest

from specdec_core.live import text as live_text
from specdec_core.live.inspector import slot_kind
from specdec_core.live.stats import live_stats
from specdec_core.live.trace import to_json
from support.apptest import open_page, rerun, shared_link

TOY = {"live_target": "toy", "live_draft": "toy_draft", "live_max": 60}
SCRIPT_PROMPT = "the cat sat on the mat . <script> alert ( ) ; </script> the dog ran . <script> alert ( ) ;"


def _generate(at):
    at.button(key="live_generate").click()
    return rerun(at)


def _html(at, cls: str = "sd-tokens") -> list[str]:
    """HTML blocks of class `cls`: the clickable speculative text first, then ``st.html`` ones."""
    picker = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
    bodies = picker + [h.proto.body for h in at.get("html")]
    return [b for b in bodies if b.startswith(f'<div class="{cls}"')]


def _view(at) -> tuple:
    """What a viewer sees: metrics, the coloured texts and the inspector's words."""
    words = [
        m.value for m in at.markdown if m.value.startswith(("**Round", "**Decision", "**Bonus", "**Target"))
    ]
    return tuple((m.label, m.value) for m in at.metric), tuple(_html(at)), tuple(words)


@pytest.mark.parametrize(("lang", "title"), [("en", "Live generation"), ("zh", "实时生成")])
def test_page_opens_without_loading_a_model(lang, title):
    at = open_page("live", lang)
    assert at.title[0].value == title
    assert at.info, "before a run the page says what Generate does"
    assert at.text_area(key="live_prompt").value.startswith("Repeat" if lang == "en" else "请")
    assert not at.error and "live_trace" not in at.session_state


def test_tokens_are_coloured_by_kind_and_html_is_escaped():
    at = open_page("live", state={**TOY, "live_t": 1.0, "live_max": 120, "live_prompt": SCRIPT_PROMPT})
    _generate(at)
    assert not at.error
    trace = at.session_state["live_trace"]
    spec_html, base_html = _html(at)
    kinds = [k for e in trace.speculative.events for k in e.kinds]
    classes = re.findall(r'class="sd-tok ([a-z ]+)"', spec_html)
    for kind in ("accepted", "corrected", "bonus"):
        assert classes.count(kind) == kinds.count(kind) > 0
    assert classes.count("rejected") == kinds.count("corrected")
    # every token carries its round and position, which a click sends to the inspector
    places = re.findall(r'data-round="(\d+)" data-slot="(\d+)"', spec_html)
    assert places == [(str(x.round), str(x.slot)) for x in live_text.spans(trace.speculative.events)]
    assert set(re.findall(r'class="sd-tok ([a-z ]+)"', base_html)) == {"prompt", "target"}
    generated = spec_html.rsplit('class="sd-tok prompt"', 1)[1].split("</span>", 1)[1]
    assert "&lt;script&gt;" in generated or "&lt;/script&gt;" in generated, "a generated <script> token"
    for body in (spec_html, base_html):
        assert "<script>" not in body and "</script>" not in body
    legend = _html(at, "sd-legend")[0]
    assert all(f"sd-tok {k}" in legend for k in ("accepted", "rejected", "corrected", "bonus", "target"))
    assert f"accepted · {kinds.count('accepted')}<" in legend


def test_stats_agree_with_the_events():
    at = open_page("live", state={**TOY, "live_t": 0.8, "live_seed": 11, "live_gamma": 3})
    _generate(at)
    events = at.session_state["live_trace"].speculative.events
    stats = live_stats(events)
    metrics = {m.label: m.value for m in at.metric}
    accepted = sum(e.accepted_count for e in events)
    rejections = sum(e.rejected for e in events)
    assert metrics["Measured acceptance rate α̂"] == f"{accepted / (accepted + rejections):.3f}"
    assert metrics["Tokens per round τ"] == f"{sum(len(e.committed) for e in events) / len(events):.2f}"
    assert metrics["Target passes saved"] == str(sum(len(e.committed) for e in events) - len(events))
    assert metrics["Rejections"] == f"{rejections} / {len(events)}"
    assert stats.counts.sum() == len(events)
    assert len(at.get("plotly_chart")) >= 5  # timeline, histogram, speed, overlap, tree


def test_greedy_compare_says_identical_and_inspector_follows_the_round():
    at = open_page("live", state={**TOY, "live_t": 0.0, "live_draft": "ngram", "live_max": 40})
    _generate(at)
    assert any("identical token for token" in s.value for s in at.success)
    trace = at.session_state["live_trace"]
    assert trace.speculative.tokens == trace.baseline.tokens
    last = len(trace.speculative.events) - 1
    at.slider(key="live_round").set_value(last)
    rerun(at)
    event = trace.speculative.events[last]
    assert any(m.value.startswith(f"**Round {last}**") for m in at.markdown)
    at.radio(key="live_slot").set_value(len(event.committed) - 1)
    rerun(at)
    prefix = {"corrected": "**Decision", "bonus": "**Bonus", "target": "**Target step"}
    expected = prefix[slot_kind(event, len(event.committed) - 1)]
    assert any(m.value.startswith(expected) for m in at.markdown)
    assert at.session_state["live_trace"] is trace, "inspecting never reruns the model"


def test_trace_export_then_import_gives_the_same_view():
    at = open_page("live", state={**TOY, "live_t": 1.0, "live_seed": 5, "live_prompt": SCRIPT_PROMPT})
    _generate(at)
    exported = to_json(at.session_state["live_trace"]).encode()
    original = _view(at)
    replay = open_page("live", state={"live_target": "toy"})
    replay.file_uploader(key="live_upload").set_value(("run.json", exported, "application/json"))
    rerun(replay)
    assert any("Replayed from a saved trace" in i.value for i in replay.info)
    assert _view(replay) == original
    replay.button(key="live_playback").click()
    rerun(replay)  # the saved rounds stream again above the view, at their recorded pace
    assert "_live_play" in replay.session_state and any(
        "speculative: round" in c.value for c in replay.caption
    )
    deadline = time.monotonic() + 60
    while "_live_play" in replay.session_state and time.monotonic() < deadline:
        time.sleep(0.2)
        rerun(replay)  # AppTest does not run the playback's fragment on its timer
    assert "_live_play" not in replay.session_state, "the playback ended"
    assert _view(replay) == original, "and the same view is left"
    broken = open_page("live", state={"live_target": "toy"})
    broken.file_uploader(key="live_upload").set_value(("run.json", exported[:200], "application/json"))
    rerun(broken)
    assert any("cannot be replayed" in e.value for e in broken.error)
    assert "live_trace" not in broken.session_state


def test_a_custom_draft_with_another_tokenizer_drafts_across_it(tiny_hf_folders):
    at = open_page(
        "live",
        state={
            "live_target": "custom",
            "live_target_src": str(tiny_hf_folders["target"]),
            "live_draft": "custom",
            "live_draft_src": str(tiny_hf_folders["other"]),
            "live_max": 8,
        },
    )
    _generate(at)
    assert not at.error and at.session_state["live_trace"].speculative.tokens
    at.session_state["live_draft"] = "layerskip"
    at.session_state["live_k"] = 2
    _generate(at)
    assert not at.error
    assert at.session_state["live_trace"].draft_name.endswith("first 2 of 4 layers")


def test_generation_in_chinese():
    at = open_page("live", "zh", state={**TOY, "live_t": 0.5})
    _generate(at)
    assert not at.error and at.metric
    assert any(m.label == "实测接受率 α̂" for m in at.metric)
    assert "接受" in _html(at, "sd-legend")[0]


def test_switching_to_the_toy_target_picks_a_fitting_draft_and_prompt():
    at = open_page("live", query={"live_draft": "bf16", "live_t": "0.5", "live_preset": "chat"})
    assert at.session_state["live_t"] == 0.5 and at.session_state["live_draft"] == "bf16"
    at.selectbox(key="live_target").set_value("toy")
    rerun(at)
    assert at.session_state["live_draft"] == "toy_draft"
    assert at.text_area(key="live_prompt").value == "<script> alert ( ) ; </script> the"
    assert shared_link(at)["live_target"] == "toy" and shared_link(at)["live_draft"] == "toy_draft"


def test_loaded_models_are_listed_and_can_be_unloaded():
    """The panel lists the pair a run loaded; Unload empties the process's shelf, and the
    next run loads its pair again."""
    from pages.common.models import shelf
    from specdec_core.viz.escape import md

    at = open_page("live", state=TOY)
    _generate(at)
    names = [getattr(m, "name", "") for m in shelf().loaded()]
    assert len(names) >= 2
    panel = next(e for e in at.expander if e.label.startswith("Models in memory"))
    assert panel.label == f"Models in memory ({len(names)})"
    listed = " ".join(m.value for m in panel.markdown)
    assert all(md(name) in listed for name in names)  # names are shown as literal Markdown
    assert any("MB of memory" in c.value for c in panel.caption)
    at.button(key="models_unload").click()
    rerun(at)
    assert shelf().loaded() == []
    assert at.success[0].value == f"Unloaded {len(names)} model(s)."
    panel = next(e for e in at.expander if e.label.startswith("Models in memory"))
    assert panel.label == "Models in memory (0)"
    assert at.button(key="models_unload").disabled
    _generate(at)
    assert not at.error and len(shelf().loaded()) == 2


def test_an_identical_request_is_a_replay_of_the_stored_run_and_says_so():
    """A second session asking for the same run gets the first one's trace from the shared
    cache, with its timings and a message naming when it was measured; another seed runs."""
    from pages.common.models import classroom
    from specdec_core.viz.escape import md

    classroom().forget()
    state = {**TOY, "live_t": 0.7, "live_seed": 21}
    first = open_page("live", state=state)
    _generate(first)
    ran = first.session_state["live_trace"]
    assert not ran.meta.get("cached") and not any("shared cache" in i.value for i in first.info)
    second = open_page("live", state=state)
    _generate(second)
    replay = second.session_state["live_trace"]
    assert replay.meta["cached"] and replay.meta["created"] == ran.meta["created"]
    assert replay.speculative.events == ran.speculative.events  # the same run, timings included
    assert replay.speculative.wall_s == ran.speculative.wall_s
    note = [i.value for i in second.info if "shared cache" in i.value]
    assert note and md(ran.meta["created"]) in note[0]
    assert _view(second) == _view(first)
    other = open_page("live", state={**state, "live_seed": 22})
    _generate(other)
    assert not other.session_state["live_trace"].meta.get("cached")


def test_requests_wait_in_line_with_an_estimate_and_an_identical_one_shares_the_run():
    """While another job holds the models, a press waits "In line" with its place and the
    wait expected, and the page stays usable; a second session asking for the very same run
    joins it (one run, one trace for both), and Stop in one leaves the other's run going."""
    import threading

    from pages.common.models import classroom, run_service

    classroom().forget()
    gate = threading.Event()

    class Hold:  # another session's long job, expected to take 40 s more
        key = None

        def run(self, ctx):
            assert gate.wait(60)

        def expected_s(self):
            return 40.0

    held = run_service().submit(Hold())
    try:
        state = {**TOY, "live_t": 0.7, "live_seed": 41}
        first, second, third = (open_page("live", state=state) for _ in range(3))
        for at in (first, second, third):
            at.button(key="live_generate").click()
            rerun(at, settle=False)
        line = [i.value for i in first.info if i.value.startswith("In line for the models")]
        assert line and "1 request(s) ahead of yours" in line[0], line
        wait = re.search(r"about (\d+) s", line[0])  # 40 s less the seconds the pages took to open
        assert wait and 30 <= int(wait.group(1)) <= 40, line
        assert first.button(key="live_generate").disabled and not first.button(key="live_stop").disabled
        first.slider(key="live_topp").set_value(0.9)  # the page answers while the run waits
        rerun(first, settle=False)
        assert "_live_ticket" in first.session_state and not first.exception
        third.button(key="live_stop").click()
        rerun(third)
        assert "live_trace" not in third.session_state, "stopped before its first round: nothing to keep"
    finally:
        gate.set()
    rerun(first)
    rerun(second)
    a, b = first.session_state["live_trace"], second.session_state["live_trace"]
    assert a is b, "one run answered both sessions"
    assert not a.meta.get("cached") and a.speculative.complete
    run_service().cancel(held)


def test_the_inspector_says_why_a_lookup_round_drafted_fewer_than_gamma():
    from pages.common.i18n import Strings
    from specdec_core.live.inspector import short_chain

    # γ = 12 on the toy text (a period of 12 tokens): the first match runs 12 tokens, later ones
    # only to the end of the text so far
    at = open_page(
        "live", state={**TOY, "live_t": 0.0, "live_draft": "ngram", "live_max": 40, "live_gamma": 12}
    )
    _generate(at)
    events = at.session_state["live_trace"].speculative.events
    reasons = [short_chain(e) for e in events]
    assert set(reasons) <= {None, "lookup"}
    short = reasons.index("lookup")
    full = next(i for i, e in enumerate(events) if reasons[i] is None and e.draft_tokens)
    text = Strings("live", "en")
    for i in (short, full):
        at.slider(key="live_round").set_value(i)
        rerun(at)
        e = events[i]
        note = text("short_lookup", k=len(e.draft_tokens), gamma=e.gamma)
        assert (note in [c.value for c in at.caption]) == (i == short), i
