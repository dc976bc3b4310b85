"""The streaming feed hands out each span once, with the text the finished view gives it."""

import pytest

from specdec_core.engine import autoregressive, generate, summarize
from specdec_core.live.model_choices import toy_draft, toy_target
from specdec_core.live.streaming import Chunks, TextFeed
from specdec_core.live.text import readable, spans
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


@pytest.mark.parametrize("per", [1, 3, 8])
def test_chunks_rewrite_a_few_elements_that_add_up_to_the_text(runs, per):
    """What a view shows element by element (each rewritten with its chunk) is the feed's text,
    in order; an element holds `per` repaints, so 10 repaints make ceil(10 / per) elements."""
    for events in runs:
        feed, chunks = TextFeed(text_of), Chunks(per)
        elements: list[list] = []
        repaints = 0
        for e in events:
            feed.add(e)
            new = feed.take()
            if not new:
                continue
            fresh, chunk = chunks.add(new)
            if fresh:
                elements.append([])
            assert chunk[: len(elements[-1])] == elements[-1], "a rewrite keeps what the element showed"
            elements[-1] = chunk
            repaints += 1
        assert [x for el in elements for x in el] == feed_all(events, text_of)
        assert len(elements) == -(-repaints // per)
        assert all(len(el) > 0 for el in elements)


def test_chunks_need_one_repaint_at_least():
    with pytest.raises(ValueError, match="at least 1"):
        Chunks(0)
