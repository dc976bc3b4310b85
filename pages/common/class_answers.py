"""The class's answer database, opened through ``st.connection`` (classroom mode only).

The connection is named :data:`CONNECTION`. A ``[connections.class_answers]`` table in
``.streamlit/secrets.toml`` (``url = "postgresql+psycopg://…"``) points it at any SQL database,
which a class served by several app processes shares; without one it is the SQLite file in
``SPECDEC_ANSWERS_DB`` (default :data:`DEFAULT_DB`). What is stored and how it is tallied is
in :mod:`specdec_core.live.answers`. A database that cannot be reached makes :func:`engine`
return None: a learner's page shows nothing about it, and the teacher's view says what is wrong
(:func:`fault`) and how many answers wait on this process (:func:`waiting`).

A learner's first answer goes to the process's :class:`~specdec_core.live.answer_outbox.Outbox`
for the configured database and is written from there: at once when the database takes it,
else by a later script run of any page of any session (:func:`send_waiting`, called by every
page's preamble), exactly once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from streamlit.errors import StreamlitAPIException

from pages.common.models import access, classroom
from specdec_core.live import answer_outbox, answers
from specdec_core.live.classroom import Classroom, SharedReplays

CONNECTION = "class_answers"
DB_ENV = "SPECDEC_ANSWERS_DB"
DEFAULT_DB = Path(__file__).resolve().parents[2] / "class_answers.sqlite"
#: What a database that cannot be reached (or a driver that is missing) raises.
UNREACHABLE = (SQLAlchemyError, OSError, ImportError, StreamlitAPIException)

#: Seconds a database that could not be reached is left alone before it is tried again, so
#: that a server that is down slows no learner's page on every rerun.
RETRY_S = 30.0

_ready: set[str] = set()  # database URLs whose tables exist (checked once per process)
_down_until: dict[str, float] = {}  # settings that failed → when to try them again
_faults: dict[str, str] = {}  # settings → what their last failure meant (answer_outbox.FAULTS)
_outboxes: dict[str, answer_outbox.Outbox] = {}  # settings → answers waiting for that database
_writes_after: dict[str, float] = {}  # settings of a read-only database → when to try writing again


def recording() -> bool:
    """Whether this server records answers: in classroom mode only."""
    return access().classroom


#: The connection settings a ``[connections.class_answers]`` table may give (SQLConnection's).
SETTINGS = ("url", "dialect", "driver", "username", "password", "host", "port", "database", "query")


def _configured() -> dict[str, object]:
    """The connection settings in ``.streamlit/secrets.toml``; empty when there are none."""
    if not st.secrets.load_if_toml_exists():
        return {}
    section = st.secrets.get("connections", {}).get(CONNECTION, {})
    return {key: section[key] for key in SETTINGS if key in section}


def sqlite_url() -> str:
    """The default database: a SQLite file (``SPECDEC_ANSWERS_DB`` or :data:`DEFAULT_DB`)."""
    return f"sqlite:///{os.environ.get(DB_ENV) or DEFAULT_DB}"


def engine() -> Engine | None:
    """The answers database with its tables in place, or None when it cannot be reached
    (or could not be, less than :data:`RETRY_S` seconds ago; :func:`fault` says why).

    Settings given to ``st.connection`` override the secrets file's, so the secrets' own
    settings are handed on, and the default SQLite file only when there are none. Each pooled
    connection is checked before use, so a database restarted since is reconnected to."""
    settings = _settings()
    if time.monotonic() < _down_until.get(_key(settings), 0.0):
        return None
    try:
        conn = st.connection(CONNECTION, type="sql", pool_pre_ping=True, **settings)
        eng = conn.engine
        url = eng.url.render_as_string()
        if url not in _ready:
            answers.ensure_schema(eng)
            _ready.add(url)
        _faults.pop(_key(settings), None)
        return eng
    except UNREACHABLE as exc:
        pause(exc)
        return None


def _settings() -> dict[str, object]:
    """What ``st.connection`` is given: the secrets' settings, else the default SQLite file."""
    return _configured() or {"url": sqlite_url()}


def _key(settings: dict[str, object]) -> str:
    return repr(sorted(settings.items()))


def pause(exc: BaseException | None = None) -> None:
    """Leave the configured database alone for :data:`RETRY_S` seconds (it just failed with
    `exc`, remembered for :func:`fault`)."""
    key = _key(_settings())
    _down_until[key] = time.monotonic() + RETRY_S
    if exc is not None:
        _faults[key] = answer_outbox.fault(exc)


def fault() -> str | None:
    """What the configured database's last failure meant (one of ``answer_outbox.FAULTS``):
    the last time it was opened, or else the last time this process wrote answers to it;
    None when both worked."""
    key = _key(_settings())
    box = _outboxes.get(key)
    return _faults.get(key) or (box.fault if box is not None and len(box) else None)


def outbox() -> answer_outbox.Outbox:
    """This process's answers waiting for the configured database."""
    return _outboxes.setdefault(_key(_settings()), answer_outbox.Outbox())


def waiting() -> int:
    """How many answers wait in this process for the configured database (other processes'
    waiting answers are theirs: they cannot be counted from here)."""
    return len(outbox())


def session_id() -> str:
    """This session's random id (made on its first answer; it names no one)."""
    return st.session_state.setdefault("_answers_session", answers.new_session_id())


def record_answer(page: str, question: int, option: int) -> None:
    """Keep a learner's first answer to question `question` of `page` (`option`: its index in
    the lesson file) for the class's tally; nothing outside classroom mode, and nothing shown
    or raised when the database cannot take it (it waits in the process's outbox)."""
    if not recording():
        return
    handed = st.session_state.setdefault("_answers_handed", set())
    if (page, question) in handed:
        return
    outbox().add(session_id(), page, question, option)
    handed.add((page, question))
    send_waiting()


def send_waiting() -> None:
    """Write the answers waiting in this process for the configured database, if it can be
    reached; a failure pauses it (see :func:`engine`), or only its writes when it is read-only
    (the teacher's view still reads the results). Called by every page's preamble."""
    if not recording() or not waiting():
        return
    key = _key(_settings())
    if time.monotonic() < _writes_after.get(key, 0.0):
        return
    eng = engine()
    if eng is not None:
        outbox().flush(eng, failed=_write_failed)


def _write_failed(exc: BaseException) -> None:
    if answer_outbox.fault(exc) == "read_only":
        _writes_after[_key(_settings())] = time.monotonic() + RETRY_S
    else:
        pause(exc)


def shared_classroom() -> Classroom:
    """The process's :func:`~pages.common.models.classroom`, storing finished runs (live traces,
    grid runs) in the class's database too when this is a classroom server whose database
    answers, so every app process behind that database replays them (specdec_core.live.replays)."""
    room = classroom()
    eng = engine() if recording() else None
    room.share(None if eng is None else SharedReplays(eng))
    return room
