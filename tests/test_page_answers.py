"""The class's answers under AppTest: learners' quiz answers recorded in classroom mode only,
the first per question, as the option's index in the lesson file; the teacher's view behind
the passcode; an unreachable database degrades quietly.

Each test points the answers database (``SPECDEC_ANSWERS_DB``) at its own SQLite file and
reads what was stored through SQLAlchemy, as the teacher's view does. The tests of recording,
of the first answer and of the teacher's view also run on PostgreSQL (ids ``[postgres]``): a
new database on the session's cluster, named by the README's ``.streamlit/secrets.toml``
example (support/postgres.py).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from pages.common import class_answers
from specdec_core.live import answers
from support.apptest import ROOT, open_page, rerun
from support.postgres import readme_secrets
from tests.conftest import PASSCODE

COST = tomllib.loads((ROOT / "lessons" / "en" / "cost.toml").read_text("utf-8"))["quiz"]
KEYS = [(len(q["options"]), q["answer"]) for q in COST]


@pytest.fixture
def db_file(tmp_path, monkeypatch):
    path = tmp_path / "answers.sqlite"
    monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(path))
    return path


@dataclass(frozen=True)
class ClassDb:
    """Where a classroom's answers go: `url` (to read them back) and the `secrets` the app's
    sessions get (None: no secrets file, the default SQLite file)."""

    url: str
    secrets: dict | None = None

    def open(self, page: str, **kwargs):
        return open_page(page, secrets=self.secrets, **kwargs)


@pytest.fixture(params=["sqlite", "postgres"])
def class_db(request, classroom) -> ClassDb:
    """A classroom server recording into SQLite (its default file) or PostgreSQL (the README's
    secrets example pointed at a new database of the test cluster)."""
    if request.param == "sqlite":
        return ClassDb(f"sqlite:///{classroom}")
    cluster = request.getfixturevalue("postgres")
    database = cluster.new_database()
    return ClassDb(cluster.url(database), tomllib.loads(cluster.secrets_toml(database)))


def _tally(where, code=answers.DEFAULT_CODE, page="cost"):
    engine = create_engine(where if isinstance(where, str) else f"sqlite:///{where}")
    try:
        return answers.tally(engine, code, page, KEYS if page == "cost" else [])
    finally:
        engine.dispose()


def _answer(at, question: int, option: int):
    at.radio(key=f"quiz_cost_{question}").set_value(option)
    return rerun(at)


def _teacher(lang: str = "en", passcode: str = PASSCODE, secrets: dict | None = None):
    at = open_page("answers", lang=lang, secrets=secrets)
    at.text_input(key="answers_passcode").input(passcode)
    at.button(key="answers_open").click()
    return rerun(at)


def test_a_learners_answer_is_stored_under_the_letter_every_learner_saw(class_db):
    """Options show in the file's order with letters, so the stored index is the letter the
    room saw (C is index 2), the letter the teacher's chart puts on it."""
    at = class_db.open("cost")
    assert any("anonymously" in c.value for c in at.caption)
    shown = at.radio(key="quiz_cost_0").options
    assert shown == [f"{answers.option_letter(j)}. {o}" for j, o in enumerate(COST[0]["options"])]
    _answer(at, 0, 2)
    counts = _tally(class_db.url)[0].counts
    assert counts[2] == 1 and sum(counts) == 1


def test_only_the_first_answer_of_a_session_counts(class_db):
    right, n = COST[1]["answer"], KEYS[1][0]
    wrong = (right + 1) % n
    at = class_db.open("cost")
    _answer(at, 1, wrong)
    _answer(at, 1, right)  # a second thought, after the feedback
    assert at.success, "the learner still sees the feedback of the new choice"
    other = class_db.open("cost")  # another learner
    _answer(other, 1, right)
    tally = _tally(class_db.url)[1]
    assert tally.counts[wrong] == 1 and tally.counts[right] == 1 and tally.share_correct == 0.5


def test_outside_classroom_mode_nothing_is_recorded(monkeypatch, db_file):
    monkeypatch.delenv("SPECDEC_CLASSROOM", raising=False)
    at = open_page("cost")
    _answer(at, 0, COST[0]["answer"])
    assert at.success and not [c for c in at.caption if "anonymously" in c.value]
    assert not db_file.exists()
    teacher = open_page("answers")
    assert "only on a classroom server" in teacher.info[0].value
    assert not teacher.text_input


def test_the_teachers_view_needs_the_passcode(classroom):
    at = _teacher(passcode="owl-41")
    assert at.error[0].value == "That is not the teacher's passcode."
    assert at.text_input(key="answers_passcode").value == ""
    assert not [b for b in at.selectbox if b.key == "answers_page"]
    at = _teacher()
    assert not at.error and at.selectbox(key="answers_page").value == "notation"  # the first page with a quiz


def test_without_a_passcode_the_view_stays_closed(monkeypatch, classroom):
    monkeypatch.delenv("SPECDEC_TEACHER_PASSCODE")
    at = open_page("answers")
    assert "no teacher's passcode" in at.info[0].value and not at.text_input


def test_the_teacher_sees_the_answers_sets_the_class_code_and_clears_it(class_db):
    learner = class_db.open("cost")
    _answer(learner, 0, COST[0]["answer"])
    at = _teacher(secrets=class_db.secrets)
    at.selectbox(key="answers_page").set_value("cost")
    rerun(at)
    assert at.metric[0].value == "1"
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    assert len(specs) == len(COST)
    assert specs[0]["layout"]["title"]["text"] == "100% correct (1 of 1)"
    assert specs[1]["layout"]["title"]["text"] == "No answers yet"
    assert [b.key for b in at.get("download_button")] == ["answers_download"]

    at.text_input(key="answers_code").input("tue-2")
    at.button(key="answers_set_code").click()
    rerun(at)
    assert at.success[0].value == "Answers are now recorded under class code tue-2."
    assert at.metric[0].value == "0"  # the new class has not answered yet
    newcomer = class_db.open("cost")
    _answer(newcomer, 0, (COST[0]["answer"] + 1) % KEYS[0][0])
    assert _tally(class_db.url, "tue-2")[0].share_correct == 0.0
    assert _tally(class_db.url)[0].share_correct == 1.0  # the earlier class keeps its answers

    at.button(key="answers_clear").click()
    rerun(at)
    assert at.success[0].value == "1 answers of class tue-2 deleted."
    assert _tally(class_db.url, "tue-2")[0].answered == 0 and _tally(class_db.url)[0].answered == 1

    at.text_input(key="answers_code").input("no spaces")
    at.button(key="answers_set_code").click()
    rerun(at)
    assert at.error[0].value.startswith("A class code is 1 to 40")


def test_the_teachers_view_speaks_chinese(classroom):
    at = _teacher(lang="zh")
    assert at.title[0].value == "全班答题" and at.metric[0].label == "已作答的学员"


def test_a_database_in_secrets_is_used_instead_of_the_default_file(classroom, tmp_path):
    other = tmp_path / "from-secrets.sqlite"
    at = open_page("cost")
    at.secrets["connections"] = {"class_answers": {"url": f"sqlite:///{other}"}}
    _answer(at, 0, 0)
    assert _tally(other)[0].answered == 1 and not classroom.exists()


@pytest.mark.parametrize(
    "where",
    [
        {"SPECDEC_ANSWERS_DB": "/nonexistent-folder/answers.sqlite"},
        {"secrets": "postgresql://teacher@127.0.0.1:9/class"},  # no server there
    ],
    ids=["missing-folder", "postgresql-unreachable"],
)
def test_an_unreachable_database_degrades_to_results_unavailable(monkeypatch, classroom, where):
    def point(at):
        if "secrets" in where:
            at.secrets["connections"] = {"class_answers": {"url": where["secrets"]}}
        return at

    for name, value in where.items():
        if name != "secrets":
            monkeypatch.setenv(name, value)
    learner = point(open_page("cost"))
    _answer(learner, 0, COST[0]["answer"])
    assert learner.success and not learner.exception and not learner.warning
    teacher = point(open_page("answers"))
    teacher.text_input(key="answers_passcode").input(PASSCODE)
    teacher.button(key="answers_open").click()
    rerun(teacher)
    assert teacher.warning[0].value == "Results unavailable: the answers database cannot be reached."


def test_a_database_that_failed_is_tried_again_only_after_a_pause(monkeypatch, classroom, tmp_path):
    """A server that is down must not slow every rerun of every learner: after a failure the
    database is left alone for RETRY_S seconds, then tried again."""
    for retry_s, available in ((class_answers.RETRY_S, False), (0.0, True)):
        folder = tmp_path / f"later-{retry_s}"
        monkeypatch.setenv("SPECDEC_ANSWERS_DB", str(folder / "answers.sqlite"))
        monkeypatch.setattr(class_answers, "RETRY_S", retry_s)
        assert _teacher().warning, "the folder is missing: unavailable"
        folder.mkdir()  # the database can be reached now
        at = _teacher()
        assert bool(at.warning) != available and bool(at.get("plotly_chart")) == available


def test_the_readme_secrets_example_is_the_one_the_postgres_tests_use(postgres):
    """The PostgreSQL tests' secrets are the README's text with only the URL's host, port and
    database changed: its driver (psycopg, pinned in requirements.txt), user and password stay."""
    readme, ours = readme_secrets(), postgres.secrets_toml("specdec_x")
    changed = [(a, b) for a, b in zip(readme.splitlines(), ours.splitlines(), strict=True) if a != b]
    assert len(changed) == 1 and changed[0][0].startswith("url = ")
    example = make_url(tomllib.loads(readme)["connections"]["class_answers"]["url"])
    used = make_url(tomllib.loads(ours)["connections"]["class_answers"]["url"])
    assert example.drivername == used.drivername == "postgresql+psycopg"
    assert (example.username, example.password) == (used.username, used.password)
    assert (used.host, used.port, used.database) == ("127.0.0.1", postgres.port, "specdec_x")
    assert "psycopg[binary]==" in (ROOT / "requirements.txt").read_text("utf-8")
