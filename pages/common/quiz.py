"""Check-yourself questions from a page's TOML table ``[[quiz]]``.

Each entry has ``question``, ``options`` (list), ``answer`` (index of the right option),
``feedback`` (one explanation per option, shown once the learner picks it) and ``kind``:
``"transfer"`` when it asks to apply an idea to new numbers or a new situation, ``"recall"``
when it asks back what the page says (the same kind in every language). ``predict = true``
marks a "predict, then press" question: it names the page's widget settings, the learner
predicts, and the widget's output answers it; the label starts with a hint saying so.
:func:`checked` refuses any other field, a missing one, or any other kind.

Options are shown in an order shuffled per learner, so the right answer's place in the file
says nothing. The order comes from a *learner seed* carried in the page address as
``?quiz=<0…9999>``: a shared link shows everyone the same order. A visit without one gets a
random seed, kept for the session and written to the address. Each question's order is a
permutation drawn from (seed, page name, question number) — the same in every language.

On a classroom server each learner's first answer is kept for the teacher's view, anonymously
(pages/common/class_answers.py).
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import streamlit as st

from pages.common.class_answers import record_answer, recording
from pages.common.i18n import Strings

#: The address parameter and session key holding the learner seed.
SEED_KEY = "quiz"
SEED_MAX = 9999

#: What a question asks for: applying an idea to something new, or what the page said.
KINDS = ("transfer", "recall")
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


def learner_seed() -> int:
    """The learner seed: from the address if valid, else the session's, else a new random one."""
    raw = st.query_params.get(SEED_KEY)
    if raw is not None and raw.isdigit() and int(raw) <= SEED_MAX:
        st.session_state["_quiz_seed"] = int(raw)
    seed = st.session_state.setdefault("_quiz_seed", secrets.randbelow(SEED_MAX + 1))
    if st.query_params.get(SEED_KEY) != str(seed):
        st.query_params[SEED_KEY] = str(seed)
    return seed


def option_order(seed: int, page: str, question: int, n_options: int) -> list[int]:
    """The order in which question `question` of `page` shows its options to learner `seed`."""
    return list(_order(seed, page, question, n_options))


@lru_cache(maxsize=4096)
def _order(seed: int, page: str, question: int, n_options: int) -> tuple[int, ...]:
    rng = np.random.default_rng([seed, zlib.crc32(page.encode("utf-8")), question])
    return tuple(int(j) for j in rng.permutation(n_options))


def quiz(s: Strings) -> None:
    """Render the page's questions with shuffled options; each answer gets immediate feedback."""
    st.subheader(s["quiz_title"])
    if recording():
        st.caption(s["quiz_recorded"])
    seed = learner_seed()
    for i, item in enumerate(questions(s)):
        predict = f"*{s['quiz_predict']}* " if item.get("predict") else ""
        choice = st.radio(
            f"**{i + 1}.** {predict}{item['question']}",
            options=option_order(seed, s.name, i, len(item["options"])),
            format_func=lambda j, opts=item["options"]: opts[j],
            index=None,
            key=f"quiz_{s.name}_{i}",
        )
        if choice is None:
            continue
        record_answer(s.name, i, choice)  # classroom mode: the first answer, as its index in the file
        text = item["feedback"][choice]
        if choice == item["answer"]:
            st.success(f"{s['quiz_right']} {text}")
        else:
            st.error(f"{s['quiz_wrong']} {text}")
