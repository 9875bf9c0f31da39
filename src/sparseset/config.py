"""Every tunable of sparseset, each overridable by an environment variable.

A tunable changes how fast something runs or how much memory it takes,
never what any operation answers. Each is read once, when sparseset is
first imported, from ``SPARSESET_<NAME>`` if that is set, else its default.
A value is an integer in Python's syntax (``32768``, ``32_768``,
``0x8000``) within the bounds below; anything else stops the import with a
``ValueError`` naming the variable, the value and what it takes.

==============================  =========  ==========  ==========================
name (env: ``SPARSESET_`` +)    default    range       what it tunes
==============================  =========  ==========  ==========================
``PARALLEL_THRESHOLD``          131072     >= 1        lookups on all threads
``LOOKUP_CHUNK``                4096       1 - 2**24   ids per chunk of a batch
``DENSE_PREFETCH_AHEAD``        32         0 - 1024    lookup: dense prefetch
``ADD_PREFETCH_AHEAD``          32/64      0 - 1024    add, join: slot prefetch
``HASH_PREFETCH_AHEAD``         32         0 - 1024    hash: bucket prefetch
``HASH_MAX_LOAD_PERCENT``       50         1 - 95      hash table fill limit
``PAGED_PARTIAL_MAX``           256        1 - 4096    paged: leaf size limit
``PAGED_FULL_AT``               64         1 - 4096    paged: leaf ids limit
``PAGED_PREFILL_BYTES_PER_ID``  64         0 - 2**20   paged: pages at once
``BITMAP_MEMBERS_PER_PROBE``    2          >= 0        set algebra: bitmap use
``BITMAP_BYTES_PER_ID``         4          >= 0        set algebra: bitmap size
``SMALL_ALGEBRA``               64         0 - 2**20   set algebra: one call
``RESTORED_CAPACITY``           1048576    >= 0        loaded world's room
``DISTRIBUTED_SHARDS``          0 (auto)   0 - 65536   sharded sets' shards
``BENCH_PYTHON_CAP``            100000     >= 1        bench: Python loops' n
``BENCH_SLOW_REPEATS``          3          >= 1        bench: Python repeats
==============================  =========  ==========  ==========================

A default written ``32/64`` follows the host CPU as LLVM names it
(:data:`HOST_CPU`): the second on AMD's Zen cores (``znver1`` to
``znver5``), the first on any other.

Each name's comment below says what it does. :data:`TUNABLES` holds them
all with their defaults, bounds and variables.

Compiled code and numba's cache. numba freezes a global's value into a
kernel when it compiles it, and its on-disk cache (``cache=True``) keys a
kernel by its argument types and bytecode, not by the globals it read: a
kernel compiled under one value would be loaded, silently, under another.
So no kernel reads a tunable as a global:

- the batch kernels (:mod:`sparseset.kernels.batch`) take theirs as
  trailing run-time arguments, which the containers pass from these
  values (``kernels.UPSERT_TUNING``, ``LOOKUP_TUNING``, ``JOIN_TUNING``):
  one compiled kernel serves every setting;
- the hash and paged indexes carry theirs in their own arrays (the load
  limit in ``HashIndex.meta``, the leaf limits in ``PagedIndex.used``),
  set when the index is made and read at run time, so the Python side and
  every kernel, a user's cached ``@njit`` code too, agree on them. For the
  load limit this is a matter of correctness, not speed: a table sized
  under one limit and filled under another could refuse or lose entries;
- the rest are read by Python code only.

A changed variable takes effect in the next process. Assigning to these
names at run time is not supported: values already handed to kernels and
indexes would not follow.

Not tunables, so not here: the id ranges and dtypes of the index kinds,
:data:`~sparseset.kernels.options.NOWHERE` and ``MAX_MEMBERS``, the paged
index's 12-bit fields (its layout) and the hash index's buckets of 4 slots
(one cache line, which its vector probe assumes).

This module imports nothing of sparseset, so every layer may import it.

Examples
--------
>>> PARALLEL_THRESHOLD, TUNABLES["PARALLEL_THRESHOLD"].variable
(131072, 'SPARSESET_PARALLEL_THRESHOLD')
>>> setting("LOOKUP_CHUNK", 4096, 1, 2**24, {"SPARSESET_LOOKUP_CHUNK": "1_024"})
1024
>>> setting("LOOKUP_CHUNK", 4096, 1, 2**24, {"SPARSESET_LOOKUP_CHUNK": "0"})
Traceback (most recent call last):
...
ValueError: SPARSESET_LOOKUP_CHUNK = '0' is outside [1, 16777216]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from llvmlite import binding

#: Every environment variable here is this prefix and the tunable's name.
PREFIX: Final = "SPARSESET_"
#: The host CPU as LLVM names it (``znver5``, ``rocketlake``, ...): a few
#: defaults follow it (see the table above).
HOST_CPU: Final = str(binding.get_host_cpu_name())


@dataclass(frozen=True)
class Tunable:
    """One tunable: its name, the value in force, its default and bounds.

    Examples
    --------
    >>> TUNABLES["LOOKUP_CHUNK"].default
    4096
    """

    name: str
    value: int
    default: int
    low: int
    high: int | None

    @property
    def variable(self) -> str:
        """The environment variable that overrides the default.

        O(1).
        """
        return PREFIX + self.name


#: The tunables by name, in the order of the table above.
TUNABLES: dict[str, Tunable] = {}


def setting(
    name: str,
    default: int,
    low: int,
    high: int | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """The value of tunable ``name``: ``SPARSESET_<name>`` from ``environ``
    as an integer in ``[low, high]`` (no upper bound if ``high`` is None),
    or ``default`` where the variable is unset or empty.

    Raises ``ValueError`` naming the variable and its value if that is not
    an integer (Python syntax: underscores, ``0x``) or is out of bounds.

    Raises
    ------
    ValueError
        If the variable is set but not an integer (``int(text, 0)``), or
        lies outside ``[low, high]``.

    Notes
    -----
    O(1): one environment lookup and one parse.

    Examples
    --------
    >>> setting("DEMO", 7, 0, 9, {}), setting("DEMO", 7, 0, 9, {"SPARSESET_DEMO": "3"})
    (7, 3)
    >>> setting("DEMO", 7, 0, 9, {"SPARSESET_DEMO": "2.5"})
    Traceback (most recent call last):
    ...
    ValueError: SPARSESET_DEMO = '2.5' is not an integer
    """
    variable = PREFIX + name
    text = environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text, 0)
    except ValueError:
        raise ValueError(f"{variable} = {text!r} is not an integer") from None
    if value < low or (high is not None and value > high):
        bounds = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{variable} = {text!r} is outside {bounds}")
    return value


def _tunable(name: str, default: int, low: int, high: int | None = None) -> int:
    """Read tunable ``name`` from the environment and record it in TUNABLES."""
    value = setting(name, default, low, high)
    TUNABLES[name] = Tunable(name, value, default, low, high)
    return value


# -- lookups and adds (sparseset.sets, sparseset.kernels.batch) -------------

#: Lookup batches (``contains``, ``index``, a view's join) of at least this
#: many ids are shared out over ``numba.get_num_threads()`` threads (see
#: :mod:`sparseset.sets.pool`); below it, waking a thread costs more than
#: it saves.
PARALLEL_THRESHOLD: Final = _tunable("PARALLEL_THRESHOLD", 1 << 17, 1)
#: Ids per chunk of a lookup batch (the span of one prefetch pipeline and
#: one sign-bit OR) and of an add's warm-up pass on a paged or hash index
#: (whose temporary array takes 8 bytes per id of a chunk).
LOOKUP_CHUNK: Final = _tunable("LOOKUP_CHUNK", 1 << 12, 1, 1 << 24)
#: How many candidates ahead a lookup's check pass prefetches ``dense``, so
#: that the cache misses of many checks are in flight at once.
DENSE_PREFETCH_AHEAD: Final = _tunable("DENSE_PREFETCH_AHEAD", 32, 0, 1024)
#: How many ids ahead a one-pass add (flat, hash), a discard, a counter's
#: pass (``add_at``) or a view's join prefetches index slots; where the
#: kind looks ahead it prefetches ``dense`` for the candidates half as far
#: ahead. A Zen core runs these steps faster, against a longer wait for
#: memory, than the Intel cores this was first tuned on: there more ids
#: must be in flight to hide it.
ADD_PREFETCH_AHEAD: Final = _tunable(
    "ADD_PREFETCH_AHEAD", 64 if HOST_CPU.startswith("znver") else 32, 0, 1024
)
#: How many ids ahead a hash index's batch lookup prefetches home buckets.
HASH_PREFETCH_AHEAD: Final = _tunable("HASH_PREFETCH_AHEAD", 32, 0, 1024)

# -- index kinds (sparseset.kernels.index) -----------------------------------

#: A hash table grows before more than this percentage of its slots are in
#: use. Lower: shorter probe runs, more memory (16 bytes a slot); higher:
#: the reverse, the runs of linear probing growing fast as it nears full.
HASH_MAX_LOAD_PERCENT: Final = _tunable("HASH_MAX_LOAD_PERCENT", 50, 1, 95)
#: A paged leaf of more slots than this becomes a full page (4096 slots, no
#: tags): partial leaves cost 8 bytes a slot, pages 4 bytes an id.
PAGED_PARTIAL_MAX: Final = _tunable("PAGED_PARTIAL_MAX", 256, 1, 4096)
#: A paged leaf that would hold more ids than this becomes a full page,
#: whatever its slots.
PAGED_FULL_AT: Final = _tunable("PAGED_FULL_AT", 64, 1, 4096)
#: When a paged index grows for a batch whose ids span pages costing at
#: most this many bytes per id still to come, it takes those pages at once
#: instead of growing leaf by leaf (0: never).
PAGED_PREFILL_BYTES_PER_ID: Final = _tunable(
    "PAGED_PREFILL_BYTES_PER_ID", 64, 0, 1 << 20
)

# -- set algebra (sparseset.sets.sparse_set) --------------------------------

#: Set algebra on a flat set answers membership probes from a bitmap of its
#: members (one L2 hit a probe, where the index takes two misses) only if
#: it has at most this many members per probe: the bitmap is filled from
#: every member.
BITMAP_MEMBERS_PER_PROBE: Final = _tunable("BITMAP_MEMBERS_PER_PROBE", 2, 0)
#: ... and only if the bitmap takes at most this many bytes per probe and
#: member: it is cleared whole, however few ids it holds.
BITMAP_BYTES_PER_ID: Final = _tunable("BITMAP_BYTES_PER_ID", 4, 0)
#: Flat sets of at most this many members each combine (``&``, ``|``,
#: ``-``, ``^``) in one kernel call into a result sized once; larger ones
#: take the general path, which may probe a bitmap instead of the index.
SMALL_ALGEBRA: Final = _tunable("SMALL_ALGEBRA", 64, 0, 1 << 20)

# -- the world (sparseset.world) ---------------------------------------------

#: The most entity capacity a loaded world reserves beyond the entities it
#: holds, whatever capacity the file claims.
RESTORED_CAPACITY: Final = _tunable("RESTORED_CAPACITY", 1 << 20, 0)

# -- sharded sets (sparseset.distributed) ------------------------------------

#: Shards of a sharded set when none are asked for; 0: one per worker
#: thread of the current dask client, else per core of this machine.
DISTRIBUTED_SHARDS: Final = _tunable("DISTRIBUTED_SHARDS", 0, 0, 1 << 16)

# -- the bench command (sparseset.bench) -------------------------------------

#: The bench's Python loops (dicts, esper) run on at most this many
#: elements and are reported per element: at a million they take seconds
#: per call.
BENCH_PYTHON_CAP: Final = _tunable("BENCH_PYTHON_CAP", 100_000, 1)
#: The bench times a Python baseline at most this many times: it is slow
#: and steady.
BENCH_SLOW_REPEATS: Final = _tunable("BENCH_SLOW_REPEATS", 3, 1)

__all__ = [
    "ADD_PREFETCH_AHEAD",
    "BENCH_PYTHON_CAP",
    "BENCH_SLOW_REPEATS",
    "BITMAP_BYTES_PER_ID",
    "BITMAP_MEMBERS_PER_PROBE",
    "DENSE_PREFETCH_AHEAD",
    "DISTRIBUTED_SHARDS",
    "HASH_MAX_LOAD_PERCENT",
    "HASH_PREFETCH_AHEAD",
    "HOST_CPU",
    "LOOKUP_CHUNK",
    "PAGED_FULL_AT",
    "PAGED_PARTIAL_MAX",
    "PAGED_PREFILL_BYTES_PER_ID",
    "PARALLEL_THRESHOLD",
    "PREFIX",
    "RESTORED_CAPACITY",
    "SMALL_ALGEBRA",
    "TUNABLES",
    "Tunable",
    "setting",
]
