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
