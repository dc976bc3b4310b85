"""The import rule between layers, read from the source with ``ast`` (lazy imports count too).

The rule is CONTRIBUTING.md's layer table (between ``<!-- layers`` and ``<!-- /layers -->``):
one row per layer with where it lives, the layers (or single modules, in backticks) it may
import, and the third-party packages it never imports at run time (imports under
TYPE_CHECKING aside). Every ``specdec_core`` module outside the layer folders is maths; a
``shared`` row names modules of plain constants every layer may read and that import nothing
of the project. Nothing else here states a rule, so the map and the check are one table.

No import cycles either, among ``specdec_core``, ``pages`` and ``train`` (type-only imports
count: a cycle there still ties two modules into one); and the maths keeps at most eight
modules at the top of ``specdec_core``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"

_TABLE = re.compile(r"<!-- layers:[^>]*-->\n(.*?)<!-- /layers -->", re.DOTALL)
_TICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Layers:
    """The layer table: what each layer may import, what it never imports, where layers live."""

    allowed: dict[str, frozenset[str]]  # layer → the layers and single modules it may import
    banned: dict[str, frozenset[str]]  # layer → third-party packages it never imports at run time
    packages: tuple[str, ...]  # the folders of specdec_core that are a layer of their own
    shared: frozenset[str]  # modules of constants only, readable from every layer


def read_layers(markdown: str) -> Layers:
    """The layer table of CONTRIBUTING.md's text `markdown`; ValueError when it is missing or malformed."""
    found = _TABLE.search(markdown)
    if found is None:
        raise ValueError("CONTRIBUTING.md has no <!-- layers --> table")
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in found.group(1).strip().splitlines()[2:]  # below the header and its rule
    ]
    if any(len(row) != 4 for row in rows):
        raise ValueError(f"every layer row needs four cells: {rows}")
    names = [row[0] for row in rows if row[0] != "shared"]
    allowed: dict[str, frozenset[str]] = {}
    banned: dict[str, frozenset[str]] = {}
    packages: list[str] = []
    shared: frozenset[str] = frozenset()
    for layer, where, may, never in rows:
        if layer == "shared":
            shared = frozenset(_TICKED.findall(where))
            continue
        folders = [w for w in _TICKED.findall(where) if w.startswith("specdec_core/")]
        packages += [f.removeprefix("specdec_core/").strip("/") for f in folders]
        targets = [m.strip() for m in may.split(",")]
        if targets == ["every layer"]:
            targets = names
        unknown = [m for m in targets if m not in names and not m.startswith("`")]
        if unknown:
            raise ValueError(f"{layer} may import unknown layers {unknown}")
        allowed[layer] = frozenset(m.strip("`") for m in targets)
        banned[layer] = frozenset(b.strip() for b in never.split(",") if b.strip() not in ("", "—"))
    if "maths" not in allowed or "pages" not in allowed:
        raise ValueError("the table needs a maths row and a pages row")
    return Layers(allowed, banned, tuple(packages), shared)


LAYERS = read_layers(CONTRIBUTING.read_text(encoding="utf-8"))


def layer_of(module: str, layers: Layers = LAYERS) -> str | None:
    """The layer of a project module (None outside the project)."""
    parts = module.split(".")
    if parts[0] in ("pages", "app"):
        return "pages"
    if parts[0] != "specdec_core":
        return None
    if len(parts) == 1:
        return "maths"  # the package's own __init__ (a docstring)
    return parts[1] if parts[1] in layers.packages else "maths"


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


def _allowed(target: str, layer: str, layers: Layers) -> bool:
    if target in layers.shared:
        return True
    allowed = layers.allowed[layer]
    return layer_of(target, layers) in allowed or any(
        target == a or target.startswith(a + ".") for a in allowed
    )


def crossings(sources: dict[str, tuple[str, bool]], layers: Layers = LAYERS) -> list[str]:
    """Every import that crosses a layer: `sources` maps module → (source text, is a package)."""
    known = frozenset(sources)
    bad: list[str] = []
    for module, (source, is_package) in sorted(sources.items()):
        layer = layer_of(module, layers)
        assert layer is not None, module
        for target, typing_only in imports(source, module, is_package, known):
            top = target.split(".")[0]
            if layer_of(target, layers) is None:
                if top in layers.banned[layer] and not typing_only:
                    bad.append(f"{module} ({layer}) imports {target}")
                continue
            if module in layers.shared:
                bad.append(f"{module} is shared and must import nothing of the project, but imports {target}")
            elif not _allowed(target, layer, layers):
                bad.append(f"{module} ({layer}) imports {target} ({layer_of(target, layers)})")
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


@pytest.mark.fast  # takes a second or more: kept out of the unit tier
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


def test_the_table_names_real_folders_and_modules():
    assert {"maths", "pages"} < set(LAYERS.allowed) and LAYERS.packages
    for package in LAYERS.packages:
        assert (ROOT / "specdec_core" / package / "__init__.py").is_file(), package
    for module in LAYERS.shared:
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), module


def test_the_check_follows_the_table():
    """Taking a permission out of CONTRIBUTING's table makes the code that uses it a crossing."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    row = "| viz | `specdec_core/viz/` | viz, course, live, maths |"
    assert row in text
    narrowed = read_layers(text.replace(row, "| viz | `specdec_core/viz/` | viz, course, maths |"))
    found = crossings(project_sources(), narrowed)
    assert found and all("(viz) imports specdec_core.live" in line for line in found), found


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ("no table here", "no <!-- layers --> table"),
        ("<!-- layers: -->\n| a | b |\n|---|\n| maths | x | maths |\n<!-- /layers -->", "four cells"),
        (
            "<!-- layers: -->\n|h|h|h|h|\n|-|-|-|-|\n| maths | x | maths, physics | — |\n<!-- /layers -->",
            "unknown layers ['physics']",
        ),
    ],
)
def test_a_broken_table_is_refused(table, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        read_layers(table)


def test_the_top_level_holds_at_most_eight_modules():
    """The maths at the top of specdec_core: its modules, a package such as verify/ counting as one."""
    top = ROOT / "specdec_core"
    modules = [f.stem for f in top.glob("*.py") if f.name != "__init__.py"]
    packages = [
        d.name for d in top.iterdir() if (d / "__init__.py").is_file() and d.name not in LAYERS.packages
    ]
    assert len(modules) + len(packages) <= 8, sorted(modules + packages)
