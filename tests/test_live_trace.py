"""Live traces: a run saved as JSON reads back identical; anything else is refused plainly."""

import json

import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.settings import LiveSettings
from specdec_core.live.trace import (
    FORMAT,
    RunRecord,
    TraceError,
    build,
    from_json,
    referenced_ids,
    to_json,
)
from specdec_core.models.toy_words import toy_draft, toy_target


@pytest.fixture(scope="module")
def trace():
    target, draft = toy_target(), toy_draft()
    settings = LiveSettings(
        TargetSpec("toy"), DraftSpec("toy_draft"), chat=False, temperature=0.8, seed=3, max_new_tokens=40
    )
    ids = target.encode("the cat <script>")
    spec = list(generate(target, draft, ids, settings.sampling(), 4, 40, 3))
    base = list(autoregressive(target, ids, settings.sampling(), 40, 3))
    return build(settings, "the cat <script>", ids, target, draft, RunRecord(spec, 0.5), RunRecord(base, 0.7))


def test_round_trip_is_exact(trace):
    back = from_json(to_json(trace))
    assert back == trace
    assert back.speculative.events[0].p_rows == trace.speculative.events[0].p_rows  # float64 exact
    assert back.text(back.prompt_ids[-1]) == " <script>"


def test_trace_names_every_token_it_shows(trace):
    ids = referenced_ids(trace.prompt_ids, [*trace.speculative.events, *trace.baseline.events])
    assert ids == set(trace.texts)
    assert trace.vocab_size == 18 and trace.meta["versions"]["python"]
    assert trace.speculative.complete and trace.baseline.complete


def _edit(trace, change) -> str:
    data = json.loads(to_json(trace))
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="something else"), "not a SpecDec Studio live trace"),
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d.pop("speculative"), "no 'speculative' field"),
        (lambda d: d["settings"].update(gamma="four"), "settings is not valid"),
        (lambda d: d["settings"].update(temperature=-1), "settings is not valid"),
        (lambda d: d["settings"]["target"].update(colour="red"), "settings is not valid"),
        (lambda d: d["token_texts"].pop("0"), "lacks the text"),
        (lambda d: d["models"].update(vocab_size=5), "outside its vocabulary"),
        (lambda d: d["speculative"]["events"][0]["kinds"].append("bonus"), "one kind per token"),
        (lambda d: d["speculative"]["events"][0].update(accepted_count=7), "accepted_count"),
        (lambda d: d["speculative"]["events"][1].update(index=5), "index 5"),
        (lambda d: d["speculative"]["events"][0].pop("committed"), "not a valid round event"),
        (lambda d: d["baseline"]["events"][0].update(mode="speculative"), "expected 'autoregressive'"),
        (lambda d: d["speculative"].update(events=[]), "no speculative round"),
        (lambda d: d["prompt"].update(ids=[]), "non-empty list"),
    ],
)
def test_malformed_traces_are_refused_with_a_reason(trace, change, message):
    with pytest.raises(TraceError, match=message):
        from_json(_edit(trace, change))


@pytest.mark.parametrize(
    ("raw", "message"), [(b"\xff\xfe", "not JSON"), ("[1, 2]", "not a SpecDec"), ("{", "not JSON")]
)
def test_non_traces_are_refused(raw, message):
    with pytest.raises(TraceError, match=message):
        from_json(raw)


def test_a_trace_without_baseline_reads_back(trace):
    alone = build(
        trace.settings, trace.prompt, trace.prompt_ids, toy_target(), toy_draft(), trace.speculative
    )
    back = from_json(to_json(alone))
    assert back.baseline is None and back.speculative == trace.speculative
    assert json.loads(to_json(alone))["format"] == FORMAT
