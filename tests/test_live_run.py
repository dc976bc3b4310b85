"""Starting live runs: prompt checks, timing a run, stopping it."""

import time

import pytest

from specdec_core.engine import RunOptions, generate
from specdec_core.live.runs import MAX_PROMPT_CHARS, Pacer, PromptError, Timed, encode_prompt
from specdec_core.models.toy_words import toy_draft, toy_target
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
    return generate(target, draft, ids, SamplingConfig(), 3, n, seed=1, options=RunOptions())


def test_timed_gives_the_run_s_events_and_its_wall_time():
    target, draft = toy_target(), toy_draft()
    timed = Timed(_run(target, draft))
    events = list(timed)
    assert [e.committed for e in events] == [e.committed for e in _run(target, draft)]
    model_s = sum(e.draft_s + e.verify_s + e.overhead_s + e.prefill_s for e in events)
    assert timed.wall_s >= model_s > 0, "the wall time covers every round's own time"


def test_stopping_a_timed_run_closes_it():
    target, draft = toy_target(), toy_draft()
    closed = []

    def run():
        try:
            yield from _run(target, draft, n=200)
        finally:
            closed.append(True)

    timed = Timed(run())
    for i, _ in enumerate(timed):
        if i == 2:
            break
    timed.close()
    timed.close()  # twice is safe
    assert closed == [True]


def test_pacer_repaints_at_most_every_interval_and_always_at_the_end():
    pacer = Pacer(0.2)
    assert pacer.due(), "the first event paints"
    assert not pacer.due()
    assert pacer.due(last=True), "the last event always paints"
    time.sleep(0.25)
    assert pacer.due() and not pacer.due()
