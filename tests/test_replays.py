"""Finished live runs in the class's database: stored once under their request, bounded in bytes
with the oldest dropped first, emptied by a clear, and replayed by another app process (here a
second Classroom, and a second interpreter) on SQLite and PostgreSQL (ids ``[sqlite]`` and
``[postgres]``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from specdec_core.live import replays
from specdec_core.live.classroom import Classroom, SharedReplays
from specdec_core.live.live_job import LiveJob
from specdec_core.live.model_choices import DraftSpec, TargetSpec
from specdec_core.live.run_service import DONE, RunService
from specdec_core.live.settings import LiveSettings
from specdec_core.live.shelf import ModelShelf
from specdec_core.live.trace import from_json
from tests.test_run_service import until

ROOT = Path(__file__).resolve().parents[1]
DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.fast)]
PROMPT = "the cat sat on the mat . the dog ran home . the cat"
SETTINGS = LiveSettings(
    TargetSpec("toy"), DraftSpec("toy_draft"), chat=False, temperature=0.7, max_new_tokens=20
)


@pytest.fixture(params=DATABASES)
def url(request, tmp_path):
    """An empty database: a SQLite file, or a new database on the session's PostgreSQL cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class.sqlite'}"
    cluster = request.getfixturevalue("postgres")
    return cluster.readme_url(cluster.new_database())


@pytest.fixture
def db(url):
    engine = create_engine(url)
    replays.ensure_schema(engine)
    yield engine
    engine.dispose()


def test_a_run_is_stored_once_and_read_back(db):
    assert replays.get(db, ("a", 1)) is None
    assert replays.put(db, ("a", 1), '{"x": 1}')
    assert not replays.put(db, ("a", 1), '{"x": 2}'), "the first store of a request counts"
    payload, stored_at = replays.get(db, ("a", 1))
    assert payload == '{"x": 1}' and stored_at <= time.time()
    assert replays.count(db) == (1, 8)
    assert replays.clear(db) == 1 and replays.get(db, ("a", 1)) is None and replays.count(db) == (0, 0)


def test_the_table_keeps_its_bound_by_dropping_the_oldest_first(db):
    for i in range(5):
        assert replays.put(db, i, "x" * 100, max_bytes=350)
        time.sleep(0.01)  # distinct times, so "oldest" is well defined on every database
    assert replays.count(db) == (3, 300)
    assert [replays.get(db, i) is not None for i in range(5)] == [False, False, True, True, True]
    assert not replays.put(db, "huge", "x" * 351, max_bytes=350), "larger than the bound alone"


def test_a_key_is_named_the_same_in_every_process():
    key = (SETTINGS, PROMPT)
    code = f"""
        from specdec_core.live.model_choices import DraftSpec, TargetSpec
        from specdec_core.live.replays import key_digest
        from specdec_core.live.settings import LiveSettings
        s = LiveSettings(
            TargetSpec("toy"), DraftSpec("toy_draft"), chat=False, temperature=0.7, max_new_tokens=20
        )
        print(key_digest((s, {PROMPT!r})))
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == replays.key_digest(key)


def _run(room: Classroom, service: RunService):
    job = LiveJob(SETTINGS, PROMPT, ModelShelf(), None, room)
    return until(service, service.submit(job), (DONE,))


def test_a_run_on_one_process_is_replayed_on_another_and_a_clear_empties_both(db):
    service = RunService()
    try:
        first, second = Classroom(), Classroom()  # two app processes' classrooms, one database
        for room in (first, second):
            room.share(SharedReplays(db))
        ran = _run(first, service)
        assert not ran.result.meta.get("cached")
        assert replays.count(db)[0] == 1
        again = second.lookup_shared((SETTINGS, PROMPT), from_json)
        assert again is not None and again.trace.speculative.tokens == ran.result.speculative.tokens
        answered = _run(second, service)  # answered at once, from the first process's run
        assert answered.result.meta["cached"] and answered.started == answered.ended
        first.forget()  # the teacher's clear (unloading the models) empties the database too
        assert replays.count(db)[0] == 0
        third = Classroom()
        third.share(SharedReplays(db))
        assert third.lookup_shared((SETTINGS, PROMPT), from_json) is None
    finally:
        service.close()


def test_a_database_that_fails_leaves_replays_to_the_process(tmp_path):
    room = Classroom()
    broken = create_engine(f"sqlite:///{tmp_path / 'missing' / 'class.sqlite'}")  # its folder does not exist
    room.share(SharedReplays(broken))
    assert room.shared is None and room.shared_error is not None
    service = RunService()
    try:
        assert _run(room, service).result.speculative.complete  # the run goes on, kept in memory
        assert room.lookup_shared((SETTINGS, PROMPT), from_json) is not None
    finally:
        service.close()


def test_a_grids_runs_on_one_process_are_replayed_by_a_grid_on_another(db, tiny_hf_folders):
    from specdec_core.live.compare_run import GridRun
    from tests.test_live_compare import TinyModels, spec

    first, second = Classroom(), Classroom()
    for room in (first, second):
        room.share(SharedReplays(db))
    models = TinyModels(tiny_hf_folders)
    ran = GridRun(spec(), models, cache=first)
    assert not any(step.replayed for step in ran)
    assert replays.count(db)[0] == len(ran.measured) == spec().runs
    again = GridRun(spec(), models, cache=second)
    assert all(step.replayed for step in again), "every run came from the other process's"
    assert again.measured == ran.measured
