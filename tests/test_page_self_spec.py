"""The self-speculation lesson under AppTest (both languages), and its figure builders.

The page reads the shipped measurements in assets/head/ (early exits per depth, the head's
card); the tests compare what it shows with those files and with the theory.
"""

import json
import tomllib
from pathlib import Path

import pytest

from specdec_core.course.cards import CARD_FILE, MEDUSA_CARD_FILE, head_card, medusa_card
from specdec_core.course.self_spec import (
    CALIBRATION_FILE,
    EARLY_EXIT_FILE,
    draft_rows,
    early_exit,
    head_calibration,
)
from specdec_core.live.profile_quotes import course_costs
from specdec_core.models.head import CONFIDENCE_FLOOR
from specdec_core.theory import best_gamma, linear_verify_cost, speedup
from specdec_core.viz import palette
from specdec_core.viz import self_spec as viz
from support.apptest import ROOT, open_page

TITLES = {"en": "Self-speculation", "zh": "自投机"}


def _strings(lang: str) -> dict:
    return tomllib.loads(Path(ROOT, "lessons", lang, "self_spec.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_loads_with_the_shipped_measurements(lang):
    at = open_page("self_spec", lang)
    assert at.title[0].value == TITLES[lang]
    assert not at.warning and not at.error and not at.info
    # early exits, Medusa by head, the head's calibration, the head by depth, the drafts map
    assert len(at.get("plotly_chart")) == 5
    card = json.loads(CARD_FILE.read_text(encoding="utf-8"))
    values = [m.value for m in at.metric]
    assert values[0] == f"{card['evaluation']['greedy_acceptance_gamma4']:.2f}"
    assert values[2] == f"{card['cost_ratio']:.3f}"
    assert len(at.radio) == len(_strings(lang)["quiz"])
    text = " ".join(m.value for m in at.markdown)
    assert "DeepSeek" in text and "EAGLE" in text and "LayerSkip" in text and "Medusa" in text
    medusa = json.loads(MEDUSA_CARD_FILE.read_text(encoding="utf-8"))
    medusa_caption = next(c.value for c in at.caption if f"{medusa['cost_ratio']:.3f}" in c.value)
    assert f"{medusa['evaluation']['accepted_per_round_chain']:.2f}" in medusa_caption
    assert f"{card['evaluation']['accepted_per_round_gamma4']:.2f}" in medusa_caption


def test_the_medusa_figure_shows_the_shipped_heads_beside_the_eagle_head():
    medusa, card = medusa_card(), head_card()
    by_head = (medusa.greedy_by_head, medusa.chain_by_head, medusa.top3_by_head)
    fig = viz.medusa_figure(*by_head, card.greedy_by_depth, _strings("en")["fig"])
    assert [tuple(t.y) for t in fig.data] == [
        medusa.greedy_by_head,
        medusa.chain_by_head,
        medusa.top3_by_head,
        card.greedy_by_depth[: medusa.heads],
    ]
    assert all(a <= b for a, b in zip(medusa.greedy_by_head, medusa.top3_by_head, strict=True))


def test_early_exit_data_is_the_measurement_and_rises_to_the_full_model():
    exits = early_exit()
    raw = json.loads(EARLY_EXIT_FILE.read_text(encoding="utf-8"))
    assert exits.depths == tuple(range(1, 31)) and exits.greedy == tuple(raw["greedy"])
    assert exits.greedy[-1] == 1.0 and exits.alpha_t07[-1] == pytest.approx(1.0, abs=1e-3)
    assert max(exits.greedy[:8]) < 0.3 < exits.greedy[-2]  # shallow exits fail, the last layers agree


def test_draft_rows_carry_the_theorys_best_gamma_and_speedup(pinned_profile):
    costs = course_costs()
    rows = {r.key: r for r in draft_rows(lambda d: costs.draft_c(d).value, costs.beta().value)}
    assert "head" in rows and "medusa" in rows and "bf16" in rows
    assert rows["bf16"].cost == 0.71 and rows["ngram_summary"].cost == 0.0  # the profile's costs
    verify = linear_verify_cost(costs.beta().value)
    for r in rows.values():
        assert r.gamma == best_gamma(r.alpha, r.cost, verify, 12)
        assert r.predicted == pytest.approx(float(speedup(r.alpha, r.gamma, r.cost, verify)))
    assert rows["layers8"].predicted < 1.0 < rows["ngram_copy_high"].predicted
    assert rows["head"].cost == round(head_card().cost_ratio, 2)  # as the cost page's preset


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figures_build_with_each_languages_strings(lang):
    fig_text = _strings(lang)["fig"]
    exits = early_exit()
    fig = viz.early_exit_figure(exits.depths, exits.greedy, exits.alpha_t1, exits.alpha_t07, 0.4, fig_text)
    assert [len(t.x) for t in fig.data] == [30, 30, 30]
    fig = viz.head_depth_figure([0.5, 0.3], [0.4, 0.2], fig_text)
    assert [list(t.y) for t in fig.data] == [[0.5, 0.3], [0.4, 0.2]]
    fig = viz.drafts_figure(["a", "b"], [0.9, 0.1], [0.0, 0.5], [2.0, 0.5], "a", fig_text)
    faster, slower = palette.ACCEPTED, palette.REJECTED  # than the target
    assert list(fig.data[0].marker.color) == [faster, slower]
    with pytest.raises(KeyError, match="figure strings"):
        viz.early_exit_figure((1,), (0.1,), (0.1,), (0.1,), None, {})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_calibration_figure_draws_the_shipped_measurement_beside_the_diagonal(lang):
    cal = head_calibration()
    shipped = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    assert cal.floor == shipped["best_floor"] == CONFIDENCE_FLOOR  # the engine uses what the lesson shows
    assert cal.tokens_per_step_floor > cal.tokens_per_step_no_floor
    fig = viz.calibration_figure(
        cal.confidence_by_depth[:3], cal.agreement_by_depth[:3], _strings(lang)["fig"]
    )
    diagonal, *depths = fig.data
    assert tuple(diagonal.x) == (0, 1) == tuple(diagonal.y)
    assert [tuple(t.x) for t in depths] == list(cal.confidence_by_depth[:3])
    assert [tuple(t.y) for t in depths] == list(cal.agreement_by_depth[:3])
    for conf, agree in zip(cal.confidence_by_depth, cal.agreement_by_depth, strict=True):
        assert list(conf) == sorted(conf) and all(0 <= x <= 1 for x in (*conf, *agree))
    at = open_page("self_spec", lang)
    caption = next(c.value for c in at.caption if f"{cal.tokens_per_step_floor:.3f}" in c.value)
    assert f"{cal.tokens_per_step_no_floor:.3f}" in caption and str(cal.positions) in caption
    with pytest.raises(ValueError, match="at most"):
        viz.calibration_figure(cal.confidence_by_depth, cal.agreement_by_depth, _strings(lang)["fig"])
