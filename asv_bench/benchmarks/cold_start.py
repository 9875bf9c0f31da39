"""The cold-process cost of a script: with jit twins (issue 17), and a
program's first calls from an empty numba cache or a warmed one.

Two scripts in ``scripts/``, each run as a whole new process,
``subprocess.run([sys.executable, script])``, from the interpreter's start
to its exit:

- ``time_twins``: ``scripts/twins.py`` imports sparseset, builds a
  ``SparseSet`` and a ``ComponentStore({"pos": ("f8", 3), "vel": ("f8",
  3)})`` and calls its ``@njit(cache=True)`` function ``step`` on their
  twins (``s.jit``, ``store.jit``): 1000 ``add``s to each, a pass over the
  ``pos`` and ``vel`` columns, ``contains`` and ``remove`` of every third
  id;
- ``time_plain``: ``scripts/plain.py``, the same work on plain numpy
  arrays (a hand-written sparse set and two row arrays) in a cached
  ``@njit`` function, importing numpy and numba only.

Both run with a warm numba cache: ``setup`` runs each script once per
benchmark process (the first run ever compiles, for several seconds), so a
timed run loads every compiled function from the cache, as every run of a
user's script after its first does. The issue's target: ``time_twins``
within 0.3 s of ``time_plain``. Both include the interpreter's start and
the import of numpy and numba (most of ``time_plain``).
"""

import atexit
import functools
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from ._size import SMALL

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
TWINS = SCRIPTS / "twins.py"
PLAIN = SCRIPTS / "plain.py"
FIRST = SCRIPTS / "first_program.py"

# asv skips module attributes starting with "_", so the helpers below are
# never mistaken for benchmarks.


def _run(script, cache=None):
    env = None if cache is None else {**os.environ, "NUMBA_CACHE_DIR": cache}
    subprocess.run([sys.executable, str(script)], check=True, env=env)


@functools.cache
def _warm_up():
    """Run both scripts once: numba's cache then holds their functions."""
    _run(TWINS)
    _run(PLAIN)


class ColdStart:
    """One whole run of a script in a new process, per call."""

    number = 1
    repeat = (10, 30, 30.0)

    def setup(self):
        _warm_up()

    def time_twins(self):
        _run(TWINS)

    def time_plain(self):
        _run(PLAIN)


@functools.cache
def _warmed_cache():
    """A numba cache that ``python -m sparseset warm --kinds flat`` filled."""
    cache = tempfile.mkdtemp(prefix="sparseset-warmed-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    ours = os.environ.get("NUMBA_CACHE_DIR")
    if SMALL and ours and os.path.isdir(ours):
        # CI's small run: start from the kernels the tests compiled.
        shutil.copytree(ours, cache, dirs_exist_ok=True)
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    command = [sys.executable, "-m", "sparseset", "warm", "--kinds", "flat"]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return cache


class FirstRun:
    """``scripts/first_program.py`` as a new process: a 1M-id set's add,
    contains, discard and intersection, then a 10,000-entity World's view.

    - ``time_empty_cache``: from a new, empty ``NUMBA_CACHE_DIR`` each time,
      as a user's first run after installing (every kernel compiles);
    - ``time_after_warm``: from a cache that ``python -m sparseset warm
      --kinds flat`` filled once (every kernel loads).
    """

    number = 1
    # An empty-cache run compiles for seconds: few samples.
    repeat = (3, 5, 60.0)

    def setup(self):
        self.empty = tempfile.mkdtemp(prefix="sparseset-empty-")
        _warmed_cache()

    def teardown(self):
        shutil.rmtree(self.empty, ignore_errors=True)

    def time_empty_cache(self):
        # At the small size (CI's run of every benchmark, whose figures
        # mean nothing) the run starts from the warmed cache: the same
        # script and process, without compiling every kernel again.
        _run(FIRST, _warmed_cache() if SMALL else self.empty)

    def time_after_warm(self):
        _run(FIRST, _warmed_cache())
