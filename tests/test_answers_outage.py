"""A database restart in mid-class loses no answer: AppTest learners and a teacher on one app
process, the class's answers in a real PostgreSQL server that is stopped and started again.

The database is named the way the README tells a school to name it: its
``.streamlit/secrets.toml`` example, read from the README, pointed at the test cluster.
"""

from __future__ import annotations

import tomllib

import pytest
from sqlalchemy import create_engine, text

from pages.common import class_answers
from support.apptest import ROOT, open_page, rerun

PASSCODE = "owl-42"
QUIZ = {
    page: tomllib.loads((ROOT / "lessons" / "en" / f"{page}.toml").read_text("utf-8"))["quiz"]
    for page in ("cost", "overlap")
}


@pytest.fixture
def class_db(monkeypatch, postgres):
    """A classroom server whose answers go to a new PostgreSQL database, named by the README's
    secrets example; a failed database is tried again on every run (no 30 s pause), so the
    test sees the first run after the restart write the waiting answers."""
    monkeypatch.setenv("SPECDEC_CLASSROOM", "1")
    monkeypatch.setenv("SPECDEC_PRELOAD", "toy")
    monkeypatch.setenv("SPECDEC_TEACHER_PASSCODE", PASSCODE)
    monkeypatch.setattr(class_answers, "RETRY_S", 0.0)
    database = postgres.new_database()
    secrets = tomllib.loads(postgres.secrets_toml(database))
    assert secrets["connections"]["class_answers"]["url"].startswith("postgresql+psycopg://teacher:secret@")
    engine = create_engine(postgres.url(database), pool_pre_ping=True)  # it outlives a restart
    yield secrets, engine
    engine.dispose()


def _rows(engine) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(conn.execute(text("SELECT session, page, question, option FROM class_answers")).all())


def _answer(at, page: str, question: int, option: int):
    at.radio(key=f"quiz_{page}_{question}").set_value(option)
    rerun(at)
    assert at.success or at.error, "the learner sees the feedback of the choice"
    assert not at.warning and not at.exception, "nothing on the learner's page tells of the database"


def _teacher(secrets):
    at = open_page("answers", secrets=secrets)
    at.text_input(key="answers_passcode").input(PASSCODE)
    at.button(key="answers_open").click()
    rerun(at)
    at.selectbox(key="answers_page").set_value("cost")
    return rerun(at)


def test_a_database_outage_in_mid_class_loses_no_answer_postgres(class_db, postgres):
    secrets, engine = class_db
    learner = open_page("cost", secrets=secrets)
    teacher = _teacher(secrets)
    _answer(learner, "cost", 0, QUIZ["cost"][0]["answer"])  # before the outage
    session = learner.session_state["_answers_session"]
    assert _rows(engine) == [(session, "cost", 0, QUIZ["cost"][0]["answer"])]

    postgres.stop()
    try:
        _answer(learner, "cost", 1, 0)
        learner.switch_page("pages/overlap.py").run()  # another page: the waiting answer goes along
        _answer(learner, "overlap", 0, 2)
        _answer(learner, "overlap", 0, 1)  # a change of mind while waiting is not recorded
        other = open_page("cost", secrets=secrets)  # a second learner, during the outage
        _answer(other, "cost", 1, 1)
        rerun(teacher)
        assert teacher.warning[0].value == "Results unavailable: the answers database cannot be reached."
        assert teacher.info[0].value.startswith("3 answers given on this app process are waiting")
        assert "other app processes" in teacher.info[0].value and not teacher.exception
    finally:
        postgres.start()

    learner.switch_page("pages/tree.py").run()  # the next run of any page writes them
    assert not learner.exception and not learner.warning
    others = other.session_state["_answers_session"]
    expected = sorted(
        [
            (session, "cost", 0, QUIZ["cost"][0]["answer"]),
            (session, "cost", 1, 0),
            (session, "overlap", 0, 2),
            (others, "cost", 1, 1),
        ]
    )
    assert _rows(engine) == expected
    learner.switch_page("pages/cost.py").run()  # later runs write nothing twice
    rerun(other)
    assert _rows(engine) == expected
    rerun(teacher)
    assert not teacher.warning and not teacher.info and teacher.metric[0].value == "2"


def test_the_teachers_view_speaks_chinese_about_waiting_answers_postgres(class_db, postgres):
    secrets, engine = class_db
    learner = open_page("cost", lang="zh", secrets=secrets)
    postgres.stop()
    try:
        _answer(learner, "cost", 0, 1)
        teacher = open_page("answers", lang="zh", secrets=secrets)
        teacher.text_input(key="answers_passcode").input(PASSCODE)
        teacher.button(key="answers_open").click()
        rerun(teacher)
        assert teacher.warning[0].value == "结果暂不可用：无法连接到答题数据库。"
        assert teacher.info[0].value.startswith("本服务器进程上有 1 条作答正在等待")
    finally:
        postgres.start()
    learner.switch_page("pages/overlap.py").run()
    assert len(_rows(engine)) == 1
