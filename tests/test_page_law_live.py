"""The lab "Exact on a real model" under AppTest, on the toy Markov pair (instant, exact).

Each scenario opens a fresh AppTest with its state set before the first run. A press on Draw
runs the real engine on the toy models through the page's job; Stop is a press the run sees
between samples (pages/common/stop.py), here made by a patched check after some samples.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from specdec_core.live.law import MAX_SAMPLES
from specdec_core.models.toy_words import toy_target
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.viz.law_live import share_bars, tv_bars
from support.apptest import open_page, rerun

TOY = {"law_target": "toy", "law_draft": "toy_draft", "law_n": 150}
RESULT = "_law_result"


def _draw(at):
    at.button(key="law_run").click()
    return rerun(at)


@pytest.mark.parametrize(("lang", "title"), [("en", "Exact on a real model"), ("zh", "在真实模型上检验无损")])
def test_the_page_opens_with_its_defaults_and_loads_no_model(lang, title):
    at = open_page("law_live", lang)
    assert at.title[0].value == title
    assert at.selectbox(key="law_target").value == "bundled"
    assert at.selectbox(key="law_draft").value == "head"
    assert at.selectbox(key="law_preset").value == "copy"
    assert at.slider(key="law_t").value == 1.0
    assert at.number_input(key="law_n").value == 300
    assert at.selectbox(key="law_broken").value == "accept_all"
    assert at.number_input(key="law_seed").value == 0
    assert not at.error and RESULT not in at.session_state
    assert at.info, "before a run the page says what Draw does"


def test_a_toy_run_shows_the_exact_law_beside_the_counts():
    at = _draw(open_page("law_live", state={**TOY, "law_t": 0.9}))
    assert not at.error
    _, snap = at.session_state[RESULT]
    assert snap.finished and snap.counts == {"exact": 150, "accept_all": 150}
    # the first token's law is the target's own row after the prompt's last word, processed
    target = toy_target()
    ids = target.encode(at.text_area(key="law_prompt").value)
    law = apply(target.next_logits(ids[-1]), SamplingConfig(temperature=0.9)).probs
    np.testing.assert_allclose(snap.first.exact[:-1], law[snap.first.tokens], atol=1e-12)
    assert sum(snap.first.exact) == pytest.approx(1.0)
    for rule in snap.rules:
        assert sum(snap.first.shares[rule]) == pytest.approx(1.0)
    exact, broken = snap.tests["exact"], snap.tests["accept_all"]
    assert exact.n == broken.n == 150
    assert exact.p_value > 1e-3 > broken.p_value  # fixed seeds: a fixed outcome
    assert broken.tv > broken.tv_noise
    assert any("Same law, different texts" in m.value for m in at.success)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) >= 3  # first token, a second token, the TV bars
    assert charts[0]["layout"]["xaxis"]["ticktext"][-1] == "the rest"  # law_live.toml [fig] rest
    assert at.dataframe[0].value.shape[0] == 2
    # the charts are built from the snapshot alone, labels escaped
    fig = share_bars(snap.first.texts, snap.first.exact, None, snap.first.shares["accept_all"],
                     {"exact": "e", "counted": "c", "broken": "b", "rest": "<r>", "xaxis": "x", "yaxis": "y",
                      "hover": "%{y}"})  # fmt: skip
    assert fig.layout.xaxis.ticktext[-1] == "&lt;r&gt;" and len(fig.data) == 2


def test_a_distance_rounded_above_one_is_drawn_at_one():
    text = {"tv": "tv", "noise": "n", "tv_yaxis": "y", "hover_tv": "%{y}", "hover_noise": "%{y}"}
    fig = tv_bars(["a", "b"], [1.0 + 1e-12, 0.3], [0.2, 1.0 + 1e-12], text)
    assert list(fig.data[0].y) == [1.0, 0.3] and list(fig.data[1].y) == [0.2, 1.0]


def test_a_different_rule_and_seed_change_the_counts_not_the_law():
    a = _draw(open_page("law_live", state={**TOY, "law_n": 60}))
    b = _draw(
        open_page("law_live", state={**TOY, "law_n": 60, "law_seed": 5, "law_broken": "resample_from_p"})
    )
    (_, sa), (_, sb) = a.session_state[RESULT], b.session_state[RESULT]
    assert sa.first.exact == sb.first.exact
    assert sb.rules == ("exact", "resample_from_p")
    assert sa.first.shares["exact"] != sb.first.shares["exact"]


def test_stop_keeps_the_counts_so_far():
    from pages.common.models import run_service

    at = open_page("law_live", state={**TOY, "law_n": MAX_SAMPLES})
    at.button(key="law_run").click()
    rerun(at, settle=False)
    service, ticket = run_service(), at.session_state["_law_ticket"]
    while (service.snapshot(ticket).result is None) and not service.snapshot(ticket).ended_already:
        time.sleep(0.01)
    at.button(key="law_stop").click()
    rerun(at)
    _, snap = at.session_state[RESULT]
    assert not snap.finished and 0 < snap.done < snap.total
    assert sum(snap.counts.values()) == snap.done and snap.tests["exact"].n == snap.counts["exact"]
    exact, broken = snap.counts["exact"], snap.counts[snap.rules[1]]
    told = (
        f"Stopped after {exact:,} of {snap.planned:,} speculative samples and {broken:,} of {snap.planned:,}"
    )
    assert any(told in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.button(key="law_stop").disabled, "the page is back to idle"


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({**TOY, "law_t": 0.0}, "T = 0 is greedy decoding"),
        ({**TOY, "law_topk": 1}, "top-k = 1 keeps a single token"),
        ({**TOY, "law_prompt": "   "}, "The prompt is empty"),
        ({**TOY, "law_prompt": "the zebra"}, "cannot be encoded"),
    ],
)
def test_bad_input_gets_a_message_and_no_run(state, message):
    at = _draw(open_page("law_live", state=state))
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert RESULT not in at.session_state
    assert at.button(key="law_stop").disabled


def test_a_classroom_caps_the_samples(monkeypatch):
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_MAX_LAW_SAMPLES", "50")
    at = open_page("law_live", state={**TOY, "law_n": 60})
    assert any("M is at most 50; you asked for 60" in e.value for e in at.error)
    _draw(at)
    assert RESULT not in at.session_state
    monkeypatch.delenv("SPECDEC_MAX_LAW_SAMPLES")
    at = open_page("law_live", state={**TOY, "law_n": 301})
    assert any("M is at most 300" in e.value for e in at.error), "the default cap is 300"


def test_a_draft_that_does_not_fit_is_named_and_replaced():
    at = open_page("law_live", state={"law_target": "toy", "law_draft": "head"})
    assert any("does not fit the target" in w.value for w in at.warning)
    assert at.selectbox(key="law_draft").value == "toy_draft"


def test_a_link_beyond_the_largest_n_is_refused():
    at = open_page("law_live", query={"law_n": "5000"})
    assert any("law_n" in w.value for w in at.warning)
    assert at.number_input(key="law_n").value == 300


def test_a_finished_run_describes_itself_as_finished():
    at = _draw(open_page("law_live", state={**TOY, "law_n": 20}))
    _, snap = at.session_state[RESULT]
    assert snap.finished
    waiting = [t for t in snap.second if t.shares["exact"] is None]
    assert waiting, "with 20 samples a likely first token has fewer than the 30 its table needs"
    captions = [c.value for c in at.caption]
    assert not any(c.startswith("Second token") and "so far" in c for c in captions), captions
    assert any("only" in c and "started with it" in c for c in captions), captions
