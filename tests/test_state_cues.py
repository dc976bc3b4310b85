"""Figures that colour by token state give every state its own marker symbol or fill pattern
beside its colour (palette.STATE_SYMBOLS / STATE_PATTERNS), named in the legend."""

import pytest

from specdec_core.course import block as bd
from specdec_core.course import tree_drafts as td
from specdec_core.course.cost import check_claims
from specdec_core.live.stats import Timeline
from specdec_core.viz import block as block_viz
from specdec_core.viz import cost as cost_viz
from specdec_core.viz import law_live as law_live_viz
from specdec_core.viz import live as live_viz
from specdec_core.viz import palette
from specdec_core.viz import rounds as rounds_viz
from specdec_core.viz import self_spec as self_spec_viz
from specdec_core.viz import tree_drafts as tree_viz
from tests.figure_strings import figure_text, string
from tests.test_block_demo import replay

BLOCK = figure_text("block")
LIVE = figure_text("live")
STATES = ("accepted", "rejected", "corrected", "bonus", "target", "void")


@pytest.fixture(scope="module")
def demo() -> bd.BlockDemo:
    target = bd.target_chain("story")
    return replay(target, bd.draft_chain(target, "good"), [0], 4, seed=4, rounds=60)


def _round(demo: bd.BlockDemo, rejected: bool) -> tuple[bd.BlockRound, list[int]]:
    for rnd in demo.rounds:
        if (rnd.rejected is not None and len(rnd.void) >= 1) if rejected else rnd.rejected is None:
            return rnd, demo.committed[: rnd.length_after - len(rnd.committed)]
    raise AssertionError("no such round in the fixture run")


def _by_state(fig, text) -> dict[str, object]:
    """The traces of `fig` named after a state in `text`, by state."""
    names = {text[s]: s for s in STATES if s in text}
    return {names[tr.name]: tr for tr in fig.data if tr.name in names}


def _patterns(traces) -> dict[str, str]:
    return {s: tr.marker.pattern.shape or "" for s, tr in traces.items()}


def _symbols(traces) -> dict[str, str]:
    return {s: tr.marker.symbol for s, tr in traces.items()}


def test_the_live_timeline_fills_each_states_bars_with_its_pattern():
    tl = Timeline(
        rounds=[1, 2, 3, 4],
        drafted=[3, 3, 0, 2],
        accepted=[3, 1, 0, 2],
        committed=[4, 2, 1, 3],
        last_kind=["bonus", "corrected", "target", "bonus"],
    )
    traces = _by_state(live_viz.timeline_figure(tl, None, LIVE), LIVE)
    assert set(traces) == {"accepted", "corrected", "bonus", "target"}
    assert _patterns(traces) == {s: palette.STATE_PATTERNS[s] for s in traces}
    assert len(set(_patterns(traces).values())) == len(traces)
    assert all(tr.marker.color == palette.KIND_COLOURS[s] for s, tr in traces.items())


def test_the_rounds_figure_fills_each_states_bars_with_its_pattern(demo):
    traces = _by_state(rounds_viz.rounds_figure(demo.rounds, BLOCK), BLOCK)
    assert set(traces) == {"accepted", "corrected", "bonus"}
    assert _patterns(traces) == {s: palette.STATE_PATTERNS[s] for s in traces}


def test_a_rounds_slots_carry_their_states_symbols(demo):
    for rejected in (True, False):
        rnd, _ = _round(demo, rejected)
        traces = _by_state(block_viz.round_figure(rnd, bd.WORDS, BLOCK), BLOCK)
        want = {"rejected", "corrected", "void"} if rejected else {"bonus"}
        assert want <= set(traces)
        assert _symbols(traces) == {s: palette.STATE_SYMBOLS[s] for s in traces}
        drawn = {s: len(tr.x) for s, tr in traces.items()}
        outcomes = list(rnd.slot_outcomes)
        assert drawn == {s: outcomes.count(s) + (s == "corrected" and rejected) for s in drawn}


def test_the_rows_figure_marks_each_outlined_cell_with_its_states_symbol(demo):
    rnd, _ = _round(demo, rejected=True)
    fig = block_viz.rows_figure(rnd, bd.WORDS, BLOCK)
    shown = [tr for tr in fig.data if tr.type == "scatter" and tr.showlegend is not False]
    assert [tr.name for tr in shown] == [
        BLOCK[s] for s in ("accepted", "rejected", "corrected", "bonus", "void")
    ]
    assert all(tr.marker.symbol == palette.STATE_SYMBOLS[tr.legendgroup] for tr in shown)
    marks = [tr for tr in fig.data if tr.type == "scatter" and tr.x != (None,)]
    outlined = sum(len(tr.x) for tr in marks)
    assert outlined == 2 * rnd.k + 1  # each draft in both heatmaps, and the corrected token


def test_the_cache_figure_marks_the_rounds_tokens_by_state(demo):
    rnd, prefix = _round(demo, rejected=False)
    traces = _by_state(block_viz.cache_figure(rnd, bd.WORDS, prefix, BLOCK), BLOCK)
    assert set(traces) == set(rnd.kinds)
    assert sum(len(tr.x) for tr in traces.values()) == len(rnd.committed)
    assert _symbols(traces) == {s: palette.STATE_SYMBOLS[s] for s in traces}


def test_tree_nodes_carry_their_states_symbols():
    target, draft = td.lesson_pair("story", "poor")
    text = dict(string("en", "tree_drafts", "fig"))
    for seed in range(8):
        rnd = td.TreeDemo(target, draft, [0], (2, 2), seed).step()
        if "rejected" in rnd.status and "unexamined" in rnd.status:
            break
    fig = tree_viz.draft_tree_figure(
        [target.labels[t] for t in rnd.tokens], rnd.layout.parents, rnd.status, text, ("y", rnd.kinds[-1])
    )
    nodes = {tr.name: tr.marker.symbol for tr in fig.data if tr.mode == "markers+text"}
    statuses = {text[s]: s for s in ("root", "accepted", "rejected", "unexamined", "corrected", "bonus")}
    symbols = {statuses[name]: symbol for name, symbol in nodes.items()}
    assert {"rejected", "unexamined"} <= set(symbols)
    assert len(set(symbols.values())) == len(symbols)  # one shape per status
    for status, symbol in symbols.items():
        if status != "root":
            assert symbol == palette.STATE_SYMBOLS[tree_viz.STATUS_STATES[status]]


def test_right_and_wrong_marks_differ_in_shape_as_well_as_colour():
    cost_text = figure_text("cost")
    seed = ((0.9, 4, 4.1), (0.9, 7, 6.5))  # one claim that holds, one that does not
    fig = cost_viz.expected_tokens_figure((0.9,), 8, 0.8, 3, check_claims(seed), cost_text)
    by_name = {tr.name: tr for tr in fig.data}
    assert by_name[cost_text["claim_ok"]].marker.symbol == palette.STATE_SYMBOLS["accepted"]
    assert by_name[cost_text["claim_wrong"]].marker.symbol == palette.STATE_SYMBOLS["rejected"]
    drafts = self_spec_viz.drafts_figure(
        ["a", "b"], [0.9, 0.1], [0.0, 0.5], [2.0, 0.5], "a", figure_text("self_spec")
    )
    assert list(drafts.data[0].marker.symbol) == [
        palette.STATE_SYMBOLS["accepted"],
        palette.STATE_SYMBOLS["rejected"],
    ]


def test_the_broken_rules_bars_are_hatched():
    text = figure_text("law_live")
    fig = law_live_viz.share_bars(["a"], [0.6, 0.4], [0.55, 0.45], [0.9, 0.1], text)
    shapes = {tr.name: tr.marker.pattern.shape or "" for tr in fig.data}
    assert shapes[text["broken"]] == palette.STATE_PATTERNS["rejected"] != shapes[text["counted"]]
    tv = law_live_viz.tv_bars(["right", "wrong"], [0.01, 0.3], [0.02, 0.02], text)
    assert list(tv.data[0].marker.pattern.shape) == ["", palette.STATE_PATTERNS["rejected"]]
