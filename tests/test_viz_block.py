"""specdec_core.viz.block and viz.rounds: the figures carry exactly the rounds' data."""

import numpy as np
import plotly.graph_objects as go
import pytest

from specdec_core.course import block as bd
from specdec_core.models.markov import MarkovChainLM
from specdec_core.viz import block as viz
from specdec_core.viz import rounds
from specdec_core.viz.palette import BONUS, CORRECTED, REJECTED
from tests.figure_strings import LANGS, figure_text
from tests.test_block_demo import replay

LABELS = ["<script>", *bd.WORDS[1:]]  # a label that must never reach plotly as a tag
K = 4
TEXT = figure_text("block")


@pytest.fixture(scope="module")
def demo() -> bd.BlockDemo:
    target = bd.target_chain("story")
    target = MarkovChainLM(target.transitions, labels=LABELS)
    return replay(target, bd.draft_chain(target, "good"), [0], K, seed=4, rounds=60)


def _first(demo: bd.BlockDemo, predicate) -> tuple[bd.BlockRound, list[int]]:
    """The first round matching `predicate`, with the committed text before it."""
    for rnd in demo.rounds:
        if predicate(rnd):
            return rnd, demo.committed[: rnd.length_after - len(rnd.committed)]
    raise AssertionError("no such round in the fixture run")


def _rejected_early(rnd: bd.BlockRound) -> bool:
    return rnd.rejected is not None and len(rnd.void) >= 1


def _all_accepted(rnd: bd.BlockRound) -> bool:
    return rnd.rejected is None


def _texts(fig: go.Figure) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def _cells(fig: go.Figure) -> dict[tuple[int, int], tuple[str, str]]:
    """(row, position) -> (border colour, label) of every cell of the cache figure."""
    labels = {(round(a.y), round(a.x)): a.text for a in fig.layout.annotations if float(a.x).is_integer()}
    cells = {}
    for s in fig.layout.shapes:
        if s.type == "rect":
            key = (round(s.y0 + 0.38), round(s.x0 + 0.45))
            cells[key] = (s.line.color, labels[key])
    return cells


def test_round_figure_shows_each_slot_with_its_outcome(demo):
    rnd, _ = _first(demo, _rejected_early)
    fig = viz.round_figure(rnd, LABELS, TEXT)
    bars = [t for t in fig.data if isinstance(t, go.Bar)]
    np.testing.assert_allclose(bars[0].y, rnd.p_at_drafts)
    np.testing.assert_allclose(bars[1].y, rnd.q_at_drafts)
    accept = next(t for t in fig.data if t.name == TEXT["accept_prob"])
    np.testing.assert_allclose(accept.y, rnd.acceptance_probs)
    assert len(accept.x) == rnd.accepted + 1  # drafts after the rejection are never examined
    borders = [s.line.color for s in fig.layout.shapes if s.line.color]
    assert REJECTED in borders and CORRECTED in borders and BONUS not in borders
    assert borders.count(viz.VOID) == len(rnd.void) + 1  # void drafts and the empty bonus slot
    texts = _texts(fig)
    assert f"<s>{viz.escape(LABELS[rnd.rejected])}</s>" in texts
    assert f"<b>{viz.escape(LABELS[rnd.committed[-1]])}</b>" in texts
    assert not any("<script>" in t for t in texts)
    assert fig.layout.title.text == TEXT["round_title"].format(n=rnd.index, committed=rnd.accepted + 1)


def test_round_figure_bonus_slot(demo):
    rnd, _ = _first(demo, _all_accepted)
    fig = viz.round_figure(rnd, LABELS, {**TEXT, "round_title": "R{n}/{committed}"})
    bonus_bar = [t for t in fig.data if isinstance(t, go.Bar)][2]
    assert list(bonus_bar.x) == [K + 1]
    assert bonus_bar.y[0] == pytest.approx(rnd.p_rows[K][rnd.committed[-1]])
    assert BONUS in [s.line.color for s in fig.layout.shapes]
    assert fig.layout.title.text == f"R{rnd.index}/{K + 1}"


def test_rows_figure_holds_the_k_and_k_plus_one_rows(demo):
    rnd, _ = _first(demo, _rejected_early)
    fig = viz.rows_figure(rnd, LABELS, TEXT)
    q_map, p_map = (t for t in fig.data if isinstance(t, go.Heatmap))
    np.testing.assert_allclose(np.array(q_map.z), rnd.q_rows.T)
    np.testing.assert_allclose(np.array(p_map.z), rnd.p_rows.T)
    assert len(p_map.x) == K + 1 and len(q_map.x) == K
    assert list(fig.layout.yaxis.ticktext) == [viz.escape(lab) for lab in LABELS]
    # the corrected token is outlined in p at the rejected position
    corrected = [s for s in fig.layout.shapes if s.line.color == CORRECTED]
    assert len(corrected) == 1 and corrected[0].y0 == rnd.committed[-1] - 0.5
    assert corrected[0].x0 == rnd.accepted - 0.5


def test_cache_figure_aligns_text_and_caches(demo):
    rnd, prefix = _first(demo, _rejected_early)
    fig = viz.cache_figure(rnd, LABELS, prefix, TEXT)
    cells = _cells(fig)
    text = prefix + rnd.committed
    for row, cache in ((1, rnd.target_cache), (2, rnd.draft_cache)):
        struck = [pos for (r, pos), (_, label) in cells.items() if r == row and label.startswith("<s>")]
        assert sorted(struck) == list(range(cache.after, cache.peak))
        kept = [(pos, label) for (r, pos), (colour, label) in cells.items() if r == row and pos < cache.after]
        for pos, label in kept:  # every kept entry is a committed token at that position
            assert viz.escape(LABELS[text[pos]]) in label
    newest = len(text) - 1  # in the text row, outlined as corrected; in no cache
    assert cells[(0, newest)][0] == CORRECTED
    for row in (1, 2):
        assert (row, newest) not in cells or cells[(row, newest)][1].startswith("<s>")
    with pytest.raises(ValueError, match="prefix"):
        viz.cache_figure(rnd, LABELS, prefix[:-1], TEXT)


def test_rounds_figure_stacks_to_the_committed_count(demo):
    fig = rounds.rounds_figure(demo.rounds, TEXT)
    accepted, corrected, bonus = (np.array(t.y) for t in fig.data)
    np.testing.assert_array_equal(accepted + corrected + bonus, [len(r.committed) for r in demo.rounds])
    assert np.all(corrected + bonus == 1)
    with pytest.raises(ValueError):
        rounds.rounds_figure([], TEXT)


def test_tokens_histogram_matches_counts_and_law(demo):
    summary = bd.summarize(demo.rounds, K)
    fig = rounds.tokens_histogram(
        summary.counts, summary.law, summary.alpha, {**TEXT, "theory": "model {alpha:.1f}"}
    )
    measured, theory = fig.data
    np.testing.assert_allclose(measured.y, summary.counts / summary.counts.sum())
    np.testing.assert_allclose(theory.y, summary.law)
    assert list(measured.x) == list(range(1, K + 2))
    assert theory.name == f"model {summary.alpha:.1f}"
    with pytest.raises(ValueError):
        rounds.tokens_histogram([1, 2], [0.5, 0.3, 0.2], 0.5, TEXT)


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_draws_in_each_language(demo, lang):
    text = figure_text("block", lang)
    (rejected, prefix), (accepted, _) = _first(demo, _rejected_early), _first(demo, _all_accepted)
    summary = bd.summarize(demo.rounds, K)
    figs = [
        viz.round_figure(rejected, LABELS, text),
        viz.round_figure(accepted, LABELS, text),
        viz.rows_figure(rejected, LABELS, text),
        viz.cache_figure(rejected, LABELS, prefix, text),
        rounds.rounds_figure(demo.rounds, text),
        rounds.tokens_histogram(
            summary.counts, summary.law, summary.alpha, figure_text("live.histogram", lang)
        ),
    ]
    assert figs[0].layout.title.text == text["round_title"].format(
        n=rejected.index, committed=rejected.accepted + 1
    )
    assert figs[-1].data[0].name == figure_text("live.histogram", lang)["measured"]
