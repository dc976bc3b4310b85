"""The import rule between layers, read from the source with ``ast`` (lazy imports count too).

page → course / live → viz → maths, and beside them models and engine:

* maths (every module at the top of ``specdec_core``) imports only maths;
* models import maths; the engine imports models and maths;
* course (the data behind one lesson page) imports maths and the Markov chain only;
* live (the live pages' services) imports the engine, models and maths, never a lesson module;
* viz builds figures from maths, course and live data, never from models or the engine;
* pages and app.py may import any layer.

No import cycles either, among ``specdec_core``, ``pages`` and ``train`` (type-only imports
count: a cycle there still ties two modules into one). Nothing in ``specdec_core`` imports
streamlit; plotly is only for viz; torch and transformers only for models (the engine
loads them only through a model, type hints aside). ``SHARED`` modules are plain constants
every layer may read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Modules of constants only (no imports of the project), readable from every layer.
SHARED = frozenset({"specdec_core.live.limits"})

#: For each layer, the project layers (and single modules) it may import.
ALLOWED: dict[str, frozenset[str]] = {
    "maths": frozenset({"maths"}),
    "models": frozenset({"models", "maths"}),
    "engine": frozenset({"engine", "models", "maths"}),
    "course": frozenset({"course", "maths", "specdec_core.models.markov", "specdec_core.models.base"}),
    "live": frozenset({"live", "engine", "models", "maths"}),
    "viz": frozenset({"viz", "maths", "course", "live"}),
    "pages": frozenset({"pages", "maths", "models", "engine", "course", "live", "viz"}),
}
#: Third-party packages a layer may not import (at run time; imports under TYPE_CHECKING aside).
BANNED: dict[str, frozenset[str]] = {
    "maths": frozenset({"streamlit", "plotly", "torch", "transformers"}),
    "models": frozenset({"streamlit", "plotly"}),
    "engine": frozenset({"streamlit", "plotly", "torch", "transformers"}),
    "course": frozenset({"streamlit", "plotly", "torch", "transformers"}),
    "live": frozenset({"streamlit", "plotly", "torch", "transformers"}),
    "viz": frozenset({"streamlit", "torch", "transformers"}),
    "pages": frozenset({"torch", "transformers"}),
}
PACKAGES = ("models", "engine", "course", "live", "viz")


def layer_of(module: str) -> str | None:
    """The layer of a project module (None outside the project)."""
    parts = module.split(".")
    if parts[0] in ("pages", "app"):
        return "pages"
    if parts[0] != "specdec_core":
        return None
    if len(parts) == 1:
        return "maths"  # the package's own __init__ (a docstring)
    return parts[1] if parts[1] in PACKAGES else "maths"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(source: str, module: str, is_package: bool, known: frozenset[str]) -> list[tuple[str, bool]]:
    """(imported module, only for type checking) for every import in `source`, nested ones too.

    ``from a import b`` names ``a.b`` when that is a project module, else ``a``; relative
    imports are resolved against `module`.
    """
    found: list[tuple[str, bool]] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, typing_only)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            for alias in node.names:
                full = f"{origin}.{alias.name}"
                found.append((full if full in known else origin, typing_only))
        for child in ast.iter_child_nodes(node):
            visit(child, typing_only)

    visit(ast.parse(source), False)
    return found


def _allowed(target: str, allowed: frozenset[str]) -> bool:
    if target in SHARED:
        return True
    return layer_of(target) in allowed or any(target == a or target.startswith(a + ".") for a in allowed)


def crossings(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Every import that crosses a layer: `sources` maps module → (source text, is a package)."""
    known = frozenset(sources)
    bad: list[str] = []
    for module, (source, is_package) in sorted(sources.items()):
        layer = layer_of(module)
        assert layer is not None, module
        for target, typing_only in imports(source, module, is_package, known):
            top = target.split(".")[0]
            if layer_of(target) is None:
                if top in BANNED[layer] and not typing_only:
                    bad.append(f"{module} ({layer}) imports {target}")
                continue
            if module in SHARED:
                bad.append(f"{module} is shared and must import nothing of the project, but imports {target}")
            elif not _allowed(target, ALLOWED[layer]):
                bad.append(f"{module} ({layer}) imports {target} ({layer_of(target)})")
    return bad


def project_sources() -> dict[str, tuple[str, bool]]:
    files = [*(ROOT / "specdec_core").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]
    return {module_name(f, ROOT): (f.read_text(encoding="utf-8"), f.name == "__init__.py") for f in files}


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module → the project modules it imports (each import named by its nearest project module)."""
    known = frozenset(sources)
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        graph[module] = set()
        for target, _ in imports(source, module, is_package, known):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a ring (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def sources_with_train() -> dict[str, tuple[str, bool]]:
    files = sorted((ROOT / "train").rglob("*.py"))
    return {
        **project_sources(),
        **{module_name(f, ROOT): (f.read_text(encoding="utf-8"), f.name == "__init__.py") for f in files},
    }


def test_no_import_cycles():
    sources = sources_with_train()
    assert any(m.startswith("train.") for m in sources)
    assert cycles(import_graph(sources)) == []


def test_the_cycle_checker_catches_a_cycle():
    sources = sources_with_train()
    sources["specdec_core.theory"] = ("def f():\n    from specdec_core.stats import chisquare\n", False)
    sources["specdec_core.stats"] = ("from specdec_core import theory\n", False)
    assert cycles(import_graph(sources)) == [["specdec_core.stats", "specdec_core.theory"]]


def test_no_module_crosses_a_layer():
    sources = project_sources()
    assert len(sources) > 50  # the walk found the project
    assert crossings(sources) == []


@pytest.mark.parametrize(
    ("module", "source", "why"),
    [
        ("specdec_core.theory", "import torch\n", "specdec_core.theory (maths) imports torch"),
        ("specdec_core.stats", "from specdec_core.viz import cost\n", "imports specdec_core.viz.cost (viz)"),
        (
            "specdec_core.verify",
            "def f():\n    from .engine import loop\n",
            "imports specdec_core.engine.loop",
        ),
        ("specdec_core.live.stats", "from specdec_core.course import block\n", "imports specdec_core.course"),
        ("specdec_core.course.block", "from ..live import runs\n", "imports specdec_core.live.runs (live)"),
        ("specdec_core.course.block", "from specdec_core.models import hf\n", "specdec_core.models.hf"),
        ("specdec_core.viz.live", "import specdec_core.engine.events\n", "(engine)"),
        ("specdec_core.engine.loop", "import torch\n", "specdec_core.engine.loop (engine) imports torch"),
        ("specdec_core.models.markov", "import streamlit as st\n", "imports streamlit"),
        ("specdec_core.live.limits", "from specdec_core import theory\n", "is shared"),
    ],
)
def test_the_checker_catches_a_crossing(module, source, why):
    sources = project_sources()
    sources[module] = (source, False)
    found = crossings(sources)
    assert len(found) == 1 and why in found[0], found


def test_type_only_and_allowed_imports_pass():
    sources = project_sources()
    sources["specdec_core.engine.rows"] = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n",
        False,
    )
    sources["specdec_core.course.block"] = ("from specdec_core.models.markov import MarkovChainLM\n", False)
    sources["pages.block"] = ("import streamlit\nfrom specdec_core.viz import block\n", False)
    assert crossings(sources) == []
