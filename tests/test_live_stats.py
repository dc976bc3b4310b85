"""Live statistics: consistent with the events, the i.i.d. law, and the comparison with target-only."""

import numpy as np
import pytest

from specdec_core.engine import autoregressive, generate
from specdec_core.live.stats import compare, live_stats, progress_curve, round_law, timeline
from specdec_core.live.text import counts, spans
from specdec_core.live.trace import RunRecord
from specdec_core.models import NGramDraft
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.sampling import SamplingConfig
from specdec_core.theory import expected_tokens, tokens_per_round_law

TARGET, DRAFT = toy_target(), toy_draft()
PROMPT = TARGET.encode("the cat sat on the mat . the dog ran home . the cat sat on the")


@pytest.fixture(scope="module")
def events():
    return list(
        generate(TARGET, DRAFT, PROMPT, SamplingConfig(temperature=1.0), 4, 120, seed=4, adaptive_gamma=True)
    )


def test_stats_add_up_to_the_events(events):
    st = live_stats(events)
    tokens = sum(len(e.committed) for e in events)
    assert st.summary.tokens == tokens and st.summary.rounds == len(events)
    assert st.counts.sum() == len(events)
    assert st.counts @ np.arange(1, st.counts.size + 1) == tokens
    accepted = sum(e.accepted_count for e in events)
    examined = accepted + sum(e.rejected for e in events)
    assert st.alpha == pytest.approx(accepted / examined)
    assert st.forwards_saved == tokens - len(events)
    assert st.mean_measured == pytest.approx(tokens / len(events))
    law = st.law
    assert law is not None and law.sum() == pytest.approx(1.0)
    drafted = [len(e.draft_tokens) for e in events]
    assert st.mean_theory == pytest.approx(np.mean([expected_tokens(st.alpha, k) for k in drafted]))
    assert law @ np.arange(1, law.size + 1) == pytest.approx(st.mean_theory)


def test_round_law_reduces_to_the_lesson_law_for_a_fixed_gamma():
    np.testing.assert_allclose(round_law(0.7, [4, 4, 4]), tokens_per_round_law(0.7, 4))
    np.testing.assert_allclose(round_law(0.5, [0, 2]), [0.5 + 0.25, 0.125, 0.125])
    with pytest.raises(ValueError):
        round_law(0.5, [])


def test_timeline_and_spans_match_the_events(events):
    tl = timeline(events)
    assert tl.committed == [len(e.committed) for e in events]
    assert tl.committed == [a + 1 for a in tl.accepted], "the toy chain has no EOS: every round adds one more"
    pairs = zip(tl.accepted, tl.drafted, strict=True)
    expected = ["target" if d == 0 else "bonus" if a == d else "corrected" for a, d in pairs]
    assert tl.last_kind == expected, "a round without drafts is a plain target step"
    n = counts(spans(events))
    kinds = [k for e in events for k in e.kinds]
    plain = sum(1 for e in events if not e.draft_tokens)
    assert n["accepted"] == kinds.count("accepted") and n["bonus"] == kinds.count("bonus") - plain
    assert n["target"] == plain
    assert n["rejected"] == n["corrected"] == kinds.count("corrected")
    assert n["void"] == 0
    with_void = counts(spans(events, show_void=True))["void"]
    assert with_void == sum(
        len(e.draft_tokens) - e.accepted_count - 1 for e in events if "corrected" in e.kinds
    )
    seconds, tokens = progress_curve(events)
    assert tokens[-1] == sum(tl.committed) and np.all(np.diff(seconds) >= 0)


def test_greedy_speculative_text_equals_target_only_and_speedup_is_a_rate_ratio():
    cfg = SamplingConfig(temperature=0)
    spec = list(generate(TARGET, NGramDraft.for_model(TARGET), PROMPT, cfg, 4, 50, seed=0))
    base = list(autoregressive(TARGET, PROMPT, cfg, 50, seed=0))
    cmp = compare(RunRecord(spec, 2.0), RunRecord(base, 3.0))
    assert cmp.identical is True and cmp.first_difference is None
    assert cmp.spec_tokens == cmp.base_tokens == 50
    assert cmp.wall_speedup == pytest.approx(1.5)
    stopped = compare(RunRecord(spec[:3], 1.0, stopped=True), RunRecord(base, 3.0))
    assert stopped.identical is None and stopped.first_difference == sum(len(e.committed) for e in spec[:3])


def test_sampled_texts_may_differ_and_are_compared_by_rate(events):
    base = list(autoregressive(TARGET, PROMPT, SamplingConfig(temperature=1.0), 120, seed=4))
    cmp = compare(RunRecord(events, 1.0), RunRecord(base, 1.0))
    assert cmp.identical is False and cmp.first_difference is not None
    assert cmp.wall_speedup == pytest.approx(cmp.spec_tokens / cmp.base_tokens)
