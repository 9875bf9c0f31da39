"""Shared test configuration: hypothesis profiles.

numba compiles a kernel the first time it meets a new combination of argument
types, which can take seconds, so no profile has a deadline.

- ``ci``: bounded, for CI machines (2 cores, a few minutes for the whole run).
  Selected when ``CI`` is set or ``HYPOTHESIS_PROFILE=ci``.
- ``dev``: the default; a few more examples, still quick.
- ``boundscheck``: fewer examples, for ``nox -s boundscheck`` (which sets
  ``NUMBA_BOUNDSCHECK=1``) outside CI; CI runs the whole suite bounds-checked
  under ``ci``.
- ``thorough``: opt-in (``HYPOTHESIS_PROFILE=thorough``) for a long soak.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

#: The kernel, state-machine and algebra tests. ``nox -s boundscheck`` runs
#: them again with numba's bounds checks compiled in (``NUMBA_BOUNDSCHECK=1``),
#: so an out-of-bounds access in a kernel fails a test instead of corrupting
#: memory; CI runs the whole suite so.
BOUNDS_CHECKED = {
    "test_bitmap_algebra.py",
    "test_grid.py",
    "test_grid_twin.py",
    "test_hashed.py",
    "test_index_kinds.py",
    "test_jit.py",
    "test_kernels.py",
    "test_paged.py",
    "test_set_array.py",
    "test_sparse_set.py",
    "test_sparse_set_state.py",
    "test_store_state.py",
    "test_world_state.py",
}

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}

# CI runs every test bounds-checked (each example slower) on 2 cores within
# 10 minutes; the dev and thorough profiles are where examples are many.
settings.register_profile("ci", max_examples=12, stateful_step_count=12, **_COMMON)
# nox -s boundscheck looks for out-of-bounds accesses, which every path
# reaches in few examples; its time goes to compiling the kernels again with
# the checks in.
settings.register_profile(
    "boundscheck", max_examples=10, stateful_step_count=10, **_COMMON
)
settings.register_profile("dev", max_examples=100, stateful_step_count=40, **_COMMON)
settings.register_profile(
    "thorough", max_examples=2_000, stateful_step_count=100, **_COMMON
)


def _profile_name() -> str:
    explicit = os.environ.get("HYPOTHESIS_PROFILE")
    if explicit:
        return explicit
    if os.environ.get("CI"):
        return "ci"
    if os.environ.get("NUMBA_BOUNDSCHECK") == "1":
        return "boundscheck"
    return "dev"


settings.load_profile(_profile_name())


def _bounds_checked(item):
    # A test of what a fresh process loads from the cache checks the
    # cache, not memory safety: bounds checks add nothing to it.
    fresh = item.get_closest_marker("fresh_process") is not None
    return item.path.name in BOUNDS_CHECKED and not fresh


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _bounds_checked(item):
            item.add_marker(pytest.mark.boundscheck)
