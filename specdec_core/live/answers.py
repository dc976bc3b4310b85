"""The class's quiz answers: stored anonymously in a SQL database, tallied for the teacher.

A row holds only what the teacher's view needs: the class code the teacher set, a random
session id, the page, the question's number and the chosen option's index in the lesson
file, which every learner sees under the same letter (:func:`option_letter`). No name,
address, browser or time is stored.
The first answer per (class, session, page, question) counts: a unique constraint keeps
later ones out, so two app processes writing to one database agree without a lock.

Every function takes a SQLAlchemy engine; which database it is (a SQLite file, PostgreSQL …)
is the caller's choice. :func:`ensure_schema` creates the tables when missing.
"""

from __future__ import annotations

import csv
import io
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

#: The class code used until the teacher sets one.
DEFAULT_CODE = "class-1"
#: Longest class code, page name and session id stored.
CODE_MAX = 40
PAGE_MAX = 64
SESSION_BYTES = 12

metadata = MetaData()

answers_table = Table(
    "class_answers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(CODE_MAX), nullable=False),
    Column("session", String(2 * SESSION_BYTES), nullable=False),
    Column("page", String(PAGE_MAX), nullable=False),
    Column("question", Integer, nullable=False),
    Column("option", Integer, nullable=False),
    UniqueConstraint("class_code", "session", "page", "question", name="first_answer_counts"),
)

#: The class code in use: one row, shared by every process using the database.
current_table = Table(
    "class_current",
    metadata,
    Column("slot", Integer, primary_key=True),
    Column("class_code", String(CODE_MAX), nullable=False),
)

_CODE = re.compile(r"^[\w.\-]{1," + str(CODE_MAX) + r"}$")


def option_letter(index: int) -> str:
    """The letter an option shows under, on learners' screens and the teacher's chart alike:
    A for the lesson file's first option, B for its second, …"""
    if not 0 <= index < 26:
        raise ValueError(f"an option's index is 0 to 25, got {index}.")
    return chr(ord("A") + index)


def new_session_id() -> str:
    """A random id for one learner's session: it names no one and is never derived from them."""
    return secrets.token_hex(SESSION_BYTES)


def clean_code(raw: str) -> str | None:
    """A class code the teacher typed, trimmed; None unless it is 1–40 letters, digits, ``_.-``."""
    code = raw.strip()
    return code if _CODE.match(code) else None


def ensure_schema(engine: Engine) -> None:
    """Create the answer tables in `engine`'s database if they are missing."""
    metadata.create_all(engine, checkfirst=True)


def current_code(engine: Engine) -> str:
    """The class code answers are recorded under now (:data:`DEFAULT_CODE` until one is set)."""
    with engine.connect() as conn:
        code = conn.execute(select(current_table.c.class_code).where(current_table.c.slot == 1)).scalar()
    return code if code is not None else DEFAULT_CODE


def set_code(engine: Engine, code: str) -> str:
    """Make `code` the class code answers are recorded under; ValueError if it is not valid."""
    clean = clean_code(code)
    if clean is None:
        raise ValueError(f"a class code is 1–{CODE_MAX} letters, digits, '_', '.' or '-'")
    try:
        _write_code(engine, clean)
    except IntegrityError:  # another teacher's insert came first: the row is there now, update it
        _write_code(engine, clean)
    return clean


def _write_code(engine: Engine, code: str) -> None:
    """Update the class code's one row, or insert it where there is none yet (an update first:
    two teachers setting a code at once must not both insert the row; the last code set stays)."""
    with engine.begin() as conn:
        slot = current_table.c.slot == 1
        if conn.execute(update(current_table).where(slot).values(class_code=code)).rowcount == 0:
            conn.execute(insert(current_table).values(slot=1, class_code=code))


def record(engine: Engine, code: str, session: str, page: str, question: int, option: int) -> bool:
    """Store one answer; False (nothing stored) when this session already answered that question."""
    if question < 0 or option < 0:
        raise ValueError("question and option are indices from 0")
    row = {
        "class_code": code,
        "session": session,
        "page": page[:PAGE_MAX],
        "question": int(question),
        "option": int(option),
    }
    try:
        with engine.begin() as conn:
            conn.execute(insert(answers_table).values(**row))
    except IntegrityError:  # the unique constraint: an earlier answer already counts
        return False
    return True


def clear(engine: Engine, code: str) -> int:
    """Delete every answer stored under class `code` (for the next class); how many there were."""
    with engine.begin() as conn:
        return conn.execute(delete(answers_table).where(answers_table.c.class_code == code)).rowcount


@dataclass(frozen=True)
class Tally:
    """One question's answers: `counts[j]` learners chose option j (its index in the lesson
    file); `answer` is the right option's index."""

    counts: tuple[int, ...]
    answer: int

    @property
    def answered(self) -> int:
        """How many learners answered."""
        return sum(self.counts)

    @property
    def share_correct(self) -> float | None:
        """The share who chose the right option; None before anyone answered (no 0/0)."""
        return self.counts[self.answer] / self.answered if self.answered else None


def tally(engine: Engine, code: str, page: str, keys: Sequence[tuple[int, int]]) -> list[Tally]:
    """The answers of class `code` to each question of `page`; `keys[i]` is question i's
    (number of options, right option). Stored options outside a question's range are left out."""
    t = answers_table
    query = (
        select(t.c.question, t.c.option, func.count())
        .where(t.c.class_code == code, t.c.page == page)
        .group_by(t.c.question, t.c.option)
    )
    counts = [[0] * n for n, _ in keys]
    with engine.connect() as conn:
        for question, option, n in conn.execute(query):
            if 0 <= question < len(counts) and 0 <= option < len(counts[question]):
                counts[question][option] = int(n)
    return [Tally(tuple(c), answer) for c, (_, answer) in zip(counts, keys, strict=True)]


def sessions(engine: Engine, code: str) -> int:
    """How many learner sessions answered at least once in class `code`."""
    t = answers_table
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count(func.distinct(t.c.session))).where(t.c.class_code == code)
            ).scalar()
            or 0
        )


CSV_COLUMNS = ("class_code", "session", "page", "question", "option", "correct")


def answers_csv(engine: Engine, code: str, answer_keys: dict[str, Sequence[int]]) -> str:
    """Every answer of class `code` as CSV (questions and options numbered from 0, as in the
    lesson files); `answer_keys[page][i]` is question i's right option, for the ``correct``
    column (empty where the page or question is unknown)."""
    t = answers_table
    query = (
        select(t.c.class_code, t.c.session, t.c.page, t.c.question, t.c.option)
        .where(t.c.class_code == code)
        .order_by(t.c.page, t.c.question, t.c.id)
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    with engine.connect() as conn:
        for row in conn.execute(query):
            key = answer_keys.get(row.page, ())
            correct = "" if row.question >= len(key) else int(row.option == key[row.question])
            writer.writerow([*row, correct])
    return out.getvalue()
