"""OpenMP's wait policy: the entry points choose it before torch loads, the library never does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support.apptest import APP, ROOT

#: In a fresh interpreter: the environment variables that importing the library changed.
IMPORT_LIBRARY = """
import json, os
before = dict(os.environ)
import specdec_core.models
import specdec_core.models.hf  # torch, transformers and the real models
after = dict(os.environ)
print(json.dumps({k: [before.get(k), after.get(k)] for k in before.keys() | after.keys()
                  if before.get(k) != after.get(k)}))
"""

#: In a fresh interpreter: the policy after app.py's first run under AppTest.
RUN_APP = """
import os, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
assert not at.exception, [e.value for e in at.exception]
print(os.environ.get("OMP_WAIT_POLICY"))
"""

#: In a fresh interpreter: the policy once train's main module is loaded (main() not run).
LOAD_TRAIN = """
import os, train.__main__
print(os.environ.get("OMP_WAIT_POLICY"))
"""


def _fresh(code: str, *args: str) -> str:
    """The last line `code` prints in a new interpreter whose environment sets neither knob."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_importing_the_library_leaves_the_environment_as_it_was():
    assert json.loads(_fresh(IMPORT_LIBRARY)) == {}


def test_the_apps_entry_lets_openmp_threads_sleep():
    assert _fresh(RUN_APP, APP) == "PASSIVE"


def test_trains_entry_lets_openmp_threads_sleep():
    assert _fresh(LOAD_TRAIN) == "PASSIVE"


def test_this_test_run_chose_a_policy_before_torch_loaded():
    """The root conftest.py calls it first; a knob the machine set is kept."""
    assert os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT")


@pytest.mark.parametrize(
    ("env", "policy"),
    [({}, "PASSIVE"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"), ({"GOMP_SPINCOUNT": "30000"}, None)],
)
def test_openmp_threads_sleep_unless_the_machine_asks_otherwise(env, policy, monkeypatch):
    from specdec_core.models import omp

    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # as before torch loads (restored afterwards)
    assert omp.prefer_passive_wait() == policy


def test_once_torch_is_loaded_the_policy_is_left_alone(monkeypatch):
    from specdec_core.models import omp

    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch", object()))
    assert omp.prefer_passive_wait() is None and "OMP_WAIT_POLICY" not in os.environ
