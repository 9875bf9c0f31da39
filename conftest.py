"""pytest's configuration for the whole repository (tests/ and src/'s doctests).

Parallel workers (``pytest -n 2``, pytest-xdist) each compile into a numba
cache of their own: numba's on-disk cache is not safe for concurrent writers
of different signatures. This runs before anything imports numba, which
reads ``NUMBA_CACHE_DIR`` once.
"""

import os
import tempfile

_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _BASE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), "sparseset-numba-cache"
    )
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(_BASE, _WORKER)


import pytest  # noqa: E402 (after NUMBA_CACHE_DIR is set: pytest imports no numba)

#: Files whose tests compile the same kernels share a worker (``pytest -n
#: 2`` with ``--dist loadgroup``): each worker compiles into its own numba
#: cache, so the kernels of a Grid and of the models built on it, or the
#: dask workers' warm-up, would otherwise be compiled in both. Every other
#: file is a group of its own, as ``--dist loadfile`` makes it.
SHARED = {
    "grid": (
        "tests/spaces/",
        "tests/models/",
        "tests/world/test_world_grid.py",
        "src/sparseset/spaces/",
        "src/sparseset/models/",
        "src/sparseset/jit/grid.py",
        "src/sparseset/world/grid.py",
        "src/sparseset/kernels/spaces.py",
        "tests/test_readme.py::test_guide_page_runs[spaces.md]",
        "tests/test_readme.py::test_guide_page_runs[models.md]",
    ),
    "cluster": ("tests/distributed/",),
}


def _group(nodeid: str) -> str:
    for group, prefixes in SHARED.items():
        if nodeid.startswith(prefixes):
            return group
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item.nodeid)))
