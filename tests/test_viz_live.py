"""Figures and HTML of the live pages: escaped token text, coloured kinds, timeline, race charts."""

import html
import itertools
import re

import numpy as np
import pytest

from specdec_core.engine import generate
from specdec_core.live.stats import timeline
from specdec_core.live.text import TokenSpan, readable, spans, token_bytes
from specdec_core.models.toy_words import toy_draft, toy_target
from specdec_core.sampling import SamplingConfig
from specdec_core.viz import live as viz
from specdec_core.viz import race as race_viz
from tests.figure_strings import LANGS, figure_text

TEXT = figure_text("live")


def test_visible_marks_whitespace_without_escaping():
    assert viz.visible("a\nb") == "a↵\nb"
    assert viz.visible("   ") == "␣␣␣"
    assert viz.visible("") == "∅"
    assert viz.visible("\t<b>") == "⇥<b>"
    assert viz.label(" hello world and more") == "␣hello␣worl…"


def test_tokens_html_escapes_every_token_and_prompt():
    items = [
        TokenSpan(1, "accepted", 0, 0, q=0.5, p=0.25, accept_prob=0.5),
        TokenSpan(2, "rejected", 0, 1, q=0.9, p=0.1, accept_prob=0.111),
        TokenSpan(3, "corrected", 0, 1),
        TokenSpan(4, "bonus", 1, 3, p=0.7),
    ]
    texts = {1: "<script>", 2: 'x" onmouseover="alert(1)', 3: "&amp;", 4: "\n"}
    out = viz.tokens_html("<img src=x onerror=alert(1)>", items, texts.__getitem__, TEXT, selected_round=1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<img" not in out and "&lt;img src=x" in out
    assert 'onmouseover="' not in out and "&quot;" in out
    assert "&amp;amp;" in out
    assert "↵\n" in out
    classes = re.findall(r'class="sd-tok ([a-z ]+)"', out)
    assert classes == ["prompt", "accepted", "rejected", "corrected", "bonus"]
    assert out.count("outline:2px") == 1, "only the selected round's token is outlined"
    assert "min(1, p/q) = 0.5" in out and "p(x) = 0.7" in out


def test_long_prompts_are_cut_to_their_tail():
    out = viz.tokens_html("a" * 1000, [], str, TEXT, prompt_chars=50)
    assert TEXT["earlier"].format(n=950) in out and "a" * 51 not in out


def test_legend_names_each_kind_in_the_given_language():
    out = viz.legend_html(
        ["accepted", "rejected", "void"], {**TEXT, "accepted": "接受"}, {"accepted": 12, "void": 0}
    )
    assert (
        "接受 · 12" in out
        and f">{TEXT['rejected']}<" in out
        and f"{TEXT['void']} · 0" in out
        and 'class="sd-tok rejected void"' in out
        and html.escape(TEXT["legend_lines"]) in out  # the sentence naming each state's line
    )


def test_timeline_stacks_accepted_and_last_token_under_the_drafted_bar():
    target = toy_target()
    events = list(generate(target, toy_draft(), target.encode("the cat"), SamplingConfig(), 4, 60, seed=1))
    tl = timeline(events)
    fig = viz.timeline_figure(tl, 2, TEXT)
    by_name = {t.name: t for t in fig.data}
    assert list(by_name[TEXT["drafted"]].y) == tl.drafted
    assert list(by_name[TEXT["accepted"]].y) == tl.accepted
    for kind in ("corrected", "bonus"):
        trace = by_name[TEXT[kind]]
        np.testing.assert_array_equal(trace.base + trace.y, [tl.committed[x] for x in trace.x])
    assert list(by_name[TEXT["selected"]].x) == [2]
    with pytest.raises(ValueError):
        viz.timeline_figure(timeline([]), None, TEXT)


def test_speed_and_row_figures():
    fig = viz.speed_figure([("<b>spec</b>", np.array([0, 1.0]), np.array([0, 5]), "#000")], TEXT)
    assert fig.data[0].name == "&lt;b&gt;spec&lt;/b&gt;"
    row = viz.row_bars(["<script>", "b", "other"], [0.5, 0.3, 0.2], 0, TEXT)
    assert "&lt;script&gt;" in row.layout.xaxis.ticktext
    assert row.data[0].marker.line.width == (3, 0, 0)
    with pytest.raises(ValueError):
        viz.row_bars(["a"], [0.5, 0.5], None, TEXT)


def test_spans_put_the_rejected_draft_before_its_correction():
    target = toy_target()
    events = list(generate(target, toy_draft(), target.encode("the cat"), SamplingConfig(), 4, 80, seed=3))
    items = spans(events)
    pairs = [(a, b) for a, b in itertools.pairwise(items) if a.kind == "rejected"]
    assert pairs
    for a, b in pairs:
        assert b.kind == "corrected" and (b.round, b.slot) == (a.round, a.slot)


def test_race_figures_put_each_draft_on_its_own_curve():
    points = [
        race_viz.RacePoint("n-gram", 0.9, 2.1, 1.8, (4, 4, 0), 0.01, 1.2),
        race_viz.RacePoint("<b>bf16</b>", 0.99, 0.6, 0.5, (4, 4), 1.8, 1.3),
        race_viz.RacePoint("never examined", None, 1.0, 1.0, (0,), 0.0, 1.0),
    ]
    fig = race_viz.theory_figure(points, figure_text("race"))
    assert len(fig.data) == 4, "a curve and a marker per draft with an α"
    assert fig.data[1].x == (0.9,) and fig.data[1].y == (2.1,)
    assert "&lt;b&gt;" in fig.data[3].name
    bars = race_viz.bars_figure(points, figure_text("race"))
    assert len(bars.data) == 3 and list(bars.data[1].y) == [2.1, 0.6, 1.0]


def test_character_pieces_read_as_text_where_the_character_completes():
    assert token_bytes("\\xe4\\xb8") == b"\xe4\xb8" and token_bytes(" a\\xad") == b" a\xad"
    texts = ["\\xe4\\xb8", "\\xad", " \\xe6\\x96", "\\x87!", "\\xe4"]
    assert readable(texts, [True] * 5) == [None, "中", " ", "文!", "\\xe4"]
    assert readable(["\\xe4\\xb8", "x", "\\xad"], [True, False, True]) == [None, "x", "中"], (
        "drafts are read alone"
    )
    items = [TokenSpan(i, "target", i, 0) for i in range(2)]
    out = viz.tokens_html("", items, {0: "\\xe4\\xb8", 1: "\\xad"}.__getitem__, TEXT)
    assert ">·</span>" in out and ">中</span>" in out and html.escape(TEXT["tip_piece"]) in out
    assert 'class="sd-tok target piece"' in out and out.count("sd-piece-note") == 1  # the note says why
    whole = viz.tokens_html("", items[:1], {0: "中"}.__getitem__, TEXT)
    assert "piece" not in whole  # no piece, no note


@pytest.mark.parametrize("lang", LANGS)
def test_every_view_draws_in_each_language(lang):
    text, target = figure_text("live", lang), toy_target()
    events = list(generate(target, toy_draft(), target.encode("the cat"), SamplingConfig(), 4, 40, seed=2))
    items = spans(events, show_void=True)
    out = viz.tokens_html("the cat", items, target.token_text, text, selected_round=1)
    assert all(html.escape(text[s.kind]) in out for s in items)
    assert text["void"] in viz.legend_html(["accepted", "void", "target"], text)
    assert viz.timeline_figure(timeline(events), 1, text).layout.xaxis.title.text == text["round_axis"]
    assert (
        text["tokens_hover"]
        in viz.speed_figure([("a", np.array([0, 1.0]), np.array([0, 5]), "#000")], text).data[0].hovertemplate
    )
    assert viz.row_bars(["a", "b"], [0.5, 0.5], 1, text).layout.annotations[0].text == text["chosen"]
    point = race_viz.RacePoint("n-gram", 0.9, 2.1, 1.8, (4, 4, 0), 0.01, 1.2)
    race = figure_text("race", lang)
    assert race_viz.theory_figure([point], race).data[0].name == race["curve"].format(name="n-gram")
    assert race_viz.bars_figure([point], race).layout.annotations[0].text == race["alpha_panel"]
