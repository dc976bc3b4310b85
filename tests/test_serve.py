"""serve.py serves app.py warm: its ``st.App`` runs app.py, and its lifespan imports what the
first page needs before the server accepts a connection (in a fresh process, where nothing of
the app is imported yet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import asyncio, json, sys
import serve
before = {m: m in sys.modules for m in serve.WARMED}
async def start():
    async with serve.lifespan(serve.app):
        pass
asyncio.run(start())
after = {m: m in sys.modules for m in serve.WARMED}
print(json.dumps({"before": before, "after": after, "database": "sqlalchemy" in sys.modules}))
"""


def test_serve_runs_app_py():
    import serve

    assert isinstance(serve.app, st.App) and serve.app.script_path.name == "app.py"


@pytest.mark.fast  # a fresh interpreter imports the app's modules
def test_the_lifespan_imports_what_the_first_page_needs_before_any_visit():
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert not any(seen["before"].values()), seen["before"]
    assert all(seen["after"].values()), seen["after"]
    assert seen["database"], "the database layer comes with the run service's modules"
