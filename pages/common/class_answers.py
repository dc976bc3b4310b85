"""The class's answer database, opened through ``st.connection`` (classroom mode only).

The connection is named :data:`CONNECTION`. A ``[connections.class_answers]`` table in
``.streamlit/secrets.toml`` (``url = "postgresql+psycopg://…"``) points it at any SQL database,
which a class served by several app processes shares; without one it is the SQLite file in
``SPECDEC_ANSWERS_DB`` (default :data:`DEFAULT_DB`). What is stored and how it is tallied is
in :mod:`specdec_core.live.answers`. A database that cannot be reached makes :func:`engine`
return None: a learner's page records nothing and shows nothing about it, and the teacher's
view says the results are unavailable.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from streamlit.errors import StreamlitAPIException

from pages.common.models import access
from specdec_core.live import answers

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
    (or could not be, less than :data:`RETRY_S` seconds ago).

    Settings given to ``st.connection`` override the secrets file's, so the secrets' own
    settings are handed on, and the default SQLite file only when there are none."""
    settings = _settings()
    if time.monotonic() < _down_until.get(_key(settings), 0.0):
        return None
    try:
        conn = st.connection(CONNECTION, type="sql", **settings)
        eng = conn.engine
        url = eng.url.render_as_string()
        if url not in _ready:
            answers.ensure_schema(eng)
            _ready.add(url)
        return eng
    except UNREACHABLE:
        pause()
        return None


def _settings() -> dict[str, object]:
    """What ``st.connection`` is given: the secrets' settings, else the default SQLite file."""
    return _configured() or {"url": sqlite_url()}


def _key(settings: dict[str, object]) -> str:
    return repr(sorted(settings.items()))


def pause() -> None:
    """Leave the configured database alone for :data:`RETRY_S` seconds (it just failed)."""
    _down_until[_key(_settings())] = time.monotonic() + RETRY_S


def session_id() -> str:
    """This session's random id (made on its first answer; it names no one)."""
    return st.session_state.setdefault("_answers_session", answers.new_session_id())


def record_answer(page: str, question: int, option: int) -> None:
    """Keep a learner's first answer to question `question` of `page` (`option`: its index in
    the lesson file) for the class's tally; nothing outside classroom mode, and nothing shown
    or raised when the database cannot be reached (the first answer is tried again later)."""
    if not recording():
        return
    first = st.session_state.setdefault("_answers_first", {})
    stored = st.session_state.setdefault("_answers_stored", set())
    key = (page, question)
    if key in stored:
        return
    option = first.setdefault(key, option)
    eng = engine()
    if eng is None:
        return
    try:
        answers.record(eng, answers.current_code(eng), session_id(), page, question, option)
    except UNREACHABLE:
        pause()
        return
    stored.add(key)
