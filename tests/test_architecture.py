"""The map, enforced: every run-time import in ``samza_nb/`` follows the layers docs/architecture.md draws.

The layers are read from the ```` ```layers ```` block of docs/architecture.md §1 (rows lowest first;
packages on one row are peers and may not import each other). Imports under ``if TYPE_CHECKING:`` name
types only and may point anywhere, except through the walls of ``TYPE_WALLS``; imports inside functions run
and count.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "samza_nb"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

EVERYONE_MAY_IMPORT = frozenset({"errors", "crash_points", "codegen", "observe"})
"""Leaves: the errors, the crash points of the fault tests, code generation, and the observe bus."""
FACADE = frozenset({"__init__", "__main__"})
"""``samza_nb/__init__.py`` and ``__main__.py``: the public façade, free to import anything."""
LEAF_IMPORTS = {
    "errors": frozenset(),
    "crash_points": frozenset({"errors"}),
    "codegen": frozenset(),
    "observe": frozenset({"api"}),
}
"""What each leaf itself may import (besides itself)."""
TYPE_WALLS = frozenset({("container", "coordinator"), ("storage", "coordinator"), ("api", "config")})
"""(importer, imported) pairs that may not name each other even under ``if TYPE_CHECKING:``: the container
and the storage layer run the job model they are given (its values live in ``api/``), and the API a task
sees names no config class (``TaskContext.config`` is an ``api`` ``ConfigMapping``)."""


@dataclass(frozen=True)
class Violation:
    """One run-time import against the map."""

    path: str
    line: int
    imported: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} imports {self.imported}: {self.reason}"


def read_layers(text: str) -> dict[str, int]:
    """Each package's row in the ```layers block (0 = lowest)."""
    match = re.search(r"```layers\n(.*?)```", text, re.S)
    assert match, "docs/architecture.md has no ```layers block"
    rows = [line.split() for line in match.group(1).splitlines() if line.strip()]
    return {package: row for row, packages in enumerate(rows) for package in packages}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(source: str, module: str, types: bool = False) -> list[tuple[str, int]]:
    """The ``samza_nb`` modules ``source`` (module ``module``) imports at run time (with ``types``, also
    under ``if TYPE_CHECKING:``), with their lines.

    ``from samza_nb.x import y`` counts as an import of ``samza_nb.x.y`` when that is a module, so a
    package's ``__init__`` is not blamed for its sub-modules; relative imports are resolved."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not types:
                for statement in child.orelse:
                    visit_one(statement)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append((candidate if _module_path(candidate) else base, node.lineno))
        else:
            visit(node)

    visit(ast.parse(source))
    return [(name, line) for name, line in found if name == "samza_nb" or name.startswith("samza_nb.")]


def _module_path(dotted: str) -> Path | None:
    """The file of a ``samza_nb`` module or package, or None."""
    if not dotted.startswith("samza_nb"):
        return None
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def layer_of(dotted: str) -> str:
    """The top-level part of ``samza_nb`` a module belongs to: its package, a root module, or the façade."""
    parts = dotted.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def check_module(path: str, module: str, source: str, layers: dict[str, int]) -> list[Violation]:
    """The imports of one module that go against ``layers``."""
    source_layer = layer_of(module)
    if source_layer in FACADE:
        return []
    problems: list[Violation] = []
    for imported, line in runtime_imports(source, module):
        target = layer_of(imported)
        reason = _against(source_layer, target, layers)
        if reason is not None:
            problems.append(Violation(path, line, imported, reason))
    return problems


def _against(source: str, target: str, layers: dict[str, int]) -> str | None:
    """Why ``source`` may not import ``target``, or None when it may."""
    if source == target:
        return None
    if source in LEAF_IMPORTS:
        allowed = LEAF_IMPORTS[source]
        return None if target in allowed else f"{source} may import only {sorted(allowed) or 'nothing'}"
    if target in EVERYONE_MAY_IMPORT:
        return None
    if source not in layers:
        return f"package {source!r} is not on the map (add it to the layers block of docs/architecture.md)"
    if target == "__init__":
        # The façade re-exports from every layer below the top row: only the top row may use it.
        if layers[source] == max(layers.values()):
            return None
        return "the samza_nb façade re-exports the layers above; import the defining module instead"
    if target not in layers:
        return f"package {target!r} is not on the map (add it to the layers block of docs/architecture.md)"
    if layers[target] == layers[source]:
        return f"{source} and {target} are peers on one row of the map and may not import each other"
    if layers[target] > layers[source]:
        return f"{target} is above {source} on the map: the arrow points the wrong way"
    return None


def modules() -> list[tuple[str, str, str]]:
    """Path, dotted name and source of every module in ``samza_nb/`` (a package's own is
    ``<package>.__init__``)."""
    found = []
    for file in sorted(PACKAGE.rglob("*.py")):
        relative = file.relative_to(ROOT)
        found.append((str(relative), ".".join(relative.with_suffix("").parts), file.read_text()))
    return found


def all_violations(layers: dict[str, int]) -> list[Violation]:
    """Every run-time import in ``samza_nb/`` against ``layers``."""
    return [
        problem
        for path, module, source in modules()
        for problem in check_module(path, module, source, layers)
    ]


@pytest.fixture(scope="module")
def layers() -> dict[str, int]:
    return read_layers(ARCHITECTURE.read_text())


def wall_crossings(path: str, module: str, source: str) -> list[Violation]:
    """The imports of one module, ``TYPE_CHECKING`` ones included, through a wall of ``TYPE_WALLS``."""
    source_layer = layer_of(module)
    return [
        Violation(path, line, imported, f"{source_layer} may not name {target}, not even for types")
        for imported, line in dict.fromkeys(runtime_imports(source, module, types=True))
        if (source_layer, target := layer_of(imported)) in TYPE_WALLS
    ]


def test_every_import_follows_the_map(layers: dict[str, int]) -> None:
    problems = all_violations(layers)
    assert not problems, "imports against docs/architecture.md §1:\n" + "\n".join(map(str, problems))


def test_no_import_goes_through_a_wall_even_for_types() -> None:
    problems = [
        problem for path, module, source in modules() for problem in wall_crossings(path, module, source)
    ]
    assert not problems, "imports through a wall of TYPE_WALLS:\n" + "\n".join(map(str, problems))


def test_every_package_is_on_the_map(layers: dict[str, int]) -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    roots = {path.stem for path in PACKAGE.glob("*.py")}
    assert packages - set(layers) - EVERYONE_MAY_IMPORT == set()
    assert roots - FACADE - EVERYONE_MAY_IMPORT == set(), "a root module the map does not place"


def test_no_package_holds_more_than_fifteen_modules() -> None:
    crowded = {
        str(directory.relative_to(ROOT)): count
        for directory in [PACKAGE, *PACKAGE.rglob("*/")]
        if directory.is_dir() and (count := len(list(directory.glob("*.py")))) > 15
    }
    assert crowded == {}


def test_storage_importing_the_notebook_is_caught(layers: dict[str, int]) -> None:
    source = "from samza_nb.notebook.display.views import JobView\n"
    (problem,) = check_module("samza_nb/storage/manager.py", "samza_nb.storage.manager", source, layers)
    assert str(problem) == (
        "samza_nb/storage/manager.py:1 imports samza_nb.notebook.display.views: "
        "notebook is above storage on the map: the arrow points the wrong way"
    )


def test_a_lazy_import_counts_and_a_type_checking_one_does_not(layers: dict[str, int]) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from samza_nb.container.container import SamzaContainer\n"
        "def later():\n"
        "    from samza_nb import runtime\n"
    )
    problems = check_module("samza_nb/systems/base.py", "samza_nb.systems.base", source, layers)
    assert [(p.line, p.imported) for p in problems] == [(5, "samza_nb.runtime")]


@pytest.mark.parametrize(
    ("module", "imported"),
    [
        ("samza_nb.storage.manager", "samza_nb.coordinator.planning"),
        ("samza_nb.container.loop.run_loop", "samza_nb.coordinator.control"),
        ("samza_nb.api.task", "samza_nb.config.config"),
    ],
)
def test_a_type_checking_import_through_a_wall_is_caught(module: str, imported: str) -> None:
    source = f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import {imported}\n"
    path = module.replace(".", "/") + ".py"
    (problem,) = wall_crossings(path, module, source)
    assert (problem.line, problem.imported) == (3, imported)
    assert "not even for types" in problem.reason


def test_peers_may_not_import_each_other(layers: dict[str, int]) -> None:
    source = "from samza_nb.chooser.base import MessageChooser\n"
    (problem,) = check_module("samza_nb/systems/base.py", "samza_nb.systems.base", source, layers)
    assert "peers" in problem.reason


def test_a_relative_import_is_resolved(layers: dict[str, int]) -> None:
    source = "from ..notebook import errors\n"
    (problem,) = check_module("samza_nb/storage/base.py", "samza_nb.storage.base", source, layers)
    assert problem.imported == "samza_nb.notebook.errors"


def _serde_definitions(source: str) -> list[str]:
    """Serde protocols and tables of serdes a module defines: a Protocol class named ``...Serde``, or a
    module-level dict of names to serdes (a name with SERDE in it bound to a dict display whose values are
    classes or factories; a dict of dotted names in config is a choice of serdes, not a table of them)."""
    found: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name.endswith("Serde"):
            bases = {
                base.id if isinstance(base, ast.Name) else getattr(base, "attr", "") for base in node.bases
            }
            if "Protocol" in bases:
                found.append(f"protocol {node.name}")
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and "SERDE" in target.id.upper() and _holds_objects(value):
                found.append(f"table {target.id}")
    return found


def _holds_objects(value: ast.expr | None) -> bool:
    if not isinstance(value, ast.Dict):
        return False
    return any(
        not all(
            isinstance(leaf, ast.Constant)
            for leaf in ast.walk(item)
            if isinstance(leaf, ast.expr) and not isinstance(leaf, ast.Tuple)
        )
        for item in value.values
    )


def test_only_the_serde_package_defines_serdes() -> None:
    outside = {
        str(file.relative_to(ROOT)): found
        for file in sorted(PACKAGE.rglob("*.py"))
        if "serde" not in file.relative_to(PACKAGE).parts[:1]
        and (found := _serde_definitions(file.read_text()))
    }
    assert outside == {}
    assert "protocol Serde" in _serde_definitions((PACKAGE / "serde" / "base.py").read_text())
    assert _serde_definitions((PACKAGE / "serde" / "registry.py").read_text()) == ["table BUILTIN_SERDES"]


CIRCLE_FREE = ("samza_nb.container",)
"""Packages whose modules import each other in no circle, counting the imports under ``if TYPE_CHECKING:``
(a circle closed only by type names is still one module needing another that needs it: the run loop's
owners are one-way)."""


def import_graph(package: str) -> dict[str, set[str]]:
    """Every module of ``package`` (and its sub-packages) with the modules of ``package`` it imports,
    at run time or under ``if TYPE_CHECKING:``."""
    root = ROOT.joinpath(*package.split("."))
    modules: dict[str, str] = {}
    for file in sorted(root.rglob("*.py")):
        module = ".".join(file.relative_to(ROOT).with_suffix("").parts)
        modules[module.removesuffix(".__init__")] = file.read_text()
    return {
        module: {
            name
            for name, _ in runtime_imports(source, module, types=True)
            if name in modules and name != module
        }
        for module, source in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each a circle of imports), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


@pytest.mark.parametrize("package", CIRCLE_FREE)
def test_no_import_circle_counting_type_checking_imports(package: str) -> None:
    found = circles(import_graph(package))
    assert found == [], f"modules of {package} importing each other in a circle:\n" + "\n".join(
        " -> ".join(group) for group in found
    )


def test_a_circle_closed_by_a_type_checking_import_is_caught() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from samza_nb.container.loop import run_loop\n"
    )
    imported = runtime_imports(source, "samza_nb.container.knobs", types=True)
    assert [name for name, _ in imported] == ["samza_nb.container.loop.run_loop"]
    assert runtime_imports(source, "samza_nb.container.knobs") == []
