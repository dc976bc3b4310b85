"""CrossVocabularyDraft on a toy pair over two vocabularies (tests/markov_cross_pair.py):
the output law is the target's, greedy equals target greedy, the draft reads the text's
canonical spelling with its cache kept for the common prefix; negative controls fail."""

from __future__ import annotations

import numpy as np
import pytest

import specdec_core.engine.rows as engine_rows
from specdec_core.engine import RunOptions, autoregressive, generate
from specdec_core.models import MarkovChainLM
from specdec_core.models.cross import CrossVocabularyDraft, CrossVocabularySession
from specdec_core.sampling import SamplingConfig
from specdec_core.stats import chisquare
from specdec_core.verify import project, sample
from tests.markov_cross_pair import (
    DRAFT_MODEL,
    DRAFT_TEXTS,
    START,
    TARGET,
    TARGET_TEXTS,
    TO_TARGET,
    V,
    cross_draft,
    draft_law_after,
    joint_law,
    to_draft,
)
from tests.markov_pair import ALPHA

#: Runs per law test: the negative control below fails at p ≈ 1e-48 with 800 runs, so half
#: the runs of tests/markov_pair.py keep ample power.
RUNS = 1500
CONTROL_RUNS = 500


def sequence_counts(draft, cfg: SamplingConfig, gamma: int, runs: int = RUNS, n: int = 3) -> np.ndarray:
    counts = np.zeros(V**n)
    for seed in range(runs):
        toks = [t for e in generate(TARGET, draft, [START], cfg, gamma, n, seed) for t in e.committed]
        assert len(toks) == n
        counts[int(np.ravel_multi_index(toks, (V,) * n))] += 1
    return counts


def test_the_pair_has_the_three_traps():
    assert to_draft([TARGET_TEXTS.index("ab")]) == [DRAFT_TEXTS.index("a"), DRAFT_TEXTS.index("b")]
    assert TO_TARGET[DRAFT_TEXTS.index("bc")] == -1
    ab, c = TARGET_TEXTS.index("ab"), TARGET_TEXTS.index("c")
    assert to_draft([ab]) + to_draft([c]) != to_draft([ab, c]) == [0, DRAFT_TEXTS.index("bc")]


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
@pytest.mark.parametrize(
    ("gamma", "cfg"),
    [(3, SamplingConfig()), (2, SamplingConfig(temperature=0.8, top_k=3, top_p=0.9))],
)
def test_output_follows_the_target_law(gamma, cfg):
    counts = sequence_counts(cross_draft(), cfg, gamma)
    assert chisquare(counts, joint_law(cfg)).p_value > ALPHA


def test_greedy_equals_target_greedy_and_only_twins_are_proposed():
    greedy = SamplingConfig(temperature=0)
    for start in range(V):
        expected = [t for e in autoregressive(TARGET, [start], greedy, 40) for t in e.committed]
        for gamma in (1, 4):
            events = list(generate(TARGET, cross_draft(), [start], greedy, gamma, 40))
            assert [t for e in events for t in e.committed] == expected
    sampled = list(generate(TARGET, cross_draft(), [START], SamplingConfig(), 4, 200, 3))
    proposed = {t for e in sampled for t in e.draft_tokens}
    assert TARGET_TEXTS.index("ab") not in proposed and proposed <= {0, 1, 2, 4}
    assert sum(e.accepted_count for e in sampled) > 0


def _check_rows_follow_the_canonical_spelling(draft) -> None:
    """Every q row a run reports is the draft's projected law after the text's canonical spelling."""
    context = [START]
    for e in generate(TARGET, draft, context, SamplingConfig(), 3, 60, 7, options=RunOptions(top_n=V)):
        for i, row in enumerate(e.q_rows):
            want = draft_law_after(context + e.draft_tokens[:i])
            got = np.zeros(V)
            got[row.ids] = row.probs
            np.testing.assert_allclose(got, want, atol=1e-12)
        context = context + e.committed


def test_the_draft_reads_the_canonical_spelling_of_the_text():
    _check_rows_follow_the_canonical_spelling(cross_draft())
    _check_rows_follow_the_canonical_spelling(cross_draft(lookback=1))


class _AppendOnlySession(CrossVocabularySession):
    """The bug the tail re-spelling avoids: each target token spelled alone and appended."""

    def _spelling(self) -> list[int]:
        return [d for t in self.ids for d in to_draft([t])]


class _AppendOnlyDraft(CrossVocabularyDraft):
    def session(self, prompt_ids):
        return _AppendOnlySession(self, prompt_ids)


def test_negative_control_skipping_the_tail_respelling_is_caught():
    """Appending spellings leaves "a" "b" "c" where the text reads "a" "bc": the rows the draft
    reports are then not its law on the text. (The output law cannot catch this: verification
    is exact for any law the draft samples from, and it still samples from the rows it reports.)"""
    broken = _AppendOnlyDraft(DRAFT_MODEL, TO_TARGET, to_draft, V)
    with pytest.raises(AssertionError):
        _check_rows_follow_the_canonical_spelling(broken)
    counts = sequence_counts(broken, SamplingConfig(), 3, runs=CONTROL_RUNS)
    assert chisquare(counts, joint_law(SamplingConfig())).p_value > ALPHA


def test_negative_control_sampling_from_q_instead_of_its_projection_fails_the_law_test(monkeypatch):
    """A draft that draws from its own q and, for a token without a twin, proposes the target
    token its text starts with ("bc" → "b"), while reporting the projection, breaks the law."""
    raw: dict[int, np.ndarray] = {}
    real_projected = CrossVocabularySession._projected

    def stash(self):
        out = real_projected(self)
        z = self._row
        raw[id(out)] = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        self.model._last_raw = raw.pop(id(out))
        return out

    real_draw = engine_rows.RunMaths.draw

    def draw_from_q(self, row):
        _, reported = real_draw(self, row)
        q = getattr(draft, "_last_raw", None)
        if q is None or row.shape[-1] != V or getattr(draft, "_used", None) is q:
            return real_draw(self, row)
        draft._used = q
        x = sample(q, self.rng)
        twin = TO_TARGET[x]
        first = TARGET_TEXTS.index(DRAFT_TEXTS[x][0])
        return int(twin if twin >= 0 else first), reported

    draft = cross_draft()
    monkeypatch.setattr(CrossVocabularySession, "_projected", stash)
    monkeypatch.setattr(engine_rows.RunMaths, "draw", draw_from_q)
    counts = sequence_counts(draft, SamplingConfig(), 3, runs=CONTROL_RUNS)
    assert chisquare(counts, joint_law(SamplingConfig())).p_value < ALPHA


class _CountingSession:
    """A Markov draft session that records what it is fed and how it is rolled back."""

    def __init__(self, inner, log):
        self.inner, self.log = inner, log

    @property
    def length(self):
        return self.inner.length

    def extend(self, ids):
        self.log.append(("feed", list(ids)))
        return self.inner.extend(ids)

    def truncate(self, n):
        self.log.append(("crop", n))
        self.inner.truncate(n)


class _CountingDraft(MarkovChainLM):
    def session(self, prompt_ids):
        s = _CountingSession(super().session([]), self.log)
        if len(prompt_ids):
            s.extend(prompt_ids)
        return s


def test_the_draft_cache_is_kept_for_the_common_prefix_of_successive_spellings():
    model = _CountingDraft(DRAFT_MODEL.transitions, labels=DRAFT_TEXTS)
    model.log = []
    a, b, c, ab = (TARGET_TEXTS.index(t) for t in ("a", "b", "c", "ab"))
    s = CrossVocabularyDraft(model, TO_TARGET, to_draft, V).session([a])
    rows = s.extend([ab, c])  # one row per target token: after "aab", then after "aabc"
    np.testing.assert_allclose(np.exp(rows[0]), draft_law_after([a, ab]), atol=1e-12)
    np.testing.assert_allclose(np.exp(rows[1]), draft_law_after([a, ab, c]), atol=1e-12)
    assert s.inner.inner.tokens == to_draft([a, ab, c]) == [0, 0, 3]
    assert model.log[-2:] == [("crop", 2), ("feed", [3])]  # "a a b" → "a a bc": only the tail
    s.truncate(2)
    model.log.clear()
    row = s.extend([b])  # "aab" + "b": the spelling "a a b b" shares "a a b" with the cache
    np.testing.assert_allclose(np.exp(row[0]), draft_law_after([a, ab, b]), atol=1e-12)
    assert model.log == [("crop", 2), ("feed", [1, 1])]
    assert s.spelling == [0, 0, 1, 1] and s.length == 3


@pytest.mark.parametrize("lookback", [1, 2, 8])
def test_the_spelling_stays_canonical_through_extends_and_rollbacks(lookback):
    rng = np.random.default_rng(lookback)
    s = cross_draft(lookback=lookback).session([START])
    for _ in range(300):
        if rng.random() < 0.3 and s.length > 1:
            s.truncate(max(1, s.length - int(rng.integers(1, 5))))  # a rollback of rejected drafts
            continue
        fed = [int(t) for t in rng.integers(0, V, size=int(rng.integers(1, 4)))]
        rows = s.extend(fed)
        assert s.spelling == to_draft(s.ids) and s.inner.tokens == to_draft(s.ids)
        np.testing.assert_allclose(np.exp(rows[-1]), draft_law_after(s.ids), atol=1e-12)
    assert len(s._marks) > 1  # settled splits were found, so tails stay short


@pytest.mark.parametrize("to_target", [TO_TARGET, np.array([0, 0, 1, -1, 4])])
def test_rows_are_the_log_of_verify_project(to_target):
    """One twin per target token (the fast path) or two draft tokens with one twin (summed)."""
    s = CrossVocabularyDraft(DRAFT_MODEL, to_target, None, V).session([])
    for t in range(V):
        row = s.extend([t])[0]
        q = np.exp(DRAFT_MODEL.next_logits(t))
        np.testing.assert_allclose(np.exp(row), project(q / q.sum(), to_target, V), atol=1e-15)


def test_pieces_and_twins_for_display():
    d = cross_draft()
    a, ab = TARGET_TEXTS.index("a"), TARGET_TEXTS.index("ab")
    assert d.pieces([a, ab]) == [[0], [0, 1]]
    assert d.twin(DRAFT_TEXTS.index("bc")) is None and d.twin(DRAFT_TEXTS.index("d")) == TARGET_TEXTS.index(
        "d"
    )


def test_bad_wrappers_are_refused():
    with pytest.raises(ValueError, match="each of the draft's 5 logits"):
        CrossVocabularyDraft(DRAFT_MODEL, TO_TARGET[:4], to_draft, V)
    with pytest.raises(ValueError, match="no draft token has a twin"):
        CrossVocabularyDraft(DRAFT_MODEL, [-1] * 5, to_draft, V)
    with pytest.raises(ValueError, match="outside"):
        CrossVocabularyDraft(DRAFT_MODEL, TO_TARGET, to_draft, 3)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        cross_draft().session([START]).extend([V])
