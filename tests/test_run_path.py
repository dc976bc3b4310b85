"""CONTRIBUTING.md tells the path of a Generate press in at most five lines: every function it
names must exist where it says, so the text cannot drift from the code. And pages/common, which
several pages share, never imports one page's own parts."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _path_lines(marker: str = "run-path") -> list[str]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split(f"<!-- {marker}:", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    return [line for line in block.splitlines()[1:] if line.strip()]


def _resolve(dotted: str) -> object:
    """The object a dotted name stands for: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("marker", ["run-path", "run-service"])
def test_each_path_told_in_contributing_fits_five_lines_and_names_real_functions(marker):
    """The path of a Generate press, and of a job through the run service."""
    lines = _path_lines(marker)
    assert 1 <= len(lines) <= 5, lines
    names = [n for line in lines for n in re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)`", line)]
    assert len(names) >= 10, names
    for name in names:
        assert callable(_resolve(name)), name


def test_the_core_never_calls_streamlit_or_a_page():
    for path in sorted((ROOT / "specdec_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                )
                assert not any(m.split(".")[0] in ("streamlit", "pages") for m in mods), path


def test_shared_page_modules_import_no_page_and_no_page_s_parts():
    for path in sorted((ROOT / "pages" / "common").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pages."):
                assert node.module.startswith("pages.common"), f"{path.name} imports {node.module}"
