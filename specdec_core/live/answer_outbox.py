"""Answers waiting for the database, and what a database failure means for the teacher.

While the answers database cannot take them (it is down, restarting, read-only, refusing
connections), learners' answers wait in an :class:`Outbox`: one per app process and database,
so they are kept whichever page a learner moves to (and even after their browser session ends)
and written by the next script run of any session of that process once the database is back.
Each is written exactly once: the answers table's unique constraint keeps a second copy out, so
two runs flushing at the same time, or an answer already stored before the failure, count once.
A waiting answer is recorded under the class code current when it is written.

:func:`fault` names what a database error means, so the teacher's view can say what to fix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from specdec_core.live import answers

#: Most answers one outbox holds (a guard against memory growth during a very long outage:
#: a class of 100 learners answering 60 questions each is 6,000).
OUTBOX_MAX = 100_000

#: What a database failure means: its settings are wrong (URL, driver, user, database name),
#: it accepts no writes, it refuses new connections, or it cannot be reached.
FAULTS = ("settings", "read_only", "refused", "down")

# SQLSTATE codes (PostgreSQL's, also used by other servers) and message parts, per fault.
_STATES = {
    "read_only": ("25006",),  # read_only_sql_transaction (e.g. a standby, or a read-only role)
    "refused": ("53300", "57P03"),  # too_many_connections, cannot_connect_now
    # bad authorization, bad password, no such database, a user without rights on the tables
    "settings": ("28000", "28P01", "3D000", "42501"),
}
_TEXTS = {
    "read_only": ("read-only transaction", "readonly database", "read-only database"),
    "refused": ("too many connections", "remaining connection slots", "not accepting connections"),
    "settings": (
        "does not exist",
        "authentication failed",
        "no pg_hba.conf entry",
        "could not translate host",
    ),
}


def fault(exc: BaseException) -> str:
    """Which of :data:`FAULTS` the exception `exc`, raised by a database call, means."""
    if isinstance(exc, ArgumentError | NoSuchModuleError | ImportError):
        return "settings"  # a URL SQLAlchemy cannot read, or a driver that is not installed
    orig = getattr(exc, "orig", None) or exc
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    text = str(orig).lower()
    for kind in ("read_only", "refused", "settings"):
        if state in _STATES[kind] or any(part in text for part in _TEXTS[kind]):
            return kind
    return "down"


@dataclass(frozen=True)
class Waiting:
    """One answer waiting: a learner session's first `option` to `question` of `page`."""

    session: str
    page: str
    question: int
    option: int


class Outbox:
    """Answers waiting to be written, shared by every session of one process (thread-safe)."""

    def __init__(self, limit: int = OUTBOX_MAX) -> None:
        self.limit = limit
        self._waiting: dict[tuple[str, str, int], Waiting] = {}
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        #: What the last failed write meant (one of :data:`FAULTS`), None since one succeeded.
        self.fault: str | None = None

    def add(self, session: str, page: str, question: int, option: int) -> None:
        """Keep an answer until it is written; a session's first answer to a question stays."""
        with self._lock:
            key = (session, page, question)
            if key not in self._waiting and len(self._waiting) < self.limit:
                self._waiting[key] = Waiting(session, page, question, option)

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)

    def flush(self, engine: Engine, failed: Callable[[BaseException], None] | None = None) -> int:
        """Write every waiting answer to `engine`'s database; how many left the outbox.

        Stops at the first failure and keeps that answer and the rest; `failed` is then called
        with the error (nothing is raised) and :attr:`fault` says what it meant. Returns at once
        (0) when another thread is flushing this outbox already."""
        if not self._flushing.acquire(blocking=False):
            return 0
        try:
            with self._lock:
                batch = list(self._waiting.values())
            if not batch:
                return 0
            done = 0
            try:
                code = answers.current_code(engine)
                for item in batch:
                    answers.record(engine, code, item.session, item.page, item.question, item.option)
                    with self._lock:  # stored now, or an earlier copy already counts
                        self._waiting.pop((item.session, item.page, item.question), None)
                    done += 1
            except (SQLAlchemyError, OSError) as exc:
                self.fault = fault(exc)
                if failed is not None:
                    failed(exc)
                return done
            self.fault = None
            return done
        finally:
            self._flushing.release()
