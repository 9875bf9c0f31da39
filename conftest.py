"""pytest's configuration for the whole repository (tests/ and src/'s doctests).

Parallel workers (``pytest -n 2``, pytest-xdist) share one numba cache
(``NUMBA_CACHE_DIR``, else numba's own place): this package's kernels
save their cache entries one process at a time
(:func:`sparseset.kernels.caching.exclusive_file_lock`), so a kernel one
worker compiled, the other loads. ``--dist loadfile`` keeps a file's
tests in one worker: the functions a test file compiles for itself (its
own ``@njit`` helpers, uncached) compile once.
"""
