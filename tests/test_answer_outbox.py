"""Answers waiting for the database (specdec_core.live.answer_outbox) on a real PostgreSQL
server stopped and started again, and what each database failure is called for the teacher.
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from specdec_core.live import answers
from specdec_core.live.answer_outbox import Outbox, fault


def _engine(cluster, database=None, user="teacher"):
    database = database or cluster.new_database()
    engine = create_engine(cluster.url(database, user), pool_pre_ping=True)
    return engine


def _rows(engine) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(
            conn.execute(text("SELECT class_code, session, page, question, option FROM class_answers")).all()
        )


def test_the_first_answer_of_a_session_waits_and_the_outbox_has_a_bound(tmp_path):
    box = Outbox(limit=3)
    box.add("s1", "cost", 0, 2)
    box.add("s1", "cost", 0, 1)  # a change of mind while waiting: the first answer stays
    box.add("s2", "cost", 0, 1)
    box.add("s1", "tree", 0, 0)
    box.add("s3", "tree", 0, 0)  # beyond the bound
    assert len(box) == 3
    engine = create_engine(f"sqlite:///{tmp_path / 'a.sqlite'}")
    answers.ensure_schema(engine)
    assert box.flush(engine) == 3 and len(box) == 0 and box.fault is None
    assert _rows(engine) == [
        ("class-1", "s1", "cost", 0, 2),
        ("class-1", "s1", "tree", 0, 0),
        ("class-1", "s2", "cost", 0, 1),
    ]
    engine.dispose()


def test_an_outage_keeps_the_answers_and_writes_each_once_when_the_database_is_back_postgres(postgres):
    engine = _engine(postgres)
    answers.ensure_schema(engine)
    answers.set_code(engine, "mon-9")
    assert answers.record(engine, "mon-9", "s1", "cost", 0, 2)  # stored before the outage
    box = Outbox()
    postgres.stop()
    try:
        for session, page, question, option in [
            ("s1", "cost", 0, 1),
            ("s1", "tree", 1, 0),
            ("s2", "cost", 0, 3),
        ]:
            box.add(session, page, question, option)
        errors: list[BaseException] = []
        assert box.flush(engine, failed=errors.append) == 0
        assert len(box) == 3 and box.fault == "down" and isinstance(errors[0], SQLAlchemyError)
    finally:
        postgres.start()
    assert box.flush(engine) == 3 and len(box) == 0 and box.fault is None
    assert box.flush(engine) == 0  # nothing left: nothing written twice
    assert _rows(engine) == [
        ("mon-9", "s1", "cost", 0, 2),  # the answer given first counts, not the one that waited
        ("mon-9", "s1", "tree", 1, 0),
        ("mon-9", "s2", "cost", 0, 3),
    ]
    engine.dispose()


def test_two_threads_flushing_one_outbox_write_each_answer_once_postgres(postgres):
    engine = _engine(postgres)
    answers.ensure_schema(engine)
    box = Outbox()
    for i in range(40):
        box.add(f"s{i}", "cost", i % 8, i % 3)
    start = threading.Barrier(2)
    written = []

    def flush():
        start.wait()
        written.append(box.flush(engine))

    threads = [threading.Thread(target=flush) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(written) == 40 and len(box) == 0
    assert len(_rows(engine)) == len(set(_rows(engine))) == 40
    engine.dispose()


def test_two_teachers_clearing_and_setting_codes_at_once_agree_postgres(postgres):
    engine = _engine(postgres)
    answers.ensure_schema(engine)
    for i in range(30):
        answers.record(engine, answers.DEFAULT_CODE, f"s{i}", "cost", 0, i % 3)
    gate = threading.Barrier(2)
    cleared, codes = [], []

    def teacher(code):
        gate.wait()
        cleared.append(answers.clear(engine, answers.DEFAULT_CODE))
        gate.wait()
        codes.append(answers.set_code(engine, code))

    threads = [threading.Thread(target=teacher, args=(c,)) for c in ("tue-1", "tue-2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(cleared) == 30  # each row deleted by one teacher; the other's clear finds it gone
    assert _rows(engine) == [] and sorted(codes) == ["tue-1", "tue-2"]
    assert answers.current_code(engine) in {"tue-1", "tue-2"}  # one row: the last code set
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM class_current")).scalar() == 1
    engine.dispose()


def test_each_database_failure_is_named_for_the_teacher_postgres(postgres):
    database = postgres.new_database()
    good = _engine(postgres, database)
    answers.ensure_schema(good)
    no_room = postgres.new_role("CONNECTION LIMIT 0")
    stranger = postgres.new_role()  # may connect, but has no rights on the teacher's tables
    reader = postgres.new_role()
    postgres.sql(
        f"ALTER ROLE {reader} SET default_transaction_read_only = on",
        f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {reader}",
        database=database,
    )
    cases = {
        "settings": _engine(postgres, "no_such_database"),
        "refused": _engine(postgres, database, user=no_room),
        "read_only": _engine(postgres, database, user=reader),
    }
    with pytest.raises(SQLAlchemyError) as caught:
        answers.current_code(_engine(postgres, database, user=stranger))
    assert fault(caught.value) == "settings"
    for expected, engine in cases.items():
        with pytest.raises(SQLAlchemyError) as caught:
            answers.record(engine, "c", "s1", "cost", 0, 1)
        assert fault(caught.value) == expected, caught.value
        engine.dispose()
    assert answers.current_code(cases["read_only"]) == answers.DEFAULT_CODE  # reading still works
    with pytest.raises(SQLAlchemyError) as caught:
        create_engine("postgresql+nosuchdriver://teacher@127.0.0.1/x")
    assert fault(caught.value) == "settings"
    postgres.stop()
    try:
        with pytest.raises(SQLAlchemyError) as caught:
            answers.current_code(good)
        assert fault(caught.value) == "down"
    finally:
        postgres.start()
    good.dispose()
