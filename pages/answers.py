"""Class answers: how the room answered each check-yourself question, for the projector.

Classroom mode only, behind the teacher's passcode. The teacher sets the class code the
answers are recorded under, clears a class's answers for the next one and downloads them as
CSV; each question of the chosen page shows its histogram and share correct, refreshed while
answers arrive. The class's concept check (the teach page's, before and after the class) is one
more choice: each concept's share correct before and after side by side, then its two
questions' histograms. When the database fails, it says what is wrong and how many answers wait on this
process. Storage and tallies: pages/common/class_answers.py, specdec_core.live.answers.
"""

import streamlit as st

from pages.common import form
from pages.common.class_answers import UNREACHABLE, engine, fault, pause, send_waiting, waiting
from pages.common.figure import show_figure
from pages.common.form import Form
from pages.common.i18n import strings
from pages.common.models import access
from pages.common.nav import PAGES
from pages.common.page import start
from pages.common.quiz import check_questions, questions
from pages.common.urlstate import choice_param, mirror, restore
from specdec_core.course.teach import CHECK_PAGES
from specdec_core.live import access as rules
from specdec_core.live import answers
from specdec_core.live.answer_outbox import fault as fault_of
from specdec_core.viz.answers import answer_histogram, check_comparison

#: Seconds between refreshes of the live view.
REFRESH_S = 3

s, _ = start("answers", with_lesson=False)
ss = st.session_state
rules_now = access()


def _unlock() -> None:
    given = ss.get("answers_passcode", "")
    ss["answers_passcode"] = ""  # the field is emptied after every try
    ss["_answers_teacher"] = rules.passcode_ok(rules_now, given)
    ss["_answers_refused"] = not ss["_answers_teacher"]


if not rules_now.classroom:
    st.info(s["off"])
    st.stop()
if not rules_now.passcode:
    st.info(s["no_passcode"])
    st.stop()
if not ss.get("_answers_teacher"):
    st.text_input(s["passcode"], type="password", key="answers_passcode", help=s["passcode_help"])
    st.button(s["open"], key="answers_open", on_click=_unlock)
    if ss.pop("_answers_refused", False):
        st.error(s["refused"])
    st.stop()


def _problem(kind: str) -> str:
    """What the teacher reads about a database failure of `kind` (answer_outbox.FAULTS)."""
    return s["unavailable"] if kind == "down" else s[f"fault_{kind}"]


def _trouble(kind: str | None) -> None:
    """Say what is wrong with the database (`kind`, if anything) and how many answers wait on
    this process; nothing while it works and no answer waits."""
    n = waiting()
    if kind is not None:
        st.warning(_problem(kind))
    if kind is not None or n:
        st.info(s("waiting", n=n))


def _failed(exc: BaseException) -> str:
    """Pause the database after `exc` and say what it meant."""
    pause(exc)
    return _problem(fault_of(exc))


db = engine()
if db is None:
    _trouble(fault() or "down")
    st.stop()


def _quiz_pages() -> dict[str, list[dict]]:
    """Every page with check-yourself questions, in course order: its questions (session language)."""
    out = {}
    for page in PAGES:
        page_strings = strings(page.key)
        if page_strings.tables[0].get("quiz"):
            out[page.key] = questions(page_strings)
    return out


quizzes = _quiz_pages()
#: The page selector's choice for the concept check, before and after side by side.
CHECK_VIEW = "check"
checks = check_questions(strings("teach"))


def _set_code() -> None:
    try:
        ss["_answers_note"] = (
            "success",
            s("code_set", code=answers.set_code(db, ss.get("answers_code", ""))),
        )
    except ValueError:
        ss["_answers_note"] = ("error", s["bad_code"])
    except UNREACHABLE as exc:
        ss["_answers_note"] = ("error", _failed(exc))


def _clear(code: str) -> None:
    try:
        n = answers.clear(db, code)
    except UNREACHABLE as exc:
        ss["_answers_note"] = ("error", _failed(exc))
        return
    # 0: another teacher (or this one, in another tab) cleared them a moment before
    ss["_answers_note"] = (
        ("success", s("cleared", n=n, code=code)) if n else ("info", s("cleared_none", code=code))
    )


try:
    code = answers.current_code(db)
except UNREACHABLE as exc:
    pause(exc)
    _trouble(fault_of(exc))
    st.stop()

st.caption(s("intro", code=code))
with st.container(border=True):
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    left.text_input(
        s["class_code"], value=code, key="answers_code", max_chars=answers.CODE_MAX, help=s["class_code_help"]
    )
    right.button(s["set_code"], key="answers_set_code", on_click=_set_code)
    with st.popover(s("clear", code=code)):
        st.write(s("clear_confirm", code=code))
        st.button(s["clear_yes"], key="answers_clear", on_click=_clear, args=(code,), type="primary")
note = st.container()
kind, message = ss.pop("_answers_note", (None, ""))
if kind == "success":
    note.success(message)
elif kind == "error":
    note.error(message)
elif kind == "info":
    note.info(message)


class AnswersForm(Form):
    """The view's one setting: the page whose questions are shown; it comes from the link too
    (the teach page's route opens it so)."""

    prefix = "answers"
    page = choice_param(next(iter(quizzes)), (*quizzes, CHECK_VIEW))


FORM = AnswersForm()
restore(FORM.params())  # an unknown page in the link falls back to the first
page_key = form.select(
    st,
    FORM.page,
    s["page"],
    format_func=lambda k: s["check_page"] if k == CHECK_VIEW else s[f"nav.{k}.title"],
)
mirror(FORM.params())
answer_keys = {k: [int(q["answer"]) for q in items] for k, items in {**quizzes, **checks}.items()}


def _keys(items: list) -> list[tuple[int, int]]:
    return [(len(q["options"]), int(q["answer"])) for q in items]


def _check_view(code: str) -> None:
    """The concept check: the share correct per concept before and after, then each concept's
    two questions side by side, each with its histogram."""
    before, after = (answers.tally(db, code, name, _keys(checks[name])) for name in CHECK_PAGES.values())
    concepts = strings("teach")["check.concepts"]
    st.caption(s["check_intro"])
    show_figure(check_comparison(before, after, concepts, s["fig"]), key="answers_check_summary")
    names = list(CHECK_PAGES.values())
    for i, concept in enumerate(concepts):
        st.markdown(f"#### {s('check_concept', n=i + 1, name=concept)}")
        for column, when, name, tallies in zip(
            st.columns(2), ("check_before", "check_after"), names, (before, after), strict=True
        ):
            item = checks[name][i]
            column.markdown(f"**{s[when]}.** {item['question']}")
            show_figure(
                answer_histogram(tallies[i], item["options"], s["fig"]),
                where=column,
                key=f"answers_fig_{name}_{i}",
            )


@st.fragment(run_every=REFRESH_S)
def live_view(code: str, page_key: str) -> None:
    """The chosen page's questions, each with its histogram, refreshed every few seconds."""
    send_waiting()  # the open view writes this process's waiting answers as soon as it can
    items = quizzes.get(page_key, [])
    try:
        tallies = answers.tally(db, code, page_key, _keys(items))
        learners = answers.sessions(db, code)
        table = answers.answers_csv(db, code, answer_keys)
    except UNREACHABLE as exc:
        pause(exc)
        _trouble(fault_of(exc))
        return
    _trouble(fault())  # e.g. a read-only database: the results show, new answers wait
    top = st.columns([3, 2], vertical_alignment="bottom")
    top[0].metric(s["learners"], learners)
    top[1].download_button(
        s["download"],
        data=table,
        file_name=f"answers-{code}.csv",
        mime="text/csv",
        key="answers_download",
        on_click="ignore",
    )
    if page_key == CHECK_VIEW:
        try:
            _check_view(code)
        except UNREACHABLE as exc:
            pause(exc)
            _trouble(fault_of(exc))
        return
    fig_text = s["fig"]
    for i, (item, tally) in enumerate(zip(items, tallies, strict=True)):
        st.markdown(f"**{i + 1}.** {item['question']}")
        show_figure(answer_histogram(tally, item["options"], fig_text), key=f"answers_fig_{page_key}_{i}")


live_view(code, page_key)
