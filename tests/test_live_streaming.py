"""The streaming feed hands out each span once, with the text the finished view gives it."""

import pytest

from specdec_core.engine import autoregressive, generate, summarize
from specdec_core.live.streaming import TextFeed, played
from specdec_core.live.text import readable, spans
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.sampling import SamplingConfig

# Token texts with characters split over tokens, as byte-level tokenizers show them:
# 猫 is e7 8c ab; 好 is e5 a5 bd.
PIECES = ["a", "\\xe7", "\\x8c", "\\xab", " b", "\\xe5\\xa5", "\\xbd", "c", "\\xe7\\x8c\\xab", " "]


def feed_all(events, text_of) -> list:
    """Every span of `events`, as one feed fed them all hands them out."""
    feed = TextFeed(text_of)
    for e in events:
        feed.add(e)
    return feed.take()


def text_of(token: int) -> str:
    return PIECES[token % len(PIECES)]


@pytest.fixture(scope="module")
def runs():
    target, draft = toy_target(), toy_draft()
    ids = target.encode("the cat")
    cfg = SamplingConfig(temperature=0.9)
    return [list(generate(target, draft, ids, cfg, 4, 60, seed)) for seed in range(4)] + [
        list(autoregressive(target, ids, cfg, 30, 1))
    ]


def _finished_view(events):
    items = spans(events)
    return items, readable(
        [text_of(s.token) for s in items], [s.kind not in ("rejected", "void") for s in items]
    )


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_pieces_handed_out_add_up_to_the_finished_text(runs, chunk):
    for events in runs:
        feed = TextFeed(text_of)
        got = []
        for i, e in enumerate(events):
            feed.add(e)
            if i % chunk == 0:
                got += feed.take()
        got += feed.take()
        assert feed.take() == []  # nothing handed out twice
        items, shown = _finished_view(events)
        assert [g.span for g in got] == items
        # the same text except where readable adds the still-incomplete bytes at the very end
        last_in_text = max((i for i, s in enumerate(items) if s.kind not in ("rejected", "void")), default=-1)
        for i, (g, want) in enumerate(zip(got, shown, strict=True)):
            if i != last_in_text:
                assert g.text == want, i


def test_some_runs_split_characters_so_the_pieces_are_tested(runs):
    assert any(g.text is None for events in runs for g in feed_all(events, text_of))
    assert any(g.text == "猫" for events in runs for g in feed_all(events, text_of))


def test_running_totals_equal_the_summary(runs):
    for events in runs:
        feed = TextFeed(text_of)
        for e in events:
            feed.add(e)
        sm = summarize(events)
        assert (feed.rounds, feed.tokens) == (sm.rounds, sm.tokens)
        assert feed.seconds == pytest.approx(sm.seconds, abs=1e-12)
        assert feed.tokens_per_second == pytest.approx(sm.tokens_per_second)


def test_a_playback_shows_each_round_after_the_capped_pauses_before_it():
    seconds = [0.1, 2.0, 0.05, 0.3]  # the second round's pause is capped at 0.4
    assert [played(seconds, t, 0.4) for t in (0.0, 0.09, 0.1, 0.49, 0.5, 0.55, 10.0)] == [1, 1, 2, 2, 3, 4, 4]
    assert played([], 5.0, 0.4) == 0
    assert played([-1.0, 0.2], 0.0, 0.4) == 2, "a negative time is no pause"
