"""Starting live runs: prompt checks, waiting for a model another session holds, stopping."""

import threading
import time

import pytest

from specdec_core.engine import RunOptions, generate
from specdec_core.live.model_choices import toy_draft, toy_target
from specdec_core.live.runs import MAX_PROMPT_CHARS, Pacer, PromptError, Stream, encode_prompt
from specdec_core.models import ModelBusyError
from specdec_core.sampling import SamplingConfig


class _Limited:
    """A toy target with a small context, like a real model's max_length."""

    def __init__(self, limit: int) -> None:
        self.inner = toy_target()
        self.max_length = limit

    def encode(self, text: str, chat: bool = False) -> list[int]:
        return self.inner.encode(text, chat)


@pytest.mark.parametrize(
    ("text", "code"),
    [("", "empty"), ("   \n ", "empty"), ("x" * (MAX_PROMPT_CHARS + 1), "too_long"), ("the zebra", "encode")],
)
def test_bad_prompts_raise_a_coded_error(text, code):
    with pytest.raises(PromptError) as info:
        encode_prompt(toy_target(), text, chat=False, max_new_tokens=8)
    assert info.value.code == code


def test_a_100k_character_prompt_is_refused_before_tokenising():
    class Never:
        def encode(self, text, chat=False):
            raise AssertionError("must not tokenise")

    with pytest.raises(PromptError) as info:
        encode_prompt(Never(), "word " * 20_000, chat=True, max_new_tokens=8)
    assert info.value.code == "too_long" and info.value.params["chars"] == 100_000


def test_prompt_and_new_tokens_must_fit_the_context():
    model = _Limited(10)
    assert encode_prompt(model, "the cat sat", chat=False, max_new_tokens=7) == model.inner.encode(
        "the cat sat"
    )
    with pytest.raises(PromptError) as info:
        encode_prompt(model, "the cat sat", chat=False, max_new_tokens=8)
    assert info.value.code == "no_room" and info.value.params == {"tokens": 3, "new": 8, "limit": 10}


def _run(target, draft, n=30):
    ids = target.encode("the cat")
    return lambda wait: generate(
        target, draft, ids, SamplingConfig(), 3, n, seed=1, options=RunOptions(lock_timeout=wait)
    )


def _hold(lock, seconds, ready):
    lock.acquire()
    ready.set()
    time.sleep(seconds)
    lock.release()


def test_stream_waits_for_a_busy_model_then_runs_the_same_events():
    target, draft = toy_target(), toy_draft()
    alone = list(Stream(_run(target, draft)))
    ready = threading.Event()
    other = threading.Thread(target=_hold, args=(target.lock, 0.6, ready))
    other.start()
    ready.wait(5)
    waits = []
    stream = Stream(_run(target, draft), on_wait=waits.append, timeout=10, poll=0.1)
    events = list(stream)
    other.join()
    assert waits and waits == sorted(waits), "the user is told, repeatedly, that the model is busy"
    assert stream.waited_s >= 0.4
    assert stream.wall_s < stream.waited_s, "the wall time leaves the wait out"
    assert [e.committed for e in events] == [e.committed for e in alone]
    assert not target.lock.busy and not draft.lock.busy


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_stream_gives_up_after_its_timeout():
    target, draft = toy_target(), toy_draft()
    ready = threading.Event()
    other = threading.Thread(target=_hold, args=(draft.lock, 1.0, ready))
    other.start()
    ready.wait(5)
    with pytest.raises(ModelBusyError):
        list(Stream(_run(target, draft), timeout=0.3, poll=0.1))
    other.join()


def test_stopping_a_stream_releases_the_models():
    target, draft = toy_target(), toy_draft()
    stream = Stream(_run(target, draft, n=200))
    for i, _ in enumerate(stream):
        assert target.lock.busy
        if i == 2:
            break
    stream.close()
    assert not target.lock.busy and not draft.lock.busy


def test_pacer_repaints_at_most_every_interval_and_always_at_the_end():
    pacer = Pacer(0.2)
    assert pacer.due(), "the first event paints"
    assert not pacer.due()
    assert pacer.due(last=True), "the last event always paints"
    time.sleep(0.25)
    assert pacer.due() and not pacer.due()
