"""The classroom: identical requests share a stored trace; finished runs set the pace of the estimate."""

import time
from types import SimpleNamespace

import pytest

from specdec_core.live.classroom import FIRST_GUESS_S_PER_TOKEN, Classroom, request_key
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.settings import LiveSettings


def _settings(**kw):
    return LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("toy_draft"), **kw)


def test_identical_requests_share_a_key_and_any_difference_splits_it():
    base = request_key(_settings(), "the cat")
    assert request_key(_settings(), "the cat") == base
    assert hash(request_key(_settings(), "the cat")) == hash(base)
    for other in (
        request_key(_settings(seed=1), "the cat"),
        request_key(_settings(temperature=0.5), "the cat"),
        request_key(_settings(compare=False), "the cat"),
        request_key(_settings(max_new_tokens=65), "the cat"),
        request_key(LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("ngram")), "the cat"),
        request_key(_settings(), "the cat "),
    ):
        assert other != base


def test_stored_traces_are_returned_and_the_oldest_dropped():
    room = Classroom(max_traces=2)
    assert room.lookup("a") is None
    room.store("a", "trace a")
    room.store("b", "trace b")
    assert room.lookup("a").trace == "trace a"  # a is now the most recently used
    room.store("c", "trace c")
    assert room.lookup("b") is None
    assert room.lookup("a").trace == "trace a" and room.lookup("c").trace == "trace c"
    assert room.lookup("c").stored_at <= time.time()
    assert room.forget() == 2 and room.lookup("a") is None


def _trace(tokens=4, seconds=1.0, complete=True, baseline=True, compare=True):
    """What Classroom.record reads of a LiveTrace."""
    run = SimpleNamespace(tokens=[0] * tokens, wall_s=seconds, complete=complete)
    return SimpleNamespace(
        speculative=run, baseline=run if baseline else None, settings=SimpleNamespace(compare=compare)
    )


def test_a_finished_run_is_stored_and_its_pace_feeds_the_estimate():
    room = Classroom()
    assert room.seconds_per_token == FIRST_GUESS_S_PER_TOKEN  # nothing measured yet
    room.record("a", _trace(tokens=10, seconds=5.0), str)  # both runs: 20 tokens in 10 s
    assert room.lookup("a") is not None and room.seconds_per_token == 0.5
    room.record("b", _trace(tokens=10, seconds=1.0), str)
    assert room.seconds_per_token == pytest.approx((0.5 + 0.1) / 2)


@pytest.mark.parametrize(
    "trace",
    [_trace(complete=False), _trace(baseline=False, compare=True)],
    ids=["a run cut short", "a comparison without its baseline"],
)
def test_an_incomplete_trace_is_never_stored_for_others(trace):
    room = Classroom()
    room.record("a", trace, str)
    assert room.lookup("a") is None
    room.record("b", _trace(baseline=False, compare=False), str)  # no comparison asked: complete
    assert room.lookup("b") is not None
