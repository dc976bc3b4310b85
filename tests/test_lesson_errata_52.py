"""Errors a reviewer found in the lessons (issue 52), each pinned so it cannot come back: numbers
are recomputed from specdec_core, claims are checked against the rule they describe."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace

import numpy as np
import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from specdec_core import verify
from specdec_core.course import pairs
from specdec_core.engine.drafters import keeps_draft
from specdec_core.live.compare import Cell, Measured
from specdec_core.live.profile_quotes import course_costs
from specdec_core.theory import expected_tokens, linear_verify_cost, speedup
from specdec_core.verify import decompose
from tests.profile_text import rendered
from tests.test_confidence_floor_law import FLOOR, Q_ROWS

LANGS = ("en", "zh")


def _md(lang: str, page: str) -> str:
    """The lesson text with each line break inside a paragraph read as a space."""
    return re.sub(r"(?<=\S)\n(?=\S)", " ", (LESSONS / lang / f"{page}.md").read_text("utf-8"))


def _section(lang: str, page: str, section: str) -> str:
    """One section of a lesson, every line break (and the indent after it) read as a space."""
    text = parse((LESSONS / lang / f"{page}.md").read_text("utf-8")).sections[section]
    return re.sub(r"[ \t]*\n[ \t]*", " ", text)


def _toml(lang: str, page: str) -> dict:
    return tomllib.loads((LESSONS / lang / f"{page}.toml").read_text("utf-8"))


# ---------------------------------------------------------------- item 2: the whole-sequence proof
@pytest.mark.parametrize("lang", LANGS)
def test_the_proofs_history_holds_stop_decisions_not_the_rounds_gamma(lang):
    proof = _section(lang, "block", "proof")
    for stale in ("each round's γ", "γ was set before the round", "每一轮的 γ", "γ 在本轮开始前就定了"):
        assert stale not in proof, stale
    a, b = Q_ROWS[0]
    assert f"$q = ({a:g}, {b:g})$" in proof and f"${FLOOR:g}$" in proof
    # the example's claim: a second draft follows A, not B (tests/test_confidence_floor_law.py
    # enumerates the whole law)
    assert keeps_draft(a * max(a, b), 1, FLOOR) and not keeps_draft(b * max(a, b), 1, FLOOR)
    assert f"q(y_1) \\times {max(a, b):g} \\ge {FLOOR:g}" in proof


# ---------------------------------------------------------------- item 1: compare's pooled τ
def _worked_cell() -> Cell:
    """The compare lesson's worked cell: 32 tokens in 10, 16 and 8 target passes; 6 of the 34
    rounds accept all 4 drafts (they sit in the third prompt: 6 × 4 = 24 of its 24 accepted)."""
    gamma, clean = 4, {2: 6}
    runs = []
    for i, passes in enumerate((10, 16, 8)):
        accepted = 32 - passes  # each pass commits its accepted drafts plus one token
        examined = accepted + passes - clean.get(i, 0)  # one rejected draft per other round
        assert accepted <= gamma * clean.get(i, 0) + (gamma - 1) * (passes - clean.get(i, 0))
        runs.append(Measured("t", "d", "c", i, 32, passes, gamma * passes, accepted, examined, 1.0, 1.0, ()))
    return Cell("t", "d", "c", tuple(runs), tuple(runs), True)


@pytest.mark.parametrize("lang", LANGS)
def test_the_compare_example_pools_tau_and_counts_62_accepted_drafts(lang):
    cell, text = _worked_cell(), _md(lang, "compare")
    tokens = sum(r.tokens for r in cell.runs)
    passes = sum(r.target_passes for r in cell.runs)
    accepted = sum(r.accepted for r in cell.runs)
    examined = sum(r.examined for r in cell.runs)
    assert (tokens, passes, accepted) == (96, 34, 62)
    assert f"$\\tau = {tokens}/{passes} = {cell.tau:.2f}$" in text
    assert f"$\\hat\\alpha = {accepted}/{examined} = {cell.acceptance:.2f}$" in text
    assert f"${tokens} - {passes} = {accepted}$" in text and "61" not in text
    assert f"{sum(cell.taus) / 3:.2f}" in text  # the plain mean, named only as what τ is not


@pytest.mark.parametrize("lang", LANGS)
def test_a_free_drafts_projection_is_said_to_be_the_pooled_tau(lang):
    projection = _section(lang, "compare", "projection")
    assert "projection is $\\tau$ itself" not in projection and "推算值就是 $\\tau$ 本身" not in projection
    cell = _worked_cell()
    free = Cell("t", "ngram", "c", tuple(replace(r, draft_forwards=0) for r in cell.runs), cell.runs, True)
    assert free.projected(0.05) == pytest.approx(free.tau) != pytest.approx(sum(free.taus) / 3)
    assert "$\\tau$" in projection and ("pooled" in projection or "合并计算" in projection)


# ---------------------------------------------------------------- item 4: the notation page's pair
@pytest.mark.parametrize("lang", LANGS)
def test_the_notation_example_is_not_called_the_overlap_lessons_pair(lang):
    worked = _section(lang, "notation", "worked")
    abc = pairs.to_pair(pairs.preset_rows("abc"))
    assert "$p = ({:g}, {:g}, {:g})$".format(*abc.p) in worked
    assert "$q = ({:g}, {:g}, {:g})$".format(*abc.q) in worked
    assert "Take the A/B/C pair of the overlap lesson" not in worked and "一课的 A/B/C 这一对" not in worked
    p, other = np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.4, 0.3])
    assert np.argmax(other) == 1 and np.argmax(p) == 0  # B is its favourite, A the target's
    assert "$q' = ({:g}, {:g}, {:g})$".format(*other) in worked
    assert f"{decompose(p, other).acceptance_rate:g}" == "0.8" and "stays 0.8" not in worked
    intro = _section(lang, "notation", "intro")
    assert "\\hat\\alpha = \\mu" not in intro


# ---------------------------------------------------------------- items 5 and 6: tokenizers
@pytest.mark.parametrize("lang", LANGS)
def test_a_reduced_head_can_raise_acceptance_as_the_lesson_says(lang):
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    cut = verify.project(q, np.array([0, 1, -1]), 3)
    before, after = decompose(p, q).acceptance_rate, decompose(p, cut).acceptance_rate
    assert (before, after) == (0.5, 1.0)
    frspec = _section(lang, "tokenizers", "frspec")
    assert "$\\tilde q = ({:g}, {:g}, {:g})$".format(*cut) in frspec
    assert f"${before:.1f}$" in frspec and f"${after:.1f}$" in frspec
    assert "drops only by" not in frspec and "只下降" not in frspec


@pytest.mark.parametrize("lang", LANGS)
def test_the_cost_list_names_segmentation_mismatch_and_the_paper_its_title(lang):
    cost = _section(lang, "tokenizers", "cost")
    for piece in ('"\'s"', '"belie"', '"bel"', '"iev"', '"unbelievably"'):
        assert piece in cost, piece
    sources = _section(lang, "tokenizers", "sources")
    title = "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for "
    assert f'"{title}Heterogeneous Vocabularies"' in sources
    assert "ICML 2025" in sources and "PMLR 267" in sources


@pytest.mark.slow
def test_the_segmentation_example_is_how_the_shipped_tokenizers_split():
    from specdec_core.live.tokenizer_view import split
    from specdec_core.models.bundled import GEMMA, SMOLLM2, load_tokenizer

    smol, gemma = load_tokenizer(SMOLLM2), load_tokenizer(GEMMA)
    assert [p.text for p in split(smol, gemma, "unbelievably")] == ["un", "belie", "v", "ably"]
    assert [p.text for p in split(gemma, smol, "unbelievably")] == ["un", "bel", "iev", "ably"]
    assert [(p.text, p.twin) for p in split(smol, gemma, "cat's")][1] == ("'s", False)
    assert [p.text for p in split(gemma, smol, "cat's")][1:] == ["'", "s"]
    assert not {p.twin for p in split(smol, gemma, "unbelievably") if p.text == "belie"} - {False}


# ---------------------------------------------------------------- item 7: one verification figure
@pytest.mark.parametrize("lang", LANGS)
def test_every_five_row_verification_figure_is_the_profiles(lang, pinned_profile):
    """The cost, notation and self-speculation lessons quote one verification, the profile's
    (tests/test_profile_lessons.py finds any written into a lesson file)."""
    costs = course_costs()
    v5, beta = costs.verify(5).value, costs.beta().value
    v4 = linear_verify_cost(beta)(4)
    assert (v5, beta) == (pytest.approx(1.3), pytest.approx(0.075))  # the pinned profile's
    notation = rendered(lang, "notation", "worked")
    assert f"{v5:.2f}" in notation and f"\\beta = {beta:g}" in notation
    assert f"4 \\times 0.05 + {v4:.2f} = " in notation
    self_spec = rendered(lang, "self_spec", "worked")
    assert f"\\beta = {beta:g}" in self_spec and f"4 \\times 0.05 + {v4:.2f} = " in self_spec
    assert f"v(4) = {v4:.2f}" in rendered(lang, "cost", "measured")
    every = " ".join(p.read_text("utf-8") for p in (LESSONS / lang).glob("*.*"))
    assert "1.2 single steps" not in every and "约花 1.2 个单步" not in every


# ---------------------------------------------------------------- item 8: ℓ is the exit depth
@pytest.mark.parametrize("lang", LANGS)
def test_the_layer_skip_depth_is_written_ell_not_k(lang):
    """The notation page keeps k for top-k and ℓ for how many layers an early-exit draft runs."""
    symbols = {s["key"]: s for s in _toml(lang, "notation")["symbol"]}
    assert symbols["ell"]["tex"] == "\\ell" and "race" in symbols["ell"]["lessons"]
    race, live = _toml(lang, "race"), _toml(lang, "live")
    texts = [_md(lang, "race"), race["depths"], live["draft_help"], live["k_lowered"], live["k"]]
    wrong = re.compile(r"first \$?k\$? layers|depths k\b|^k = |前 \$?k\$? 层|深度 k\b")
    assert not [t for t in texts if wrong.search(t)]
    assert "\\ell" in _md(lang, "race") and all("ℓ" in t for t in texts[1:])


# ------------------------------------------- item 9: constant v (2.80) against the profile's v
@pytest.mark.parametrize("lang", LANGS)
def test_notation_and_cost_say_why_the_same_draft_gives_two_speedups(lang, pinned_profile):
    verify_cost = linear_verify_cost(course_costs().beta().value)
    tokens = expected_tokens(0.8, 4)
    constant, priced = speedup(0.8, 4, 0.05), speedup(0.8, 4, 0.05, verify_cost)
    assert f"{constant:.2f}" != f"{priced:.2f}"  # the pinned verification costs more than a step
    notation = rendered(lang, "notation", "worked")
    assert f"$4 \\times 0.05 + 1 = {4 * 0.05 + 1:.1f}$" in notation
    assert f"$S(4) = {constant:.2f}$" in notation and f"= {priced:.2f}$" in notation
    cost = rendered(lang, "cost", "measured")
    assert f"$S = {tokens:.2f}/{4 * 0.05 + 1:.1f} = {constant:.2f}$" in cost
    assert f"${tokens:.2f}/{4 * 0.05 + verify_cost(4):.2f} = {priced:.2f}$" in cost
