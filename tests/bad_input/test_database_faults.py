"""Faults of the class's answer database, under AppTest with a real PostgreSQL server: a wrong
database URL, a read-only database, a database that refuses new connections, and two teachers
clearing a class at once. Each gets its own message on the teacher's view (in the page's
language, without the URL's password, a traceback or a server path), and every learner's page
keeps working: the quiz answers with its feedback and shows nothing about the database.

The URL is always the README's ``.streamlit/secrets.toml`` example, read from the README, with
only what the fault needs changed.
"""

from __future__ import annotations

import tomllib

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from specdec_core.live import answers
from support.apptest import ROOT, open_page, rerun
from tests.bad_input.test_catalogue import FORBIDDEN, fragments, shown_texts
from tests.conftest import PASSCODE

COST = tomllib.loads((ROOT / "lessons" / "en" / "cost.toml").read_text("utf-8"))["quiz"]


def _secrets(cluster, name: str, **change) -> dict:
    """The README's secrets example pointed at database `name` here, its URL `change`d (user, drivername…)."""
    parsed = tomllib.loads(cluster.secrets_toml(name))
    url = make_url(parsed["connections"]["class_answers"]["url"]).set(**change)
    parsed["connections"]["class_answers"]["url"] = url.render_as_string(hide_password=False)
    return parsed


def _answer(at, question: int = 0, option: int = 1):
    at.radio(key=f"quiz_cost_{question}").set_value(option)
    rerun(at)
    assert at.success or at.error, "the learner sees the feedback of the choice"
    assert not at.warning and not at.exception, "nothing on the learner's page tells of the database"


def _teacher(secrets: dict, lang: str = "en"):
    at = open_page("answers", lang=lang, secrets=secrets)
    at.text_input(key="answers_passcode").input(PASSCODE)
    at.button(key="answers_open").click()
    return rerun(at)


def _says(at, lang: str, key: str) -> None:
    """The teacher's view shows the message `answers.<key>` and nothing it must not."""
    shown = "\n".join(shown_texts(at))
    assert all(part in shown for part in fragments(lang, "answers", key)), shown
    assert not any(bad in shown for bad in FORBIDDEN) and "secret@" not in shown, shown
    assert not at.exception


@pytest.mark.parametrize(
    ("change", "lang"),
    [({"database": "no_such_database"}, "en"), ({"drivername": "postgresql+nosuchdriver"}, "zh")],
    ids=["postgres-wrong-database", "postgres-unknown-driver"],
)
def test_a_wrong_database_url_is_named_and_learners_go_on_postgres(classroom, postgres, change, lang):
    secrets = _secrets(postgres, postgres.new_database(), **change)
    learner = open_page("cost", lang=lang, secrets=secrets)
    _answer(learner)
    teacher = _teacher(secrets, lang)
    _says(teacher, lang, "fault_settings")
    _says(teacher, lang, "waiting")
    assert not teacher.get("plotly_chart")
    _answer(learner, 1, 0)  # the learner goes on


def test_a_read_only_database_shows_its_results_and_keeps_new_answers_waiting_postgres(classroom, postgres):
    database = postgres.new_database()
    engine = create_engine(postgres.url(database, "teacher"))  # the tables are the teacher's
    answers.ensure_schema(engine)
    answers.record(engine, answers.DEFAULT_CODE, "earlier", "cost", 0, COST[0]["answer"])
    postgres.sql(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
    secrets = _secrets(postgres, database)
    learner = open_page("cost", secrets=secrets)
    _answer(learner, 0, COST[0]["answer"])
    _answer(learner, 1, 0)
    teacher = _teacher(secrets)
    teacher.selectbox(key="answers_page").set_value("cost")
    rerun(teacher)
    _says(teacher, "en", "fault_read_only")
    assert teacher.info[0].value.startswith("2 answers given on this app process are waiting")
    assert teacher.metric[0].value == "1" and teacher.get("plotly_chart"), "what was stored still shows"
    teacher.button(key="answers_clear").click()
    rerun(teacher)
    _says(teacher, "en", "fault_read_only")  # clearing cannot write either, and says why
    postgres.sql(f"ALTER DATABASE {database} SET default_transaction_read_only = off")
    engine.dispose()  # its connections keep the setting they started with
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM class_answers")).scalar() == 1
    engine.dispose()


def test_a_database_that_refuses_new_connections_is_named_and_learners_go_on_postgres(classroom, postgres):
    database = postgres.new_database()
    no_room = postgres.new_role("CONNECTION LIMIT 0")  # a role that may open no connection
    secrets = _secrets(postgres, database, username=no_room)
    learner = open_page("cost", secrets=secrets)
    _answer(learner)
    teacher = _teacher(secrets, "zh")
    _says(teacher, "zh", "fault_refused")
    _says(teacher, "zh", "waiting")
    _answer(learner, 1, 2)


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_two_teachers_clearing_at_once_both_get_a_clear_message(classroom, where, tmp_path, request):
    if where == "sqlite":
        secrets = {"connections": {"class_answers": {"url": f"sqlite:///{tmp_path / 'a.sqlite'}"}}}
    else:
        cluster = request.getfixturevalue("postgres")
        secrets = _secrets(cluster, cluster.new_database())
    learners = [open_page("cost", secrets=secrets) for _ in range(3)]
    for at in learners:
        _answer(at)
    first, second = _teacher(secrets), _teacher(secrets)  # both show "clear class-1"
    first.button(key="answers_clear").click()
    second.button(key="answers_clear").click()
    rerun(first)
    rerun(second)
    assert first.success[0].value == "3 answers of class class-1 deleted."
    assert second.info[0].value.startswith("No answers of class class-1 were left to delete")
    assert not second.error and not second.exception
    _answer(learners[0], 1, 0)  # the class goes on
    rerun(first)
    assert first.metric[0].value == "1"
