"""The cold-process cost of a script that uses jit twins (issue 17).

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

import functools
import pathlib
import subprocess
import sys

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
TWINS = SCRIPTS / "twins.py"
PLAIN = SCRIPTS / "plain.py"

# asv skips module attributes starting with "_", so the helpers below are
# never mistaken for benchmarks.


def _run(script):
    subprocess.run([sys.executable, str(script)], check=True)


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
