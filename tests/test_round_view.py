"""One round inside the model, on Markov chains: what the engine now records inside a round
(each examined draft's u, each draft step's seconds, both sessions' lengths), carried through
a trace, and the round page's data (specdec_core.live.round_view) and figures drawn from it."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from specdec_core.engine import RoundEvent, RunOptions, generate
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.round_view import CONTEXT_SHOWN, chain_rounds, plain_step_s, round_view, text_before
from specdec_core.live.settings import LiveSettings
from specdec_core.live.trace import LiveTrace, RunRecord, TraceError, from_json, to_json
from specdec_core.models import MarkovChainLM, NGramDraft
from specdec_core.sampling import SamplingConfig
from specdec_core.viz import round as viz

PROMPT = [0, 1, 2]


def _chain(seed: int, v: int = 7) -> MarkovChainLM:
    t = np.random.default_rng(seed).random((v, v)) ** 3
    return MarkovChainLM(t / t.sum(axis=1, keepdims=True))


def _run(seed: int = 3, gamma: int = 4, **kw) -> list[RoundEvent]:
    return list(generate(_chain(1), _chain(2), PROMPT, gamma=gamma, max_new_tokens=40, seed=seed, **kw))


def test_each_examined_draft_has_the_u_its_test_compared():
    for events in (
        _run(),
        _run(sampling=SamplingConfig(temperature=0.0)),
        _run(options=RunOptions(reference=True)),
    ):
        for e in events:
            assert len(e.draft_u) == len(e.acceptance_probs)
            decisions = [u < a for u, a in zip(e.draft_u, e.acceptance_probs, strict=True)]
            assert decisions == [k == "accepted" for k in e.kinds[: len(decisions)]]
            assert all(0.0 <= u < 1.0 for u in e.draft_u)
    assert any(e.rejected for e in _run())


def test_the_fast_and_reference_paths_draw_the_same_u():
    fast, ref = _run(), _run(options=RunOptions(reference=True))
    assert [e.draft_u for e in fast] == [e.draft_u for e in ref]


def test_same_seed_same_events_but_timings():
    a, b = _run(seed=5), _run(seed=5)
    assert [e.to_dict(timings=False) for e in a] == [e.to_dict(timings=False) for e in b]
    assert "draft_step_s" not in a[0].to_dict(timings=False)
    assert [e.draft_u for e in _run(seed=6)] != [e.draft_u for e in a]


def test_the_sessions_lengths_follow_the_round():
    """The target held all but the last committed token, read it and the drafts, and kept it and
    the accepted drafts; the draft session is always a prefix of the same text."""
    events = _run()
    for i, e in enumerate(events):
        before = len(text_before(PROMPT, events, i))
        t0, t_peak, t1 = e.cache["target"]
        assert (t0, t_peak, t1) == (before - 1, before + len(e.draft_tokens), before + e.accepted_count)
        d0, d_peak, d1 = e.cache["draft"]
        assert d0 <= d_peak <= before - 1 + len(e.draft_tokens) and d1 <= t1
        assert len(e.draft_step_s) == len(e.draft_tokens) and all(s >= 0 for s in e.draft_step_s)
        if i + 1 < len(events):
            assert events[i + 1].cache["target"][0] == t1


def test_a_lookup_draft_has_no_draft_cache_and_no_steps():
    prompt = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    events = list(generate(_chain(1, 4), NGramDraft(4), prompt, gamma=3, max_new_tokens=20, seed=0))
    assert all("draft" not in e.cache and e.draft_step_s == [] for e in events)
    view = round_view(prompt, events, 0)
    assert [c.model for c in view.caches] == ["target"]
    assert view.steps[0].kind in ("lookup", "verify")


def test_a_tree_round_is_left_to_its_own_page():
    events = list(generate(_chain(1), _chain(2), PROMPT, max_new_tokens=12, seed=0, tree=(2, 1)))
    assert chain_rounds(events) == []
    with pytest.raises(ValueError, match="tree"):
        round_view(PROMPT, events, 0)


@pytest.mark.parametrize("seed", [0, 3, 8])
def test_the_view_draws_exactly_the_events(seed):
    events = _run(seed=seed)
    for i, e in enumerate(events):
        view = round_view(PROMPT, events, i)
        before = text_before(PROMPT, events, i)
        assert view.inputs == [before[-1], *e.draft_tokens]
        assert view.context == before[max(0, len(before) - 1 - CONTEXT_SHOWN) : -1]
        read = [row for row in view.rows if row.status != "unread"]
        assert [row.emitted for row in read] == e.committed
        assert [row.kind for row in read] == e.kinds
        assert [row.u for row in read if row.u is not None] == e.draft_u
        assert [row.accept_prob for row in read if row.accept_prob is not None] == e.acceptance_probs
        assert [row.q for row in view.rows if row.q is not None] == e.draft_q
        assert [row.p for row in read if row.p is not None] == e.draft_p
        assert view.rejected_row == (e.accepted_count if e.rejected else None)
        assert view.appended == e.committed[-1] and view.appended_kind == e.kinds[-1]
        target = view.caches[0]
        assert (target.before, target.peak, target.after) == tuple(e.cache["target"])
        assert target.cut == len(e.draft_tokens) - e.accepted_count
        assert [c.status for c in target.cells].count("cut") == target.cut
        assert [c.token for c in target.waiting] == [e.committed[-1]]
        kept = [c.token for c in target.cells if c.status == "kept"]
        assert kept == [before[-1], *e.draft_tokens[: e.accepted_count]]
        assert [s.seconds for s in view.steps if s.kind == "draft"] == e.draft_step_s
        assert view.verify_s == e.verify_s


def test_the_plain_step_is_the_baseline_median():
    assert plain_step_s([]) is None
    base = [
        RoundEvent.from_dict({**_run()[0].to_dict(), "mode": "autoregressive", "verify_s": s})
        for s in (3.0, 1.0, 2.0, 9.0)
    ]
    assert plain_step_s(base) == 2.5


def _trace(events: list[RoundEvent]) -> LiveTrace:
    texts = {t: f"<b>{t}</b>" for t in range(7)}
    return LiveTrace(
        LiveSettings(target=TargetSpec("toy"), draft=DraftSpec("toy_draft")),
        "p",
        PROMPT,
        "T",
        "D",
        7,
        texts,
        RunRecord(events, 1.0),
    )


def test_a_trace_keeps_the_new_fields_and_refuses_bad_ones():
    events = _run()
    back = from_json(to_json(_trace(events)))
    assert [e.to_dict() for e in back.speculative.events] == [e.to_dict() for e in events]
    for field, bad in (("cache", {"target": [1, 2]}), ("cache", {"other": [1, 2, 3]}), ("draft_u", [2.5])):
        data = json.loads(to_json(_trace(events)))
        data["speculative"]["events"][0][field] = bad
        with pytest.raises(TraceError):
            from_json(json.dumps(data))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figures_escape_tokens_and_draw_every_row(lang):
    text = tomllib.loads((LESSONS / lang / "round.toml").read_text("utf-8"))["fig"]
    events = _run()
    i = next(i for i, e in enumerate(events) if e.rejected)
    view = round_view(PROMPT, events, i)
    texts = {t: f"<b>{t}</b>" for t in range(7)}
    mask = viz.mask_figure(view, texts, text)
    n_ctx = len(view.context)
    assert len(mask.data[0].x) == sum(n_ctx + r + 1 for r in range(len(view.rows)))  # the triangle
    assert all("<b>" not in label for label in mask.data[0].text)
    assert "&lt;b&gt;" in mask.data[0].text[0]
    test = viz.accept_figure(view, texts, text)
    assert list(test.data[2].x) == events[i].draft_u
    cache = viz.cache_figure(view.caches, texts, text)
    by_state = {trace.name: trace for trace in cache.data}
    assert all("<b>" not in label for trace in cache.data for label in trace.text if label)
    cut = sum(c.cut for c in view.caches)
    assert len([x for x in by_state[text["cut"]].x if x is not None]) == cut > 0
    assert by_state[text["cut"]].marker.symbol == "square-x"  # not told by colour alone
    assert [s.x0 + 0.5 for s in cache.layout.shapes] == [n for c in view.caches for n in (c.before, c.after)]
    timeline = viz.timeline_figure(view.steps, text)
    assert len(timeline.data) == len(view.steps)
