"""Check-yourself questions from a page's TOML table ``[[quiz]]``.

Each entry has ``question``, ``options`` (list), ``answer`` (index of the right option),
``feedback`` (one explanation per option, shown once the learner picks it) and ``kind``:
``"recall"`` when it asks back what the page says, ``"apply"`` when it works the page's idea
through numbers the page has not shown, ``"transfer"`` when it carries the idea to a situation
the page has not shown (another model pair, a batch size, a hardware profile, another rule);
the same kind in every language. ``predict = true`` marks a "predict, then press" question:
it names the page's widget settings, the learner predicts, and the widget's output answers it;
the label starts with a hint saying so.
:func:`checked` refuses any other field, a missing one, or any other kind.

Options are shown in the lesson file's order to everyone, each under its letter (A, B, C, …:
:func:`specdec_core.live.answers.option_letter`), so "most of you chose B" on the teacher's
chart (the Class answers view, which uses the same letters) means the option every learner saw
as B. The right answer's place is balanced across the course's questions
(tests/test_quizzes.py), not hidden by shuffling.

On a classroom server each learner's first answer is kept for the teacher's view, anonymously
(pages/common/class_answers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from pages.common.class_answers import record_answer, recording
from pages.common.i18n import Strings
from specdec_core.course.teach import CHECK_CONCEPTS, CHECK_PAGES
from specdec_core.live.answers import option_letter

#: What a question asks for: what the page said, its idea on new numbers, or its idea carried
#: to a new situation.
KINDS = ("recall", "apply", "transfer")
_REQUIRED = ("question", "options", "answer", "feedback", "kind")
_FIELDS = frozenset((*_REQUIRED, "predict"))
#: The fewest options a question offers.
MIN_OPTIONS = 3


def checked(item: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """`item` if it is a well-formed question, else ValueError naming `where` (page and number)."""
    missing = [key for key in _REQUIRED if key not in item]
    unknown = sorted(set(item) - _FIELDS)
    if missing or unknown:
        raise ValueError(f"{where}: missing {missing}, unknown {unknown}; a question has {sorted(_FIELDS)}.")
    if item["kind"] not in KINDS:
        raise ValueError(f"{where}: kind {item['kind']!r} is not one of {', '.join(KINDS)}.")
    options, feedback, answer = item["options"], item["feedback"], item["answer"]
    if not isinstance(item["question"], str) or not item["question"].strip():
        raise ValueError(f"{where}: the question is empty.")
    if not isinstance(options, list) or len(options) < MIN_OPTIONS or len(set(options)) != len(options):
        raise ValueError(f"{where}: a question needs at least {MIN_OPTIONS} distinct options.")
    if (
        not isinstance(feedback, list)
        or len(feedback) != len(options)
        or not all(str(f).strip() for f in feedback)
    ):
        raise ValueError(f"{where}: one non-empty feedback per option.")
    if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(options):
        raise ValueError(f"{where}: answer {answer!r} is not the index of an option.")
    if not isinstance(item.get("predict", False), bool):
        raise ValueError(f"{where}: predict is true or false.")
    return item


def questions(s: Strings) -> list[Mapping[str, Any]]:
    """The page's questions, each :func:`checked`."""
    return [checked(item, f"{s.lang}/{s.name} Q{i + 1}") for i, item in enumerate(s["quiz"])]


def check_questions(teach: Strings) -> dict[str, list[Mapping[str, Any]]]:
    """The class's concept check (teach.toml's ``[check.questions]``), each question
    :func:`checked`: its questions before and after the class, under the names the class's
    answers give them (``check_before``, ``check_after``)."""
    table = teach["check.questions"]
    out = {
        name: [checked(item, f"{teach.lang}/{name} Q{i + 1}") for i, item in enumerate(table[when])]
        for when, name in CHECK_PAGES.items()
    }
    if any(len(items) != CHECK_CONCEPTS for items in out.values()):
        raise ValueError(
            f"{teach.lang}/teach: the concept check asks {CHECK_CONCEPTS} questions before and after."
        )
    return out


def quiz(s: Strings) -> None:
    """Render the page's questions, options lettered in the file's order; each answer gets
    immediate feedback."""
    st.subheader(s["quiz_title"])
    ask(s, s.name, questions(s))


def ask(s: Strings, name: str, items: list[Mapping[str, Any]]) -> None:
    """Render `items` as the questions of `name` (the page, or a concept check, the class's
    answers are recorded under), options lettered in the file's order; each answer gets
    immediate feedback (in `s`'s language: its common strings)."""
    if recording():
        st.caption(s["quiz_recorded"])
    for i, item in enumerate(items):
        predict = f"*{s['quiz_predict']}* " if item.get("predict") else ""
        choice = st.radio(
            f"**{i + 1}.** {predict}{item['question']}",
            options=range(len(item["options"])),
            format_func=lambda j, opts=item["options"]: f"{option_letter(j)}. {opts[j]}",
            index=None,
            key=f"quiz_{name}_{i}",
        )
        if choice is None:
            continue
        record_answer(name, i, choice)  # classroom mode: the first answer, as its index in the file
        text = item["feedback"][choice]
        if choice == item["answer"]:
            st.success(f"{s['quiz_right']} {text}")
        else:
            st.error(f"{s['quiz_wrong']} {text}")
