"""The head's prompt set: held-out prompts share no training topic, and a leak is refused."""

import re

import pytest

from train import prompts


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_splits_are_disjoint_and_varied():
    train, held = prompts.build("train"), prompts.build("held_out")
    assert (
        {p.kind for p in train} == {p.kind for p in held} == {"chat", "explain", "list", "copy", "code", "zh"}
    )
    assert not {p.text for p in train} & {p.text for p in held}
    for p in held:
        assert not any(
            re.search(rf"\b{re.escape(t.lower())}\b", p.text.lower()) for t in prompts.ALL_TRAIN_TOPICS
        )
    assert prompts.build("train") == train  # seeded


def test_the_check_rejects_a_leak():
    leak = prompts.Prompt("Explain octopuses in simple terms.", "explain", "train")
    with pytest.raises(ValueError, match="other split"):
        prompts.check_disjoint([leak])
    with pytest.raises(ValueError, match="benchmark"):
        prompts.check_disjoint([prompts.Prompt("Write about a robot.", "chat", "train")])


def test_a_later_wave_keeps_the_earlier_prompts_in_place():
    """Generated shards are indexed by position: wave 2 only appends after wave 1."""
    import random

    first = prompts._wave("train", *prompts.TRAIN_WAVES[0], random.Random("train-0"))
    train = prompts.build("train")
    assert len(first) == 1824 and train[: len(first)] == first
    assert {p.text for p in train[len(first) :]}.isdisjoint(p.text for p in first)
