"""The routes of the teach page: the 90-minute class (its clock, its slack, the memory-bound
motivation first, each section ending with the room's answers) and the 45-minute lecture; their
words in both languages and the numbers those words quote; and every link — its page exists, and
that page, opened at the link's address, takes each value as it stands."""

import itertools
import tomllib
from urllib.parse import parse_qsl

import pytest

from pages.common.i18n import LESSONS
from pages.common.lesson import parse
from pages.common.nav import PAGES
from pages.common.page import FROM_STEP
from specdec_core.course.handouts import HANDOUTS
from specdec_core.course.sampling_lab import examples
from specdec_core.course.teach import (
    CLASS,
    CLASS_MINUTES,
    LECTURE,
    MIN_SLACK,
    MOTIVATION_BY,
    PROOF_ROUNDS,
    ROUTE,
    ROUTES,
    Route,
    Step,
    schedule,
    talking_points,
)
from specdec_core.live.profile_quotes import course_costs
from specdec_core.sampling import SamplingConfig, apply
from specdec_core.theory import expected_tokens, linear_verify_cost, speedup
from support.apptest import ROOT, open_page, shared_link
from tests.profile_text import rendered

PAGE_KEYS = {p.key for p in PAGES}
TITLES = {"en": "Teach it in 90 minutes", "zh": "90 分钟讲完这门课"}
ALL_STEPS = [step for route in ROUTES for step in route.steps]
#: The two links outside checks open: kept exactly as they are, each the only link to its page.
SAMPLING_LAB = {"preset": "peaked", "T": "1", "k": "0", "p": "0.78", "min_keep": "1", "order": "tkp"}
EXERCISES = {"ex_seed": "2026", "ex_topics": "decompose,tokens,block,story", "ex_key": "0"}


def _qp(at, key: str) -> str:
    value = shared_link(at)[key]
    return value[0] if isinstance(value, list) else value


def _step(route: Route, key: str) -> Step:
    return next(step for step in route.steps if step.key == key)


def _toml(lang: str, name: str) -> dict:
    return tomllib.loads((LESSONS / lang / f"{name}.toml").read_text("utf-8"))


def test_the_class_fills_90_minutes_with_ten_to_spare():
    slots = schedule(CLASS)
    assert CLASS.minutes == CLASS_MINUTES == 90 and CLASS.steps == ROUTE
    assert slots[0].start == 0 and all(a.end == b.start for a, b in itertools.pairwise(slots))
    assert slots[-1].end == CLASS.planned == sum(step.minutes for step in ROUTE)
    assert CLASS.slack == 90 - CLASS.planned >= MIN_SLACK[90] >= 10
    assert len({step.key for step in ROUTE}) == len(ROUTE)


def test_the_lecture_fits_45_minutes_with_time_to_spare():
    slots = schedule(LECTURE)
    assert LECTURE.minutes == 45 and slots[-1].end == LECTURE.planned
    assert LECTURE.slack >= MIN_SLACK[45] >= 5
    assert len({step.key for step in LECTURE.steps}) == len(LECTURE.steps)


def test_a_route_longer_than_its_class_is_refused():
    long = Route("x", 10, CLASS.sections)
    with pytest.raises(ValueError, match="plans"):
        schedule(long)


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.key)
def test_the_memory_bound_motivation_opens_the_route(route):
    slots = schedule(route)
    first = next(slot for slot in slots if slot.step.page != "teach")  # after the concept check, if any
    assert first.step.key == "motivation" and first.start == slots[0].start + sum(
        slot.step.minutes for slot in slots[: slots.index(first)]
    )
    assert first.end <= MOTIVATION_BY and all(
        slot.step.key == "check_before" for slot in slots[: slots.index(first)]
    )
    # the cost page in the memory-bound ideal: verification costs one step
    assert first.step.page == "cost" and first.step.query["cost_verify"] == "constant"
    notation = next(slot for slot in schedule(route) if slot.step.key == "notation")
    assert notation.end <= MOTIVATION_BY  # the symbols come before the first formula


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.key)
def test_every_section_ends_with_the_rooms_answers_on_a_page_with_questions(route):
    for section in route.sections:
        last = section.steps[-1]
        assert last.page == "answers", section.key
        for lang in ("en", "zh"):
            page = last.query["answers_page"]
            asked = (
                _toml(lang, "teach")["check"]["questions"]
                if page == "check"
                else _toml(lang, page).get("quiz")
            )
            assert asked, (section.key, lang)
    assert len(CLASS.sections) >= 3


def test_the_class_uses_tokenizers_compare_the_block_proof_and_class_answers():
    pages = [step.page for step in ROUTE]
    for key in (
        "sampling_lab", "overlap", "tree", "block", "cost", "live", "race", "tree_drafts",
        "self_spec", "tokenizers", "compare", "answers", "notation", "exercises", "law_live", "roofline",
    ):  # fmt: skip
        assert key in pages, key
    proof = _step(CLASS, "proof")
    assert proof.page == "block" and int(proof.query["block_round"]) == PROOF_ROUNDS >= 30
    assert proof.handout == "proof"
    assert "proof" in parse((LESSONS / "en" / "block.md").read_text("utf-8")).sections
    assert _step(CLASS, "self_spec").minutes >= 6  # two methods shown well, not five rushed


def test_the_links_outside_checks_open_are_unchanged_and_single():
    assert dict(_step(CLASS, "greedy").query) == SAMPLING_LAB
    assert dict(_step(CLASS, "exercises").query) == EXERCISES
    for page in ("sampling_lab", "exercises"):
        assert [step.page for step in ALL_STEPS].count(page) == 1, page


def test_the_race_link_has_all_three_apprentices():
    race = _step(CLASS, "race")
    assert race.query["race_adaptive"] == "1"  # the third apprentice's trick
    at = open_page("race", query=dict(race.query))
    assert at.session_state["race_adaptive"] is True
    assert len(at.session_state["race_drafts"]) == 3  # the page's default drafts, all racing


def test_the_cost_step_uses_the_notation_pages_numbers(pinned_profile):
    cost = _step(CLASS, "cost")
    beta = course_costs().beta().value
    assert beta == pytest.approx(0.075)  # the pinned profile's, through its 5-row verification
    # the link sets the linear model and leaves β to the cost page, which starts at the profile's
    assert cost.query["cost_verify"] == "linear" and "cost_beta" not in cost.query
    at = open_page("cost", query=dict(cost.query))
    assert at.session_state["cost_verify"] == "linear" and at.session_state["cost_beta"] == beta
    points = talking_points(beta)["cost"]
    assert points["speedup_short"] == pytest.approx(speedup(0.8, 4, 0.05, linear_verify_cost(beta)))
    assert points["ideal_short"] == pytest.approx(speedup(0.8, 4, 0.05))
    for lang in ("en", "zh"):
        worked = rendered(lang, "notation", "worked")
        assert f"= {points['speedup_short']:.2f}" in worked, lang  # S(4) on the notation page
    # the motivation step's ideal is the same α, γ, c with verification at one step
    motivation = talking_points(beta)["motivation"]
    assert motivation["speedup"] == pytest.approx(points["ideal_short"])
    words = _toml("en", "teach")["steps"]["cost"]["show"]
    assert "{speedup_short:.2f}" in words and "{ideal_short:.2f}" in words


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_has_its_words(lang):
    table = _toml(lang, "teach")
    steps, points = table["steps"], talking_points(0.075)
    points["cost"]["source"] = "a source"  # the page's, from the profile
    assert set(steps) == {step.key for step in ALL_STEPS}
    for step in ALL_STEPS:
        for part in ("title", "ask", "listen"):
            steps[step.key][part].format(**points.get(step.key, {}))  # every placeholder is provided
    for step in ROUTE:
        steps[step.key]["show"].format(**points.get(step.key, {}))
    assert set(table["lecture"]) == {step.key for step in LECTURE.steps}
    for step in LECTURE.steps:
        table["lecture"][step.key].format(**points.get(step.key, {}))
    for route in ROUTES:
        assert table["routes"][route.key]["title"] and table["routes"][route.key]["intro"]
        for section in route.sections:
            assert table["sections"][section.key]["title"] and table["sections"][section.key]["goal"]


def test_the_words_quote_what_the_code_computes():
    points = talking_points(0.075)
    greedy = _step(CLASS, "greedy").query
    logits = examples()["presets"][greedy["preset"]]["logits"]
    top_p = float(greedy["p"])
    assert points["greedy"]["kept_t1"] == apply(logits, SamplingConfig(top_p=top_p)).support.size >= 2
    low = SamplingConfig(temperature=points["greedy"]["low_t"], top_p=top_p)
    assert points["greedy"]["kept_low_t"] == apply(logits, low).support.size == 1  # "same as greedy"
    cost = points["cost"]
    assert cost["tokens_short"] == pytest.approx(sum(0.8**i for i in range(5)))
    assert cost["tokens_long"] == pytest.approx(expected_tokens(0.8, 8))
    assert cost["round_short"] == pytest.approx(4 * 0.05 + 1 + 4 * cost["beta"])
    assert cost["speedup_long"] == pytest.approx(cost["tokens_long"] / (8 * 0.05 + 1 + 8 * cost["beta"]))
    assert cost["speedup_long"] < cost["speedup_short"] < cost["speedup_best"]  # doubling γ loses here
    assert cost["ideal_long"] > cost["ideal_short"]  # and wins in the memory-bound ideal
    motivation = points["motivation"]
    assert f"{motivation['tokens']:.2f}" == "3.36" and f"{motivation['speedup']:.2f}" == "2.80"
    story = points["exercises"]
    assert round(story["together"], 1) == 10.7 and story["check_only"] == 32 and story["lines"] == 119


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_both_routes_with_every_link(lang, pinned_profile):
    at = open_page("teach", lang)
    table = _toml(lang, "teach")
    assert at.title[0].value == TITLES[lang]
    headers = [h.value for h in at.header]
    class_at, lecture_at = (
        headers.index(table["routes"]["class"]["title"]),
        headers.index(table["routes"]["lecture"]["title"]),
    )
    assert class_at < lecture_at  # the 90-minute route first
    links = [link.proto for link in at.get("page_link")]
    queries = [(p.page, dict(parse_qsl(p.query_string, keep_blank_values=True))) for p in links]
    steps = [q.pop(FROM_STEP) for _, q in queries if FROM_STEP in q]  # the page's link back to its step
    assert len(steps) == len(ROUTE) + len(LECTURE.steps) and steps[0] == "class:check_before:1"
    for step in ALL_STEPS:
        assert (step.page, {**step.query, "lang": lang}) in queries, step.key
    for page, query in ((("sampling_lab", SAMPLING_LAB)), ("exercises", EXERCISES)):
        assert [q for p, q in queries if p == page] == [{**query, "lang": lang}], page
    handouts = [q["handout"] for p, q in queries if p == "handouts"]
    assert set(handouts) == set(HANDOUTS)  # each handout linked, from its step and from the list
    slack = table["total"].format(steps=len(ROUTE), planned=CLASS.planned, slack=CLASS.slack, minutes=90)
    assert slack in [c.value for c in at.caption]
    text = "\n".join(m.value for m in at.markdown)
    priced = speedup(0.8, 4, 0.05, linear_verify_cost(course_costs().beta().value))
    assert "SPECDEC_CLASSROOM" in text and "10.7×" in text and f"{priced:.2f}×" in text and "2.80×" in text
    assert "Pinned CPU" in text  # the cost step names the profile its β comes from


@pytest.mark.parametrize("step", ALL_STEPS, ids=lambda step: step.key)
def test_every_links_page_exists(step):
    assert step.page in PAGE_KEYS and (ROOT / "pages" / f"{step.page}.py").is_file()
    assert step.handout is None or step.handout in HANDOUTS


def _distinct_links() -> list[Step]:
    seen, out = set(), []
    for step in ALL_STEPS:
        if step.query and (step.page, tuple(step.query.items())) not in seen:
            seen.add((step.page, tuple(step.query.items())))
            out.append(step)
    return out


@pytest.mark.parametrize("step", _distinct_links(), ids=lambda step: f"{step.key}")
def test_every_link_opens_its_page_with_each_value_taken(step, request):
    """The page opened at the link's address reads each key, keeps the link's value and writes
    it back (the Class answers view as the teacher sees it, on a classroom server)."""
    state = {}
    if step.page == "answers":
        request.getfixturevalue("classroom")
        state = {"_answers_teacher": True}
    at = open_page(step.page, "en", query=dict(step.query), state=state, timeout=180)
    warnings = " ".join(w.value for w in at.warning)
    for key, value in step.query.items():
        assert key not in warnings, (key, warnings)
        assert key in at.session_state, key  # the page restores this key
        assert _qp(at, key) == value, key  # and accepted the link's value as it stands
    if step.page == "answers":
        assert at.selectbox(key="answers_page").value == step.query["answers_page"]
