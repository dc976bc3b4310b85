"""The 90-minute route as a lecturer keeps to it: the law lab in the proof section, time for the
whole-sequence proof, the roofline page in the cost section, each section's objectives and
each step's misconception in both languages, and the concept check before and after (the same
five concepts with other numbers, recomputed here by specdec_core) that learners answer on the
teach page and the Class answers view sets side by side."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest
from sqlalchemy import create_engine

from pages.common.i18n import LESSONS, Strings
from pages.common.nav import PAGES
from pages.common.quiz import check_questions
from specdec_core.course.teach import (
    CHECK_CONCEPTS,
    CHECK_PAGES,
    CLASS,
    LECTURE,
    ROUTE,
)
from specdec_core.live import answers
from specdec_core.live.answers import Tally, option_letter
from specdec_core.theory import expected_tokens, speedup
from specdec_core.verify import decompose
from specdec_core.viz.answers import check_comparison
from support.apptest import ROOT, open_page, rerun
from tests.test_quizzes import _giveaways

LANGS = ("en", "zh")
#: Every step key the route had before the law lab and the check came: saved links and the
#: class's answers name them, so none may go.
KEPT = (
    "motivation", "notation", "greedy", "overlap", "tree", "answers_why", "block", "proof", "cost",
    "answers_rounds", "live", "race", "tree_drafts", "self_spec", "tokenizers", "compare",
    "exercises", "answers_models",
)  # fmt: skip


def _teach(lang: str) -> dict:
    return tomllib.loads((LESSONS / lang / "teach.toml").read_text("utf-8"))


def _section(key: str):
    return next(section for section in CLASS.sections if section.key == key)


def test_every_earlier_step_key_is_kept():
    keys = [step.key for step in ROUTE]
    assert all(key in keys for key in KEPT), [k for k in KEPT if k not in keys]
    assert {"handouts", "answers_lecture"} <= {step.key for step in LECTURE.steps}


def test_the_law_lab_follows_the_proof_and_the_proof_has_its_time():
    rounds = [step.key for step in _section("rounds").steps]
    assert rounds.index("law_live") == rounds.index("proof") + 1
    law = next(step for step in ROUTE if step.key == "law_live")
    proof = next(step for step in ROUTE if step.key == "proof")
    assert law.page == "law_live" and law.minutes == 5
    assert 8 <= proof.minutes <= 10


def test_the_cost_section_ends_on_the_roofline_before_the_rooms_answers():
    """The roofline page (batch and hardware) follows the cost step, five minutes, in time for
    the section's answers."""
    keys = [step.key for step in _section("rounds").steps]
    assert keys[-3:] == ["cost", "roofline", "answers_rounds"]
    roofline = next(step for step in ROUTE if step.key == "roofline")
    assert roofline.page == "roofline" and roofline.minutes == 5
    assert (ROOT / "pages" / "roofline.py").is_file() and "roofline" in {p.key for p in PAGES}
    assert CLASS.planned + CLASS.slack == 90


@pytest.mark.parametrize("lang", LANGS)
def test_each_section_has_objectives_and_each_step_its_misconception(lang):
    table = _teach(lang)
    for route in (CLASS, LECTURE):
        for section in route.sections:
            objectives = table["sections"][section.key]["objectives"]
            assert len(objectives) >= 2 and all(o.strip() for o in objectives), section.key
    for step in ROUTE:
        assert table["steps"][step.key]["misconception"].strip(), step.key
    en = _teach("en")
    for section in CLASS.sections:  # the same number of objectives in both languages
        assert len(table["sections"][section.key]["objectives"]) == len(
            en["sections"][section.key]["objectives"]
        )


def _check(lang: str) -> dict:
    return _teach(lang)["check"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_check_asks_five_concepts_before_and_after_without_giving_answers_away(lang):
    check = _check(lang)
    before, after = check["questions"]["before"], check["questions"]["after"]
    assert len(check["concepts"]) == len(before) == len(after) == CHECK_CONCEPTS == 5
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        assert a["kind"] == b["kind"] and len(a["options"]) == len(b["options"]), i
        assert a["question"] != b["question"], i  # other numbers
        for when, item in (("before", a), ("after", b)):
            assert not _giveaways(item), (lang, when, i, _giveaways(item))
    letters = [q["answer"] for q in before + after]
    assert max(letters.count(j) for j in set(letters)) <= len(letters) / 3


def test_the_check_is_the_same_in_both_languages():
    en, zh = _check("en"), _check("zh")
    assert len(en["concepts"]) == len(zh["concepts"])
    for when in ("before", "after"):
        for a, b in zip(en["questions"][when], zh["questions"][when], strict=True):
            assert (a["answer"], a["kind"], len(a["options"])) == (b["answer"], b["kind"], len(b["options"]))


def _stated(when: str, i: int, right: str, *given: str) -> None:
    """The right option of concept i reads `right`, and the question states each of `given`,
    in both languages."""
    for lang in LANGS:
        item = _check(lang)["questions"][when][i]
        assert item["options"][item["answer"]] == right, (lang, when, i)
        for number in given:
            assert number in item["question"], (lang, when, i, number)


@pytest.mark.parametrize(
    ("when", "p", "q"),
    [("before", (0.5, 0.3, 0.2), (0.3, 0.3, 0.4)), ("after", (0.7, 0.1, 0.2), (0.3, 0.4, 0.3))],
)
def test_concept_one_the_acceptance_rate(when, p, q):
    d = decompose(np.array(p), np.array(q))
    _stated(when, 0, f"{d.acceptance_rate:.2f}", str(p), str(q))
    for lang in LANGS:  # R is among the wrong options
        assert f"{d.rejection_mass:.2f}" in _check(lang)["questions"][when][0]["options"]


@pytest.mark.parametrize(
    ("when", "p", "q", "proposed"),
    [("before", (0.5, 0.3, 0.2), (0.2, 0.2, 0.6), 2), ("after", (0.1, 0.5, 0.4), (0.5, 0.3, 0.2), 0)],
)
def test_concept_two_the_residual_after_a_rejection(when, p, q, proposed):
    d = decompose(np.array(p), np.array(q))
    assert d.residual is not None and d.residual[proposed] == 0  # the rejected token never comes back
    right = "(" + ", ".join(f"{x:g}" for x in np.round(d.residual, 3)) + ")"
    _stated(when, 1, right, str(p), str(q))


@pytest.mark.parametrize(("when", "alpha", "gamma"), [("before", 0.6, 3), ("after", 0.9, 2)])
def test_concept_three_tokens_per_round(when, alpha, gamma):
    _stated(when, 2, f"{expected_tokens(alpha, gamma):.2f}", f"α = {alpha}", f"γ = {gamma}")


@pytest.mark.parametrize(("when", "alpha", "gamma", "c"), [("before", 0.8, 3, 0.1), ("after", 0.7, 4, 0.05)])
def test_concept_four_the_speedup_with_a_priced_draft(when, alpha, gamma, c):
    _stated(when, 3, f"{speedup(alpha, gamma, c):.2f}×", f"α = {alpha}", f"γ = {gamma}", f"c = {c}")
    tokens = expected_tokens(alpha, gamma)
    wrong = (tokens, tokens / (gamma * c + gamma + 1), tokens / ((gamma + 1) * c + 1))
    for lang in LANGS:
        assert {f"{x:.2f}×" for x in wrong} <= set(_check(lang)["questions"][when][3]["options"])


def test_the_check_view_of_the_teach_page_shows_only_the_lettered_questions():
    en = _check("en")["questions"]["before"]
    at = open_page("teach", query={"check": "before"})
    assert not at.exception
    assert [r.key for r in at.radio] == [f"quiz_check_before_{i}" for i in range(5)]
    assert at.radio[0].options == [f"{option_letter(j)}. {o}" for j, o in enumerate(en[0]["options"])]
    assert not [c for c in at.get("page_link") if "teach" not in c.proto.page]  # no route links
    teacher = open_page("teach")
    assert not [r for r in teacher.radio if r.key.startswith("quiz_check")]


def test_the_class_answers_view_sets_the_check_before_and_after_side_by_side(monkeypatch, tmp_path):
    db_file = tmp_path / "answers.sqlite"
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(db_file))
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_TEACHER_PASSCODE", "owl-42")
    check = _check("en")["questions"]
    learner = open_page("teach", query={"check": "before"})
    learner.radio(key="quiz_check_before_0").set_value((check["before"][0]["answer"] + 1) % 4)  # wrong
    rerun(learner)
    learner = open_page("teach", query={"check": "after"})
    learner.radio(key="quiz_check_after_0").set_value(check["after"][0]["answer"])  # right
    rerun(learner)
    engine = create_engine(f"sqlite:///{db_file}")
    try:
        stored = {
            name: answers.tally(engine, answers.DEFAULT_CODE, name, [(4, q["answer"]) for q in check[when]])
            for when, name in CHECK_PAGES.items()
        }
    finally:
        engine.dispose()
    assert stored["check_before"][0].share_correct == 0 and stored["check_after"][0].share_correct == 1
    teacher = open_page(
        "answers", query={"answers_page": "check"}, state={"_answers_teacher": True}, timeout=120
    )
    assert not teacher.exception and teacher.selectbox(key="answers_page").value == "check"
    charts = [c for c in teacher.get("plotly_chart")]
    assert len(charts) == 1 + 2 * CHECK_CONCEPTS  # the comparison, then each concept's two histograms
    summary = json.loads(charts[0].proto.spec)
    assert [trace["y"][0] for trace in summary["data"]] == [0, 100]  # concept 1: 0 % before, 100 % after


@pytest.mark.parametrize("lang", LANGS)
def test_the_comparison_figure_shows_each_concepts_share_before_and_after(lang):
    text_ = Strings("answers", lang)["fig"]
    concepts = _teach(lang)["check"]["concepts"]
    before = [Tally((1, 3, 0, 0), 1), Tally((0, 0, 0, 0), 0), *[Tally((2, 2, 0, 0), 0)] * 3]
    after = [Tally((0, 4, 0, 0), 1), Tally((1, 0, 0, 0), 0), *[Tally((4, 0, 0, 0), 0)] * 3]
    fig = check_comparison(before, after, concepts, text_).to_dict()
    first, second = fig["data"]
    assert first["y"][0] == 75 and second["y"][0] == 100
    assert first["y"][1] is None and second["y"][1] == 100  # nobody answered yet: no bar, no 0/0
    assert all("…" not in label for label in first["x"])
    with pytest.raises(ValueError):
        check_comparison(before[:2], after, concepts, text_)


def test_the_law_step_uses_models_the_warm_up_loads():
    """The lab's own samples are each learner's, so warming cannot replay them; it loads their
    models: the law step's target and draft are the Compare step's grid's, which the class's
    warm-up runs."""
    steps = {step.key: step for step in ROUTE}
    law, compare = steps["law_live"].query, steps["compare"].query
    assert law["law_target"] in compare["cmp_targets"].split(",")
    assert law["law_draft"] in compare["cmp_drafts"].split(",")


def test_the_loader_refuses_a_check_without_five_questions_each_time():
    class Short:
        lang = "en"

        def __getitem__(self, key: str):
            table = _check("en")["questions"]
            return {"before": table["before"], "after": table["after"][:4]}

    with pytest.raises(ValueError, match="concept check"):
        check_questions(Short())
    assert [len(v) for v in check_questions(Strings("teach", "en")).values()] == [5, 5]
