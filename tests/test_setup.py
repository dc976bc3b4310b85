"""Setup and test tiers as a newcomer meets them: a bare pytest runs the unit tier, the README's
one test command names every tier and is what CI runs, and every package imported is pinned."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from support.tiers import TIERS, heavy_name, tier

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".venv", ".git", "artifacts", "build", "node_modules"}


def _readme_test_command() -> str:
    lines = [ln.strip() for ln in (ROOT / "README.md").read_text("utf-8").splitlines()]
    commands = [ln for ln in lines if ln.startswith(".venv/bin/python -m pytest")]
    assert len(commands) == 1, commands
    return commands[0]


@pytest.mark.parametrize(
    ("markers", "path", "heavy", "expected"),
    [
        (set(), ROOT / "tests" / "test_x.py", False, "unit"),
        ({"parametrize"}, ROOT / "tests" / "test_x.py", True, "fast"),
        ({"fast"}, ROOT / "tests" / "test_x.py", False, "fast"),
        ({"slow", "parametrize"}, ROOT / "tests" / "test_x.py", True, "slow"),
        ({"browser"}, ROOT / "bench" / "tests" / "test_x.py", False, "browser"),
        (set(), ROOT / "tests" / "browser" / "test_x.py", True, "browser"),
        ({"slow"}, ROOT / "tests" / "browser" / "test_x.py", False, "browser"),
    ],
)
def test_every_test_has_exactly_one_tier(markers, path, heavy, expected):
    assert tier(markers, path, heavy) == expected


def test_what_a_test_reaches_is_read_through_helpers_lazy_imports_and_fixtures():
    conftest, apptest = ROOT / "tests" / "conftest.py", ROOT / "support" / "apptest.py"
    assert heavy_name(conftest, "tiny_hf_folders")  # through build_tiny_model's lazy torch import
    assert not heavy_name(conftest, "TINY_TEXT")
    assert heavy_name(apptest, "open_page") and not heavy_name(apptest, "ROOT")


def test_a_bare_pytest_runs_the_unit_tier_alone():
    files = [  # one file of each tier, light to import
        "tests/test_bench_apart.py",
        "tests/test_class_answers_processes.py",
        "tests/test_page_live_medusa_slow.py",
        "tests/browser/test_course_map_browser.py",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    collected = {line.split("::")[0] for line in out.splitlines() if "::" in line}
    assert collected == {files[0]}, out
    assert re.search(r"\d+ deselected", out), out


def test_the_readme_command_names_every_tier_and_ci_runs_it_once_after_ruff():
    command = _readme_test_command()
    args = shlex.split(command)
    expression = args[args.index("-m", 3) + 1]
    assert set(expression.split(" or ")) == set(TIERS)
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text("utf-8").splitlines()]
    steps = [ln for ln in ci if ln and not ln.startswith(("#", "set ", "cd "))]
    assert steps == [
        "bash .ci/setup.sh --test",
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        command,
    ]


def _pins() -> dict[str, str]:
    pins = {}
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-models.txt"):
        for line in (ROOT / name).read_text("utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line:
                package, _, version = line.partition("==")
                assert version, f"{name}: {line} is not pinned to one version"
                pins[_normal(package.split("[")[0])] = version.strip()  # psycopg[binary]: psycopg
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_level() -> set[str]:
    names = set()
    for f in ROOT.rglob("*.py"):
        if SKIP_DIRS & set(f.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    return names


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
def test_every_imported_package_is_pinned_at_the_installed_version():
    local = {p.stem for p in ROOT.iterdir()}
    third_party = {n for n in _imported_top_level() if n not in sys.stdlib_module_names and n not in local}
    owners = importlib.metadata.packages_distributions()
    assert {"numpy", "pandas", "torch"} <= third_party  # the walk read the project
    unknown = sorted(n for n in third_party if n not in owners)
    assert unknown == [], f"imported but not installed: {unknown}"
    pins = _pins()
    dists = {_normal(d) for n in third_party for d in owners[n]}
    assert sorted(dists - set(pins)) == []
    installed = {d: importlib.metadata.version(d).split("+")[0] for d in dists}  # 2.13.0+cpu is 2.13.0
    assert {d: (pins[d], v) for d, v in installed.items() if v != pins[d]} == {}


def test_without_postgresql_its_tests_fail_and_say_why(tmp_path):
    """Where no PostgreSQL server can be started, the tests that need one fail with the reason;
    they never skip."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "unit or fast",
         "tests/test_answers_outage.py", "-k", "chinese"],
        cwd=ROOT,
        env={**os.environ, "SPECDEC_POSTGRES_BIN": str(tmp_path / "no-postgres-here")},
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode != 0, out.stdout
    assert "PostgreSQL could not be started: no PostgreSQL server binaries (initdb)" in out.stdout, out.stdout
    assert "skipped" not in out.stdout and "1 error" in out.stdout, out.stdout
