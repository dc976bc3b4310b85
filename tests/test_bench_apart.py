"""bench and tests stay apart: tests/ never imports bench, bench/ (its own tests included) never
imports tests, and what both use lives in support/, which imports neither. Read from the
source with ``ast``, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: For each folder, the top-level packages its modules may not import.
APART = {"tests": {"bench"}, "bench": {"tests"}, "support": {"bench", "tests"}}


def imported_packages(source: str) -> set[str]:
    """The top-level package of every absolute import in `source`, nested ones too."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def crossings(sources: dict[str, str]) -> list[str]:
    """`sources` maps a path relative to the checkout to its text; each forbidden import, named."""
    bad = []
    for path, source in sorted(sources.items()):
        banned = APART[Path(path).parts[0]]
        bad += [f"{path} imports {name}" for name in sorted(imported_packages(source) & banned)]
    return bad


def test_bench_and_tests_never_import_each_other():
    sources = {
        str(f.relative_to(ROOT)): f.read_text(encoding="utf-8")
        for folder in APART
        for f in (ROOT / folder).rglob("*.py")
    }
    assert any(p.startswith("bench/tests/") for p in sources)  # the benches' own tests are read too
    assert len(sources) > 50
    assert crossings(sources) == []


def test_the_check_finds_a_crossing_however_it_is_written():
    sources = {
        "bench/speedup.py": "def f():\n    from tests.conftest import build_tiny_model\n",
        "bench/tests/test_x.py": "import tests.strategies as s\n",
        "tests/test_x.py": "from bench import speedup\n",
        "support/browser.py": "from bench.live_browser import settled\n",
        "tests/test_y.py": "from support.apptest import open_page\nfrom . import conftest\n",
    }
    assert crossings(sources) == [
        "bench/speedup.py imports tests",
        "bench/tests/test_x.py imports tests",
        "support/browser.py imports bench",
        "tests/test_x.py imports bench",
    ]
