"""The four test tiers, told apart by marker: ``slow`` loads the real bundled model, ``browser``
drives the served app in Chromium (every test under tests/browser/ is one), ``fast`` is every
other test that uses something heavy, and ``unit`` is the rest. pyproject.toml's ``-m unit``
makes a bare ``pytest`` run the unit tier alone.

A test is heavy when it reaches, through its own code or a fixture it requests, one of ``HEAVY``
(AppTest, torch and transformers, a subprocess or a second process, Playwright), when it is a
hypothesis test of more than ``UNIT_EXAMPLES`` examples, or when it is marked ``@pytest.mark.fast``
(by hand, for the few light tests that take a second or more). "Reaches" is read from the source
with ``ast``: the names a test's function refers to (and its lazy imports), followed into the
module-level functions, classes and constants of the test-side code it uses (tests/, support/,
bench/); the fixtures it requests, by the same rule where they are defined (the test's module or a
conftest.py above it). The app's own packages are not followed: a name in them counts only where
``HEAVY`` names it."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "fast", "slow", "browser")
BROWSER_DIR = ROOT / "tests" / "browser"

#: What a unit test may not reach: a module, or a name in one.
HEAVY = (
    "streamlit.testing",  # AppTest: a page's full script run
    "torch",  # tensors, and the random transformers built from them
    "transformers",
    "specdec_core.models.hf",  # the transformers models
    "subprocess",  # a second interpreter (pytest, a fresh import, a second database writer)
    "multiprocessing",
    "concurrent.futures.ProcessPoolExecutor",
    "playwright",
)
#: Most examples a hypothesis test may run in the unit tier (hypothesis's own default).
UNIT_EXAMPLES = 100
#: Test-side code whose names are followed to what they reach.
FOLLOWED = ("tests", "support", "bench")


def tier(markers: Iterable[str], path: Path, heavy: bool = False) -> str:
    """The tier of a test with these marker names, defined in the file at `path`; `heavy`: it
    uses something a unit test may not (see the module's docstring)."""
    names = set(markers)
    if "browser" in names or BROWSER_DIR in path.parents:
        return "browser"
    if "slow" in names:
        return "slow"
    return "fast" if heavy or "fast" in names else "unit"


def mark_tiers(items: Sequence[pytest.Item]) -> None:
    """Give every collected test its tier's marker, so ``-m`` can pick tiers by name."""
    for item in items:
        names = {mark.name for mark in item.iter_markers()}
        name = tier(names, item.path, names.isdisjoint({"browser", "slow", "fast"}) and is_heavy(item))
        if name not in names:
            item.add_marker(getattr(pytest.mark, name))


def is_heavy(item: pytest.Item) -> bool:
    """Whether a unit test may not be this one (see the module's docstring)."""
    if not isinstance(item, pytest.Function):
        return True  # nothing to read: not a plain test function
    module = _module(item.path)
    node = module.definition(
        ".".join(filter(None, [getattr(item.cls, "__qualname__", ""), item.originalname]))
    )
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return True  # nothing to read: not a plain test function
    if module.reaches(node) or _examples(node) > UNIT_EXAMPLES:
        return True
    homes = [module] + [_module(d / "conftest.py") for d in item.path.parents if d.is_relative_to(ROOT)]
    for fixture in getattr(item, "fixturenames", ()):
        home = next((m for m in homes if m and fixture in m.names), None)
        if home and home.heavy(fixture):
            return True
    return False


def heavy_name(path: Path, name: str) -> bool:
    """Whether the top-level `name` (a fixture, helper or constant) of the file at `path` reaches
    something heavy."""
    module = _module(path)
    return bool(module and module.heavy(name))


def _examples(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The examples a hypothesis test runs (its ``@settings(max_examples=…)``, else hypothesis's
    default); 0 for other tests."""
    calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
    if not any(_last(c.func) == "given" for c in calls):
        return 0
    for call in calls:
        for kw in call.keywords if _last(call.func) == "settings" else ():
            if kw.arg == "max_examples":
                return kw.value.value if isinstance(kw.value, ast.Constant) else UNIT_EXAMPLES + 1
    return UNIT_EXAMPLES


def _last(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _is_heavy_name(dotted: str) -> bool:
    return any(dotted == h or dotted.startswith(h + ".") for h in HEAVY)


def _file_of(dotted: str) -> Path | None:
    """The test-side source file of module `dotted`, if it is one."""
    if dotted.split(".")[0] not in FOLLOWED:
        return None
    base = ROOT.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _module(path: Path) -> _Module | None:
    return _Module(path) if path.is_file() else None


class _Module:
    """One source file's top-level names, and which of them reach something heavy."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text("utf-8"))
        parts = path.relative_to(ROOT).with_suffix("").parts
        self.package = ".".join(parts[:-1])
        self.imports: dict[str, str] = {}  # bound name -> dotted name it imports
        self.defs: dict[str, ast.AST] = {}  # bound name -> its def, class or assigned value
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self.imports.update(self._imported(stmt))
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.defs[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            self.defs[name.id] = stmt.value
        self.names = self.imports.keys() | self.defs.keys()
        self._heavy: dict[str, bool] = {}

    def _imported(self, stmt: ast.Import | ast.ImportFrom) -> dict[str, str]:
        """Each name `stmt` binds, and the dotted name it binds it to."""
        if isinstance(stmt, ast.Import):  # `import a.b` binds a; `import a.b as c` binds c to a.b
            return {
                a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                for a in stmt.names
            }
        base = stmt.module or ""
        if stmt.level:
            up = self.package.split(".")[: len(self.package.split(".")) - stmt.level + 1]
            base = ".".join(p for p in [*up, base] if p)
        return {a.asname or a.name: f"{base}.{a.name}" for a in stmt.names}

    def definition(self, qualname: str) -> ast.AST | None:
        """The def or class at `qualname` ("test_x", "TestC.test_x") in this module."""
        node: ast.AST | None = None
        for part in qualname.split("."):
            body = (
                self.defs
                if node is None
                else {n.name: n for n in getattr(node, "body", []) if hasattr(n, "name")}
            )
            node = body.get(part)
            if node is None:
                return None
        return node

    def heavy(self, name: str) -> bool:
        """Whether this module's top-level `name` reaches something heavy."""
        if name not in self._heavy:
            self._heavy[name] = False  # met again while pending (a cycle): nothing more there
            if name in self.imports:
                self._heavy[name] = _reaches_dotted(self.imports[name])
            elif name in self.defs:
                self._heavy[name] = self.reaches(self.defs[name])
        return self._heavy[name]

    def reaches(self, node: ast.AST) -> bool:
        """Whether the code in `node` reaches something heavy: a name of this module, a dotted
        name through one of its imports, or a lazy import."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                dotted = [a.name for a in sub.names]
            elif isinstance(sub, ast.ImportFrom):
                dotted = list(self._imported(sub).values())
            elif isinstance(sub, ast.Attribute):
                dotted = [self._dotted(sub)]
            else:
                dotted = []
            if any(map(_reaches_dotted, dotted)) or (isinstance(sub, ast.Name) and self.heavy(sub.id)):
                return True
        return False

    def _dotted(self, node: ast.Attribute) -> str:
        """``a.b.c`` with ``a`` spelled as the import that binds it; "" when ``a`` is no import."""
        chain = []
        while isinstance(node, ast.Attribute):
            chain.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.imports:
            return ".".join([self.imports[node.id], *chain])
        return ""


def _reaches_dotted(dotted: str) -> bool:
    """Whether the module or name `dotted` is heavy, or is test-side code that reaches something heavy."""
    if _is_heavy_name(dotted):
        return True
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):  # the longest module prefix that is test-side code
        path = _file_of(".".join(parts[:cut]))
        if path:
            return cut < len(parts) and _module(path).heavy(parts[cut])
    return False
