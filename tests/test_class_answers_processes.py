"""Two app processes, one database: a class served by several processes shares its answers.

Each learner runs the app under AppTest in its own Python process, at the same time; both
write to one database: a SQLite file, or PostgreSQL named the way the README says, by its
``.streamlit/secrets.toml`` example written (its URL pointed at the test cluster) into the
processes' working folder. The class code the teacher set is read from the database by both,
and the teacher's view, in a third process, counts both learners.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from specdec_core.live import answers
from support.apptest import ROOT

COST = tomllib.loads((ROOT / "lessons" / "en" / "cost.toml").read_text("utf-8"))["quiz"]

LEARNER = """
import sys
from support.apptest import open_page, rerun
at = open_page("cost")
for question, option in enumerate(map(int, sys.argv[1:])):
    at.radio(key=f"quiz_cost_{question}").set_value(option)
    rerun(at)
"""

TEACHER = """
import json
from support.apptest import open_page, rerun
at = open_page("answers")
at.text_input(key="answers_passcode").input("owl-42")
at.button(key="answers_open").click()
rerun(at)
at.selectbox(key="answers_page").set_value("cost")
rerun(at)
spec = json.loads(at.get("plotly_chart")[0].proto.spec)
print(json.dumps({"learners": at.metric[0].value, "title": spec["layout"]["title"]["text"]}))
"""


def _start(script: str, env: dict[str, str], *args: str, cwd: Path = ROOT) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-3000:]
    return out


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_two_processes_record_into_one_database_and_the_teacher_sees_both(tmp_path, where, request):
    env = {
        **os.environ,
        "SPECDEC_CLASSROOM": "1",
        "SPECDEC_PRELOAD": "toy",
        "SPECDEC_TEACHER_PASSCODE": "owl-42",
    }
    cwd = ROOT
    if where == "sqlite":
        db_file = tmp_path / "shared.sqlite"
        engine = create_engine(f"sqlite:///{db_file}")
        env["SPECDEC_ANSWERS_DB"] = str(db_file)
    else:
        cluster = request.getfixturevalue("postgres")
        database = cluster.new_database()
        engine = create_engine(cluster.url(database, "teacher"))  # the tables are the teacher's
        cwd = tmp_path / "server"  # where the app runs: it reads .streamlit/secrets.toml there
        (cwd / ".streamlit").mkdir(parents=True)
        (cwd / ".streamlit" / "secrets.toml").write_text(cluster.secrets_toml(database), "utf-8")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env["SPECDEC_ANSWERS_DB"] = str(tmp_path / "not-used.sqlite")  # the secrets' database wins
    answers.ensure_schema(engine)
    answers.set_code(engine, "wed-10")  # the teacher's code, set before the learners start
    right, n = COST[0]["answer"], len(COST[0]["options"])
    learners = [
        _start(LEARNER, env, str(right), str(COST[1]["answer"]), cwd=cwd),
        _start(LEARNER, env, str((right + 1) % n), cwd=cwd),
    ]
    for proc in learners:
        _finish(proc)
    tally = answers.tally(engine, "wed-10", "cost", [(len(q["options"]), q["answer"]) for q in COST])
    assert tally[0].answered == 2 and tally[0].counts[right] == 1 and tally[1].answered == 1
    assert answers.tally(engine, answers.DEFAULT_CODE, "cost", [(n, right)])[0].answered == 0
    assert answers.sessions(engine, "wed-10") == 2
    engine.dispose()
    seen = json.loads(_finish(_start(TEACHER, env, cwd=cwd)).strip().splitlines()[-1])
    assert seen == {"learners": "2", "title": "50% correct (1 of 2)"}
    assert not (tmp_path / "not-used.sqlite").exists()
