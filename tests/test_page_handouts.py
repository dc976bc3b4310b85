"""The handouts: their numbers are the course's maths (the rule's output law is p, the tables are
specdec_core.theory, the worked example is the notation page's), the proof sheet shows the block
lesson's own proof, and the page shows each sheet in both languages from its link."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from specdec_core.course.handouts import HANDOUTS, MAX_GAMMA, rule_sheet, speedup_sheet
from specdec_core.live.profile_quotes import course_costs
from specdec_core.theory import best_gamma, expected_tokens, linear_verify_cost, speedup
from specdec_core.verify import output_distribution
from support.apptest import open_page
from tests.profile_text import rendered


def _toml(lang: str) -> dict:
    return tomllib.loads((LESSONS / lang / "handouts.toml").read_text("utf-8"))


def test_the_rule_sheet_takes_the_pair_apart_and_emits_p():
    sheet = rule_sheet()
    assert sheet.tokens == ("A", "B", "C")
    np.testing.assert_allclose(sheet.overlap + sheet.deficit, sheet.p, atol=1e-15)
    np.testing.assert_allclose(sheet.overlap + sheet.surplus, sheet.q, atol=1e-15)
    np.testing.assert_allclose(sheet.emitted, output_distribution(sheet.p, sheet.q), atol=1e-15)
    np.testing.assert_allclose(sheet.emitted, sheet.p, atol=1e-15)
    assert sheet.alpha == pytest.approx(0.6) and sheet.rejection == pytest.approx(0.4)
    np.testing.assert_allclose(sheet.residual, [0.25, 0.75, 0.0])  # the overlap lesson's numbers


def test_the_rule_sheet_has_no_residual_when_nothing_is_rejected():
    sheet = rule_sheet("equal")
    assert sheet.residual is None and sheet.rejection == 0.0
    np.testing.assert_allclose(sheet.emitted, sheet.p)


@pytest.mark.parametrize("beta", [0.0, 0.075])
def test_the_speedup_tables_are_the_theory(beta):
    sheet = speedup_sheet(beta)
    verify = linear_verify_cost(beta)
    for i, a in enumerate(sheet.alphas):
        for j, g in enumerate(sheet.gammas):
            assert sheet.tokens[i, j] == pytest.approx(expected_tokens(a, g))
            assert sheet.ideal[i, j] == pytest.approx(speedup(a, g, sheet.c))
            assert sheet.linear[i, j] == pytest.approx(speedup(a, g, sheet.c, verify))
        assert (
            sheet.best_ideal[i] == best_gamma(a, sheet.c, 1.0, MAX_GAMMA) < MAX_GAMMA
        )  # not cut at the limit
        assert sheet.best_linear[i] == best_gamma(a, sheet.c, verify, MAX_GAMMA)
        assert sheet.best_linear_speedup[i] == pytest.approx(
            max(speedup(a, g, sheet.c, verify) for g in range(1, 17))
        )


def test_the_worked_example_is_the_notation_pages(pinned_profile):
    example = speedup_sheet(course_costs().beta().value).example
    assert f"{example['tokens']:.4f}" == "3.3616"
    for lang in ("en", "zh"):
        worked = rendered(lang, "notation", "worked")
        assert f"{example['tokens']:.4f}" in worked and f"= {example['linear']:.2f}" in worked, lang
        assert f"{example['verify']:.2f} = {example['round_linear']:.2f}" in worked, lang  # a round's cost
    assert f"{example['ideal']:.2f}" == "2.80"  # the teach page's motivation step


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_handout_shows_from_its_link(lang, pinned_profile):
    proof = parse((LESSONS / lang / "block.md").read_text("utf-8")).sections["proof"]
    for handout in HANDOUTS:
        at = open_page("handouts", lang, query={"handout": handout})
        assert at.radio(key="handout").value == handout and not at.warning
        text = "\n".join(m.value for m in at.markdown)
        charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        if handout == "rule":
            assert len(charts) == 2 and "| A | 0.20 | 0.10 |" in text
        else:
            assert not charts
        if handout == "speedup":
            example = _toml(lang)["speedup"]["example"].format(**speedup_sheet(0.075).example)
            assert "| 0.8 | 1.80 | 2.44 | 2.95 | 3.36 |" in text and example in text
        if handout == "proof":
            body = proof.split("\n", 1)[1]  # the lesson's proof, its heading the sheet's title
            assert body in text


def test_an_unknown_handout_in_the_link_shows_the_first_with_a_note():
    at = open_page("handouts", query={"handout": "poster"})
    assert at.radio(key="handout").value == HANDOUTS[0] and at.warning
