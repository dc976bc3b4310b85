"""Check-yourself questions: well formed, balanced, shuffled per learner (seeded by the URL)."""

from __future__ import annotations

import re
import tomllib
from collections import Counter

import pytest

from pages.common.i18n import LESSONS
from pages.common.quiz import KINDS, SEED_KEY, checked, option_order
from support.apptest import open_page, rerun

LANGS = ("en", "zh")


def _quizzes(lang: str) -> dict[str, list[dict]]:
    out = {}
    for path in sorted((LESSONS / lang).glob("*.toml")):
        items = tomllib.loads(path.read_text("utf-8")).get("quiz", [])
        if items:
            out[path.stem] = items
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_every_question_is_well_formed(lang):
    for page, items in _quizzes(lang).items():
        for i, item in enumerate(items):
            where = f"{lang}/{page} Q{i + 1}"
            checked(item, where)  # the loader's own check, kind included
            assert item["kind"] in KINDS, where
            assert item["question"].strip(), where
            assert 3 <= len(item["options"]) == len(item["feedback"]), where
            assert len(set(item["options"])) == len(item["options"]), where
            assert 0 <= item["answer"] < len(item["options"]), where
            assert all(f.strip() for f in item["feedback"]), where


def _question(**changes) -> dict:
    item = {"question": "Q?", "options": ["a", "b", "c"], "answer": 1, "feedback": ["x", "y", "z"]}
    return {**item, "kind": "transfer", **changes}


def test_the_loader_accepts_transfer_and_recall_and_refuses_anything_else():
    assert checked(_question(), "t") and checked(_question(kind="recall", predict=True), "t")
    bad = {"kind": "apply", "answer": 3, "predict": "yes", "options": ["a", "a", "c"]}
    for key, value in bad.items():
        with pytest.raises(ValueError, match="t: "):
            checked(_question(**{key: value}), "t")
    without_kind = _question()
    del without_kind["kind"]
    for item in (without_kind, _question(type="recall")):
        with pytest.raises(ValueError, match=r"missing|unknown"):
            checked(item, "t")


def _transfer_counts(lang: str) -> dict[str, tuple[int, int]]:
    """Per page: (transfer questions, all questions)."""
    return {
        page: (sum(q["kind"] == "transfer" for q in items), len(items))
        for page, items in _quizzes(lang).items()
    }


@pytest.mark.parametrize("lang", LANGS)
def test_most_questions_ask_to_transfer_an_idea(lang):
    """At least 40 questions, and at least half of every page's, apply an idea to new numbers or a
    new situation rather than ask back what the page said."""
    counts = _transfer_counts(lang)
    assert sum(t for t, _ in counts.values()) >= 40, counts
    assert all(2 * t >= n for t, n in counts.values()), counts


# A number with two significant digits or more (0.336, 2.56, 31.5) says something specific;
# 0.2 or 3.0 turn up everywhere in these small examples.
_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+(?!\d)")


def _distinctive(number: str) -> bool:
    return len(number.replace(".", "").strip("0")) >= 2


def _page_strings(node) -> list[str]:
    """Every string of a page's TOML table but its questions, and every string below it."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for key, value in node.items() if key != "quiz" for s in _page_strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _page_strings(value)]
    return []


@pytest.mark.parametrize("lang", LANGS)
def test_a_transfer_question_does_not_ask_back_a_number_of_its_page(lang):
    """The right option of a transfer question states no specific number of the lesson text or
    the page's strings, unless the question itself gives it."""
    for path in sorted((LESSONS / lang).glob("*.toml")):
        table = tomllib.loads(path.read_text("utf-8"))
        lesson = path.with_suffix(".md")
        shown = "\n".join([lesson.read_text("utf-8") if lesson.exists() else "", *_page_strings(table)])
        on_page = set(_NUMBER.findall(shown))
        for i, item in enumerate(table.get("quiz", [])):
            if item["kind"] != "transfer":
                continue
            given = set(_NUMBER.findall(item["question"]))
            right = item["options"][item["answer"]]
            asked_back = {n for n in _NUMBER.findall(right) if _distinctive(n) and n not in given} & on_page
            assert not asked_back, f"{lang}/{path.stem} Q{i + 1}: {sorted(asked_back)} is on the page"


def test_the_page_number_check_tells_specific_numbers_from_common_ones():
    assert _NUMBER.findall("α̂ = 0.75, τ = 3.5 of 12 rounds") == ["0.75", "3.5"]
    assert _distinctive("0.336") and _distinctive("31.5") and _distinctive("2.56")
    assert not _distinctive("0.2") and not _distinctive("3.0") and not _distinctive("0.50")


def test_there_are_at_least_thirty_questions():
    assert sum(len(v) for v in _quizzes("en").values()) >= 30


def test_no_answer_position_holds_more_than_forty_percent():
    """Counted over every lesson as stored; learners also see the options shuffled."""
    answers = [item["answer"] for items in _quizzes("en").values() for item in items]
    counts = Counter(answers)
    assert max(counts.values()) <= 0.4 * len(answers), counts


def _right_is_longest(q: dict) -> bool:
    """The right option is the longest by character count; a tie for the longest counts too,
    unless every option has the same length (then length says nothing)."""
    lengths = [len(o) for o in q["options"]]
    return lengths[q["answer"]] == max(lengths) and len(set(lengths)) > 1


@pytest.mark.parametrize("lang", LANGS)
def test_the_right_option_is_the_longest_in_at_most_a_quarter(lang):
    """A learner must not be able to pick the answer by its length, in either language."""
    longest = [_right_is_longest(q) for items in _quizzes(lang).values() for q in items]
    assert sum(longest) <= 0.25 * len(longest), f"{lang}: {sum(longest)} of {len(longest)}"


def test_the_length_rule_counts_ties_for_the_longest():
    assert _right_is_longest({"options": ["ab", "cd", "e"], "answer": 1})
    assert not _right_is_longest({"options": ["ab", "cde", "f"], "answer": 0})
    assert not _right_is_longest({"options": ["0.45", "0.09", "0.36"], "answer": 0})


def test_both_languages_ask_the_same_questions():
    """Same count per page, the same right option, the same number of options, the same kind."""
    en, zh = _quizzes("en"), _quizzes("zh")
    assert en.keys() == zh.keys()
    for page in en:
        assert len(en[page]) == len(zh[page]), page
        for i, (a, b) in enumerate(zip(en[page], zh[page], strict=True)):
            where = f"{page} Q{i + 1}"
            assert a["answer"] == b["answer"], where
            assert len(a["options"]) == len(b["options"]), where
            assert a.get("predict", False) == b.get("predict", False), where
            assert a["kind"] == b["kind"], where


LABS = ("sampling_lab", "overlap", "tree", "block", "tree_drafts", "cost", "self_spec", "live", "race")


@pytest.mark.parametrize("lang", LANGS)
def test_every_lab_asks_a_predict_then_press_question(lang):
    quizzes = _quizzes(lang)
    for page in LABS:
        assert any(q.get("predict") is True for q in quizzes.get(page, [])), f"{lang}/{page}"


def test_a_predict_question_shows_its_hint():
    page = next(p for p, items in _quizzes("en").items() if any(q.get("predict") for q in items))
    i = next(i for i, q in enumerate(_quizzes("en")[page]) if q.get("predict"))
    at = open_page(page)
    hint = tomllib.loads((LESSONS / "en" / "common.toml").read_text("utf-8"))["quiz_predict"]
    assert hint in at.radio(key=f"quiz_{page}_{i}").label


def test_option_order_is_a_seeded_permutation():
    orders = {seed: option_order(seed, "overlap", 0, 4) for seed in range(40)}
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders.values())
    assert orders[7] == option_order(7, "overlap", 0, 4)  # the same seed, the same order
    assert len({tuple(o) for o in orders.values()}) > 10  # seeds really shuffle
    assert {o.index(0) for o in orders.values()} == {0, 1, 2, 3}  # the first option moves everywhere
    assert option_order(7, "overlap", 0, 4) != option_order(7, "overlap", 1, 4) or option_order(
        7, "cost", 0, 4
    ) != option_order(7, "overlap", 0, 4)


def _shown(at, page: str, lang: str) -> list[list[str]]:
    items = _quizzes(lang)[page]
    return [at.radio(key=f"quiz_{page}_{i}").options for i in range(len(items))]


def test_a_shared_link_shows_everyone_the_same_order_in_both_languages():
    items = _quizzes("en")["overlap"]
    first = open_page("overlap", query={SEED_KEY: "17"})
    again = open_page("overlap", query={SEED_KEY: "17"})
    other = open_page("overlap", query={SEED_KEY: "18"})
    assert _shown(first, "overlap", "en") == _shown(again, "overlap", "en")
    assert _shown(first, "overlap", "en") != _shown(other, "overlap", "en")
    expected = [
        [q["options"][j] for j in option_order(17, "overlap", i, len(q["options"]))]
        for i, q in enumerate(items)
    ]
    assert _shown(first, "overlap", "en") == expected
    zh_items = _quizzes("zh")["overlap"]
    zh = open_page("overlap", lang="zh", query={SEED_KEY: "17"})
    assert _shown(zh, "overlap", "zh") == [
        [q["options"][j] for j in option_order(17, "overlap", i, len(q["options"]))]
        for i, q in enumerate(zh_items)
    ]


def test_a_visit_without_a_seed_gets_one_written_to_the_address():
    at = open_page("cost")
    seed = at.query_params[SEED_KEY]
    seed = seed[0] if isinstance(seed, list) else seed
    assert seed.isdigit() and 0 <= int(seed) <= 9999
    at.radio(key="quiz_cost_0").set_value(2)
    rerun(at)
    assert at.query_params[SEED_KEY] in (seed, [seed])  # kept for the session


@pytest.mark.parametrize("seed", ["3", "4021"])
def test_feedback_follows_the_option_not_its_place(seed):
    items = _quizzes("en")["cost"]
    at = open_page("cost", query={SEED_KEY: seed})
    right = items[0]["answer"]
    at.radio(key="quiz_cost_0").set_value(right)
    rerun(at)
    assert items[0]["feedback"][right] in at.success[0].value
    wrong = (right + 1) % len(items[0]["options"])
    at.radio(key="quiz_cost_0").set_value(wrong)
    rerun(at)
    assert items[0]["feedback"][wrong] in at.error[0].value


# A line break between two CJK characters renders as a stray space in the browser — also
# when emphasis marks stand beside it or the next line continues a block quote.
_CJK = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
_BROKEN = re.compile(rf"{_CJK}[*_`~]*\n(?:> ?)?[*_`~]*{_CJK}")


@pytest.mark.parametrize("path", sorted((LESSONS / "zh").glob("*.md")), ids=lambda p: p.name)
def test_no_line_break_inside_a_chinese_sentence(path):
    text = path.read_text("utf-8")
    bad = [text.count("\n", 0, m.start()) + 1 for m in _BROKEN.finditer(text)]
    assert not bad, f"{path.name}: a line break between CJK characters after line(s) {bad}"


def test_the_line_break_check_catches_a_broken_sentence():
    assert _BROKEN.search("这是一个\n句子。")
    assert _BROKEN.search("第一句。\n第二句")
    assert _BROKEN.search("再展示\n**投机解码**") and _BROKEN.search("> 时辰。\n> 一位")
    assert not _BROKEN.search("第一段。\n\n第二段") and not _BROKEN.search("列表：\n- 一项")
