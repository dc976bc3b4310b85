"""The class's answer store (specdec_core.live.answers) on a real SQLite file and on a real
PostgreSQL server (each test of the store runs on both: ids ``[sqlite]`` and ``[postgres]``),
and its figure."""

from __future__ import annotations

import csv
import io

import plotly.graph_objects as go
import pytest
from sqlalchemy import create_engine, inspect, text

from specdec_core.live import answers
from specdec_core.viz import answers as viz_answers
from specdec_core.viz.answers import answer_histogram
from tests.figure_strings import figure_text

#: The databases every store test runs on; PostgreSQL's start a server, so they are not unit tests.
DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.fast)]


@pytest.fixture(params=DATABASES)
def db(request, tmp_path):
    """An empty answers database: a SQLite file, or a new database on the session's PostgreSQL
    cluster reached with the README's example URL (its driver, user and password)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'answers.sqlite'}"
    else:
        cluster = request.getfixturevalue("postgres")
        url = cluster.readme_url(cluster.new_database())
    engine = create_engine(url)
    answers.ensure_schema(engine)
    yield engine
    engine.dispose()


def test_the_first_answer_per_session_and_question_counts(db):
    assert answers.record(db, "c1", "s1", "overlap", 0, 2)
    assert not answers.record(db, "c1", "s1", "overlap", 0, 1)  # a change of mind is not counted
    assert answers.record(db, "c1", "s2", "overlap", 0, 1)
    assert answers.record(db, "c1", "s1", "overlap", 1, 0)
    assert answers.record(db, "c2", "s1", "overlap", 0, 0)  # another class is another tally
    [q0, q1] = answers.tally(db, "c1", "overlap", [(3, 2), (2, 1)])
    assert q0.counts == (0, 1, 1) and q0.answered == 2 and q0.share_correct == 0.5
    assert q1.counts == (1, 0) and q1.share_correct == 0.0
    assert answers.tally(db, "c2", "overlap", [(3, 2)])[0].counts == (1, 0, 0)
    assert answers.sessions(db, "c1") == 2


def test_a_question_nobody_answered_has_no_share_rather_than_nan(db):
    [t] = answers.tally(db, "c", "tree", [(4, 3)])
    assert t.counts == (0, 0, 0, 0) and t.share_correct is None


def test_clearing_a_class_leaves_the_others(db):
    answers.record(db, "a", "s1", "tree", 0, 0)
    answers.record(db, "a", "s2", "tree", 0, 1)
    answers.record(db, "b", "s1", "tree", 0, 0)
    assert answers.clear(db, "a") == 2
    assert answers.tally(db, "a", "tree", [(2, 0)])[0].answered == 0
    assert answers.tally(db, "b", "tree", [(2, 0)])[0].answered == 1
    assert answers.record(db, "a", "s1", "tree", 0, 1)  # the next class starts afresh


def test_the_class_code_is_shared_through_the_database(db):
    assert answers.current_code(db) == answers.DEFAULT_CODE
    assert answers.set_code(db, "  mon-9am ") == "mon-9am"
    assert answers.current_code(db) == "mon-9am"
    assert answers.set_code(db, "tue.2") == "tue.2" and answers.current_code(db) == "tue.2"
    for bad in ("", "a b", "x" * (answers.CODE_MAX + 1), "drop;table"):
        with pytest.raises(ValueError):
            answers.set_code(db, bad)
    assert answers.current_code(db) == "tue.2"


def test_stored_rows_hold_no_name_address_or_browser(db):
    """The table has exactly the columns the tally needs; a stored row holds only them."""
    session = answers.new_session_id()
    answers.record(db, "c", session, "cost", 2, 1)
    columns = {c["name"] for c in inspect(db).get_columns("class_answers")}
    assert columns == {"id", "class_code", "session", "page", "question", "option"}
    assert set(inspect(db).get_table_names()) == {"class_answers", "class_current"}
    with db.connect() as conn:
        rows = conn.execute(text("SELECT * FROM class_answers")).mappings().all()
    assert [dict(r) for r in rows] == [
        {"id": 1, "class_code": "c", "session": session, "page": "cost", "question": 2, "option": 1}
    ]
    assert len(session) == 2 * answers.SESSION_BYTES and int(session, 16) >= 0
    assert answers.new_session_id() != session


def test_the_csv_holds_every_answer_with_its_correctness(db):
    answers.record(db, "c", "s1", "overlap", 0, 2)
    answers.record(db, "c", "s2", "overlap", 0, 1)
    answers.record(db, "c", "s1", "gone", 0, 0)  # a page no longer in the course
    answers.record(db, "other", "s3", "overlap", 0, 2)
    rows = list(csv.DictReader(io.StringIO(answers.answers_csv(db, "c", {"overlap": [2]}))))
    assert [(r["page"], r["session"], r["option"], r["correct"]) for r in rows] == [
        ("gone", "s1", "0", ""),
        ("overlap", "s1", "2", "1"),
        ("overlap", "s2", "1", "0"),
    ]
    assert list(rows[0]) == list(answers.CSV_COLUMNS)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_histogram_marks_the_right_option_and_shows_the_share(lang):
    text_ = figure_text("answers", lang)
    fig = go.Figure(answer_histogram(answers.Tally((1, 3, 0), 1), ["a", "τ < 0.5", "c"], text_).to_dict())
    bar = fig.data[0]
    assert list(bar.x) == [1, 3, 0]
    assert "&lt;" in bar.y[1] and text_["right_option"] in bar.y[1]
    assert len(set(bar.marker.color)) == 2 and bar.marker.color[0] == bar.marker.color[2]
    assert ("75%" in fig.layout.title.text) and ("3" in fig.layout.title.text)
    empty = answer_histogram(answers.Tally((0, 0), 0), ["a", "b"], text_).to_dict()
    assert empty["layout"]["title"]["text"] == text_["no_answers"]
    with pytest.raises(ValueError):
        answer_histogram(answers.Tally((0, 0), 0), ["a"], text_)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_histogram_shows_every_options_whole_text_under_the_letter_learners_saw(lang):
    """The chart's letters are the quiz's (A for the file's first option, …), and an option
    longer than a line is wrapped onto several, never cut."""
    text_ = figure_text("answers", lang)
    long_en = "Here decode is not strongly memory-bound, and the draft is not much cheaper " * 2
    long_zh = "验证一次前向读取全部权重一次，覆盖全部位置，所以它的代价与一步解码相近。" * 2
    options = ["a short one", long_en.strip(), long_zh]
    fig = answer_histogram(answers.Tally((2, 0, 5), 2), options, text_).to_dict()
    labels = fig["data"][0]["y"]
    for j, (label, option) in enumerate(zip(labels, options, strict=True)):
        lines = label.split("<br>")
        assert lines[0].startswith(f"{answers.option_letter(j)}. ")
        assert "…" not in label
        joined = "".join(lines) if j == 2 else " ".join(lines)
        assert option in joined
        assert all(viz_answers._columns(line) <= viz_answers.LABEL_COLUMNS for line in lines)
    assert len(labels[1].split("<br>")) >= 3 and len(labels[2].split("<br>")) >= 3
    taller = answer_histogram(answers.Tally((2, 0, 5), 2), ["a", "b", "c"], text_).to_dict()
    assert fig["layout"]["height"] > taller["layout"]["height"]


def test_option_letters_follow_the_lesson_files_order():
    assert [answers.option_letter(j) for j in range(4)] == ["A", "B", "C", "D"]
    for bad in (-1, 26):
        with pytest.raises(ValueError):
            answers.option_letter(bad)


def test_wrapping_keeps_every_character():
    for text_ in ("", "one", "x" * 130, "a " * 70, "中文" * 40 + " and English words mixed in"):
        lines = viz_answers.wrap(text_, 20)
        assert all(viz_answers._columns(line) <= 20 for line in lines)
        assert "".join(lines).replace(" ", "") == text_.replace(" ", "")
