"""The folders are the layers: imports run one way, and privates stay private.

Every module of the package lives in a folder named for its concept
(``kernels/``, ``sets/``, ``stores/``, ``world/``, ...); only the package's
faces (``__init__``, ``__main__``) and its two leaves (``config``,
``_version``) stand beside them. This test reads every import statement of
the package (module level, inside functions and under ``TYPE_CHECKING``
alike) and derives the layers from the folders alone:

- the folders' imports of each other form no cycle, so each folder has a
  layer: one above the highest folder it imports (:data:`LAYERS`, which
  docs/architecture.md draws; ``tests/test_docs.py`` checks the drawing);
- inside a folder, modules import each other without a cycle;
- no module imports a private name (``_x``) of another module, and none
  reads or calls ``obj._x`` where ``_x`` is private to another module:
  classes talk through their documented interfaces.
"""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGE = SOURCE / "sparseset"
#: The modules that may stand beside the folders.
FACES = {"__init__", "__main__"}
LEAVES = {"config", "_version"}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    """``sparseset.kernels.batch`` -> ``kernels``; ``sparseset`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text())


def imported(path: pathlib.Path) -> list[tuple[str, str]]:
    """``(module, name)`` for every ``from sparseset... import name`` in ``path``,
    resolved to absolute module names (``name`` empty for ``import x``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.extend((target, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "") for alias in node.names)
    return [(m, n) for m, n in found if m.split(".")[0] == "sparseset"]


def is_module(dotted: str) -> bool:
    relative = SOURCE / pathlib.Path(*dotted.split("."))
    return relative.with_suffix(".py").exists() or relative.is_dir()


def imports_of(path: pathlib.Path) -> set[str]:
    """Every sparseset module ``path`` imports, wherever the import stands."""
    found = set()
    for target, name in imported(path):
        candidate = f"{target}.{name}"
        found.add(candidate if name and is_module(candidate) else target)
    return found - {module_name(path)}


PATHS = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {module: imports_of(path) for module, path in PATHS.items()}
FOLDERS = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def folder_graph() -> dict[str, set[str]]:
    """Folder -> the folders (and leaves) its modules import."""
    graph: dict[str, set[str]] = {unit: set() for unit in FOLDERS}
    for module, targets in GRAPH.items():
        unit = unit_of(module)
        if unit in FACES:
            continue
        graph.setdefault(unit, set()).update(
            unit_of(t) for t in targets if unit_of(t) != unit
        )
    return graph


def derive_layers() -> list[set[str]]:
    """Bottom to top: each unit one above the highest unit it imports."""
    graph = folder_graph()

    @functools.cache
    def rank(unit: str, path: tuple[str, ...] = ()) -> int:
        if unit in path:
            cycle = " -> ".join((*path[path.index(unit) :], unit))
            raise AssertionError(f"the folders import each other in a cycle: {cycle}")
        below = [rank(t, (*path, unit)) for t in graph.get(unit, ())]
        return 1 + max(below, default=-1)

    ranks = {unit: rank(unit) for unit in graph}
    top = max(ranks.values()) + 1
    ranks.update(dict.fromkeys(FACES, top))
    layers: list[set[str]] = [set() for _ in range(top + 1)]
    for unit, r in ranks.items():
        layers[r].add(unit)
    return layers


#: The layers as the folders give them, bottom first (docs/architecture.md).
LAYERS = derive_layers()


def test_every_module_lives_in_a_folder():
    loose = {unit_of(m) for m in GRAPH} - set(FOLDERS) - FACES - LEAVES
    assert loose == set(), "put these modules in the folder of their concept"


def test_the_leaves_import_nothing_of_the_package():
    for leaf in LEAVES:
        assert GRAPH[f"sparseset.{leaf}"] == set(), leaf


def test_kernels_import_no_other_folder():
    assert folder_graph()["kernels"] <= LEAVES


def test_nothing_imports_the_faces():
    for module, targets in GRAPH.items():
        if unit_of(module) not in FACES:
            assert "sparseset" not in targets, f"{module} imports the package itself"


def test_modules_inside_a_folder_import_each_other_without_a_cycle():
    inner = {
        module: {t for t in targets if unit_of(t) == unit_of(module) and t != module}
        for module, targets in GRAPH.items()
    }
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            cycle = (*path[path.index(module) :], module)
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if module in done:
            return
        for target in inner.get(module, ()):
            # A package's __init__ re-exports its modules; they may not import it.
            visit(target, (*path, module))
        done.add(module)

    for module in inner:
        visit(module, ())


def test_the_graph_sees_imports_inside_functions():
    # SparseSet.to_arrow imports io.tabular lazily: the walk must find it.
    assert "sparseset.io.tabular" in GRAPH["sparseset.sets.sparse_set"]


# -- private names ------------------------------------------------------------


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, attributes it
    assigns (``self._x = ...``, class attributes), and ``__slots__`` entries."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return {name for name in names if is_private(name)}


TREES = {module: parse(path) for module, path in PATHS.items()}
DEFINED = {module: private_names(tree) for module, tree in TREES.items()}
#: Who defines each private name of the package.
OWNERS: dict[str, set[str]] = {}
for _module, _names in DEFINED.items():
    for _name in _names:
        OWNERS.setdefault(_name, set()).add(_module)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_imports_a_private_name(module):
    private = [
        f"{target}.{name}" if name else target
        for target, name in imported(PATHS[module])
        if is_private(name) or any(is_private(part) for part in target.split("."))
        if name != "_version" and target != "sparseset._version"
    ]
    assert private == [], f"{module} imports private names"


def reaches(tree: ast.Module, own: set[str], owners: dict[str, set[str]]) -> list[str]:
    """``obj._x`` in ``tree`` on anything but self or cls, where ``_x`` is not
    among ``own`` (a class may read another instance of itself) but another
    module of the package defines it."""
    return sorted(
        {
            f"{node.value.id if isinstance(node.value, ast.Name) else '...'}"
            f".{node.attr} (line {node.lineno})"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and is_private(node.attr)
            and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            )
            and node.attr not in own
            and node.attr in owners
        }
    )


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_reaches_into_another_modules_privates(module):
    found = reaches(TREES[module], DEFINED[module], OWNERS)
    assert found == [], f"{module} reaches into privates of other modules"


def test_the_privacy_check_finds_a_reach():
    store = ast.parse("class Store:\n    def _members(self):\n        return 1\n")
    view = ast.parse("def rows(store):\n    return store._members()\n")
    owners = {"_members": {"store"}}
    assert reaches(view, private_names(view), owners) == ["store._members (line 2)"]
    assert reaches(store, private_names(store), owners) == []
