"""Imports run one way: no module imports a module above it.

docs/architecture.md draws the package as layers; this test reads every
import statement of the package (module level, inside functions and under
``TYPE_CHECKING`` alike) and checks that each one points to a lower layer,
and that the modules inside a subpackage import each other without a cycle.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGE = SOURCE / "sparseset"

#: Bottom to top. A unit is a module, or a subpackage taken whole.
LAYERS: list[set[str]] = [
    {"kernels"},
    {"_arrow_c", "_console", "_version", "io", "schema", "structs", "index_kinds"},
    {"_ids", "tabular", "jit"},
    {"parquet_io", "set_array"},
    {"sparse_set"},
    {"store", "entities", "examples"},
    {"entity_store"},
    {"view", "group", "persistence"},
    {"world", "distributed"},
    {"demo", "bench"},
    {"cli"},
    {"__main__", "__init__"},
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    """``sparseset.kernels.batch`` -> ``kernels``; ``sparseset`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: pathlib.Path) -> set[str]:
    """Every sparseset module ``path`` imports, wherever the import stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                relative = pathlib.Path(*candidate.split("."))
                is_module = (SOURCE / relative).with_suffix(".py").exists() or (
                    SOURCE / relative
                ).is_dir()
                found.add(candidate if is_module else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module.split(".")[0] == "sparseset"} - {name}


GRAPH = {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_unit_has_a_layer():
    units = {unit_of(module) for module in GRAPH}
    assert units - set(RANK) == set(), "place new modules in LAYERS"
    assert set(RANK) - units == set(), "LAYERS names a module that is gone"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module):
    unit = unit_of(module)
    upward = [
        target
        for target in sorted(GRAPH[module])
        if unit_of(target) != unit and RANK[unit_of(target)] >= RANK[unit]
    ]
    assert upward == [], f"{module} imports a module at or above its layer"


def test_modules_inside_a_unit_import_each_other_without_a_cycle():
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
    # world.to_arrow imports tabular lazily: the walk must find it.
    assert "sparseset.tabular" in GRAPH["sparseset.world"]
