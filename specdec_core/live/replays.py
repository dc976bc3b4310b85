"""Finished runs shared by every app process through the class's database, so a request one
process ran is replayed on another.

A row holds a request's key (a SHA-256 of the key's ``repr``: settings dataclasses and the
prompt, the same in every process), the run's JSON (the live page's exported trace) and when
it was stored. The table is bounded in bytes: storing a run drops the oldest rows until the
rest fit (:data:`MAX_BYTES`). The first store of a key counts (a primary key keeps a second
process's copy of the same run out). Every function takes a SQLAlchemy engine; a database
error propagates for the caller to handle (the replay is an optimisation: a caller falls back
to its own memory).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Hashable

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, delete, func, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

#: Bytes of JSON the table keeps at most (the oldest runs dropped first).
MAX_BYTES = 64 * 2**20

metadata = MetaData()

replays_table = Table(
    "live_replays",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("payload", Text, nullable=False),
    Column("size", Integer, nullable=False),
    Column("stored_at", Float, nullable=False),
)


def key_digest(key: Hashable) -> str:
    """A request key's stable name across processes: the SHA-256 of its ``repr``."""
    return hashlib.sha256(repr(key).encode("utf-8")).hexdigest()


def ensure_schema(engine: Engine) -> None:
    """Create the replay table in `engine`'s database if it is missing."""
    metadata.create_all(engine, checkfirst=True)


def put(engine: Engine, key: Hashable, payload: str, max_bytes: int = MAX_BYTES) -> bool:
    """Store `payload` (a run's JSON) under `key`, then drop the oldest rows beyond `max_bytes`;
    False when the key was stored already (by this process or another) or the run alone is
    larger than the bound."""
    size = len(payload.encode("utf-8"))
    if size > max_bytes:
        return False
    try:
        with engine.begin() as conn:
            conn.execute(
                insert(replays_table).values(
                    key=key_digest(key), payload=payload, size=size, stored_at=time.time()
                )
            )
    except IntegrityError:
        return False
    _bound(engine, max_bytes)
    return True


def _bound(engine: Engine, max_bytes: int) -> None:
    """Drop the oldest rows until the rest hold at most `max_bytes`."""
    with engine.begin() as conn:
        total = conn.execute(select(func.coalesce(func.sum(replays_table.c.size), 0))).scalar_one()
        if total <= max_bytes:
            return
        rows = conn.execute(
            select(replays_table.c.key, replays_table.c.size).order_by(replays_table.c.stored_at)
        ).all()
        drop = []
        for key, size in rows:
            if total <= max_bytes:
                break
            drop.append(key)
            total -= size
        conn.execute(delete(replays_table).where(replays_table.c.key.in_(drop)))


def get(engine: Engine, key: Hashable) -> tuple[str, float] | None:
    """The stored JSON for `key` and when it was stored, or None."""
    with engine.connect() as conn:
        row = conn.execute(
            select(replays_table.c.payload, replays_table.c.stored_at).where(
                replays_table.c.key == key_digest(key)
            )
        ).first()
    return None if row is None else (row[0], float(row[1]))


def clear(engine: Engine) -> int:
    """Drop every stored run; how many there were."""
    with engine.begin() as conn:
        return conn.execute(delete(replays_table)).rowcount or 0


def count(engine: Engine) -> tuple[int, int]:
    """(runs stored, their bytes)."""
    with engine.connect() as conn:
        n, size = conn.execute(
            select(func.count(), func.coalesce(func.sum(replays_table.c.size), 0)).select_from(replays_table)
        ).one()
    return int(n), int(size)
