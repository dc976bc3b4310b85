"""Check-yourself questions: well formed, balanced, with no answer given away by its shape,
shown to everyone in one order under letters."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections import Counter

import pytest

from pages.common.i18n import LESSONS
from pages.common.quiz import KINDS, checked
from specdec_core.course.teach import CLASS
from specdec_core.live.answers import option_letter
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


def test_the_loader_accepts_the_three_kinds_and_refuses_anything_else():
    for kind in ("recall", "apply", "transfer"):
        assert checked(_question(kind=kind), "t") and checked(_question(kind=kind, predict=True), "t")
    bad = {"kind": "example", "answer": 3, "predict": "yes", "options": ["a", "a", "c"]}
    for key, value in bad.items():
        with pytest.raises(ValueError, match="t: "):
            checked(_question(**{key: value}), "t")
    without_kind = _question()
    del without_kind["kind"]
    for item in (without_kind, _question(type="recall")):
        with pytest.raises(ValueError, match=r"missing|unknown"):
            checked(item, "t")


def _new_numbers_counts(lang: str) -> dict[str, tuple[int, int]]:
    """Per page: (questions that apply or transfer an idea, all questions)."""
    return {
        page: (sum(q["kind"] in ("apply", "transfer") for q in items), len(items))
        for page, items in _quizzes(lang).items()
    }


@pytest.mark.parametrize("lang", LANGS)
def test_most_questions_ask_to_use_an_idea(lang):
    """At least 40 questions, and at least half of every page's, apply an idea to new numbers or
    carry it to a new situation rather than ask back what the page said."""
    counts = _new_numbers_counts(lang)
    assert sum(t for t, _ in counts.values()) >= 40, counts
    assert all(2 * t >= n for t, n in counts.values()), counts


def test_every_section_of_the_class_asks_two_far_transfer_questions():
    """Each section of the 90-minute route reaches at least two "transfer" questions (a model
    pair, batch size, hardware or rule the pages never showed) on the pages it opens."""
    quizzes = _quizzes("en")
    for section in CLASS.sections:
        pages = {step.page for step in section.steps}
        far = [
            (p, i) for p in sorted(pages) for i, q in enumerate(quizzes.get(p, [])) if q["kind"] == "transfer"
        ]
        assert len(far) >= 2, (section.key, far)


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
def test_a_question_on_new_numbers_does_not_ask_back_a_number_of_its_page(lang):
    """The right option of an apply or transfer question states no specific number of the
    lesson text or the page's strings, unless the question itself gives it."""
    for path in sorted((LESSONS / lang).glob("*.toml")):
        table = tomllib.loads(path.read_text("utf-8"))
        lesson = path.with_suffix(".md")
        shown = "\n".join([lesson.read_text("utf-8") if lesson.exists() else "", *_page_strings(table)])
        on_page = set(_NUMBER.findall(shown))
        for i, item in enumerate(table.get("quiz", [])):
            if item["kind"] == "recall":
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


@pytest.mark.parametrize("lang", LANGS)
def test_no_answer_letter_holds_more_than_a_third(lang):
    """Learners see the options in the file's order, so the right answer's letter must not be
    guessable: no letter is right in more than a third of the questions, every letter A–D is
    right somewhere, and no page has the same letter right in all its questions."""
    quizzes = _quizzes(lang)
    answers = [item["answer"] for items in quizzes.values() for item in items]
    counts = Counter(answers)
    assert max(counts.values()) <= len(answers) / 3, counts
    assert {0, 1, 2, 3} <= set(counts), counts
    for page, items in quizzes.items():
        assert len(items) < 3 or len({q["answer"] for q in items}) > 1, page


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


def _shown(at, page: str, lang: str) -> list[list[str]]:
    items = _quizzes(lang)[page]
    return [at.radio(key=f"quiz_{page}_{i}").options for i in range(len(items))]


@pytest.mark.parametrize("lang", LANGS)
def test_everyone_sees_the_files_order_under_letters(lang):
    """One order for everyone: option j of the file is shown as letter j (A, B, …), so the
    letters the room sees are the teacher's chart's; a page opened twice shows the same."""
    items = _quizzes(lang)["overlap"]
    first, again = open_page("overlap", lang=lang), open_page("overlap", lang=lang)
    expected = [[f"{option_letter(j)}. {o}" for j, o in enumerate(q["options"])] for q in items]
    assert _shown(first, "overlap", lang) == expected == _shown(again, "overlap", lang)


def test_answering_writes_nothing_to_the_address():
    """No learner seed any more: opening a page and answering adds no history entry."""
    at = open_page("cost")
    at.radio(key="quiz_cost_0").set_value(2)
    rerun(at)
    assert "quiz" not in at.query_params


def test_feedback_follows_the_chosen_option():
    items = _quizzes("en")["cost"]
    at = open_page("cost")
    right = items[0]["answer"]
    at.radio(key="quiz_cost_0").set_value(right)
    rerun(at)
    assert items[0]["feedback"][right] in at.success[0].value
    wrong = (right + 1) % len(items[0]["options"])
    at.radio(key="quiz_cost_0").set_value(wrong)
    rerun(at)
    assert items[0]["feedback"][wrong] in at.error[0].value


def columns(text: str) -> int:
    """An option's length as the learner sees it: a character per column, and two for a wide
    one (a Chinese character, full-width punctuation), which takes the room of about two Latin
    letters on screen. So an English and a Chinese option are measured alike."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


# What makes an option more than a bare value: a Latin word (two letters or more), a Chinese
# character, a colon or semicolon, or a parenthesis without a digit in it (a gloss such as
# "(γ·α)"); numbers, symbols, single letters, tuples like (0.1, 0.6) and ×, %, ≈ are bare.
_REASON = re.compile(r"[A-Za-z]{2,}|[\u3400-\u9fff]|[:;：；]|\([^)\d]*\)|（[^）\d]*）")
_DIGIT = re.compile(r"\d")


def bare(option: str) -> bool:
    """Whether an option is a bare number or expression, with no reason or word beside it."""
    return not _REASON.search(option)


def test_the_shape_rules_tell_bare_values_from_reasons():
    for value in ("0.336", "11/14 ≈ 0.79", "1.75×", "γ + 1 = 7", "(0.15, 0.50, 0.35)", "ρ ≤ 0.506", "#2"):
        assert bare(value), value
    for reasoned in ("2.10 (γ·α)", "It cannot be computed", "0.4 and 0.16", "7: the 6 nodes", "约 6.79×"):
        assert not bare(reasoned), reasoned
    assert columns("ab") == 2 and columns("中文") == 4 and columns("，") == 2


def _giveaways(q: dict) -> list[str]:
    options, right = q["options"], q["answer"]
    others = [o for j, o in enumerate(options) if j != right]
    found = []
    if len({bare(o) for o in options}) > 1:
        found.append(
            "options of two shapes: " + ", ".join("bare" if bare(o) else "reasoned" for o in options)
        )
    if 3 * columns(options[right]) > 4 * max(columns(o) for o in others):
        found.append(
            f"right option {columns(options[right])} columns, longest other {max(map(columns, others))}"
        )
    if _DIGIT.search(options[right]) and not any(_DIGIT.search(o) for o in others):
        found.append("only the right option has figures")
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_no_question_gives_its_answer_away_by_its_shape(lang):
    """Options of one shape (all bare values, or all with words), the right one never more
    than a third longer than the longest wrong one (in columns: see :func:`columns`), and never
    the only one with figures."""
    bad = {
        f"{lang}/{page} Q{i + 1}": found
        for page, items in _quizzes(lang).items()
        for i, q in enumerate(items)
        if (found := _giveaways(q))
    }
    assert not bad, bad


def test_the_giveaway_check_catches_each_rule():
    item = {"options": ["2.53", "2.10 (γ·α)", "3.10 (1 + γ·α)", "4 (γ + 1)"], "answer": 0}
    assert _giveaways(item) and "two shapes" in _giveaways(item)[0]
    assert "columns" in _giveaways({"options": ["a" * 40, "b" * 20, "c" * 29], "answer": 0})[0]
    assert "figures" in _giveaways({"options": ["B, at 2.65×", "A, smallest", "they tie"], "answer": 0})[0]
    assert not _giveaways({"options": ["0.65", "0.35", "1.00"], "answer": 0})


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
