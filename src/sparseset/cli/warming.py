"""``python -m sparseset warm``: compile the common calls' kernels now.

A kernel compiles the first time it meets new argument types, and numba
keeps what it compiled in its on-disk cache, so later processes only load
it. From an empty cache that first time costs up to seconds per call,
paid one call at a time inside a program's first run (the performance
page has figures). :func:`warm` pays it up front (after an
install, in an image's build step, before a benchmark): it makes each
container of each index kind, with int64 ids (what lists, ``np.arange``
and ``World.create`` give), and calls its batch and one-id operations
once on a few ids, then a World's calls (views, groups, tracking,
deferred commands). Later processes that use the same cache
(``NUMBA_CACHE_DIR``, or ``__pycache__`` next to the package) start at
once. Ids of other dtypes (int32 arrays, uint64) compile their own
kernels on first use, as do the user's own ``@njit`` functions.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba.core import config as numba_config
from numba.core.dispatcher import Dispatcher

from ..sets.engine import ESTIMATED_BATCH
from ..sets.index_kinds import KINDS
from ..sets.sparse_set import SparseSet
from ..stores.component_store import ComponentStore
from ..stores.sparse_map import SparseMap
from ..world.world import World

#: The index kinds warmed unless told otherwise: all of them.
ALL_KINDS = tuple(KINDS)


@dataclass(frozen=True)
class Warmed:
    """What :func:`warm` did.

    Attributes
    ----------
    kinds : tuple of str
        The index kinds whose calls ran.
    compiled : int
        Kernel signatures compiled (new to the cache; a kernel's helpers
        count too).
    loaded : int
        Kernel signatures loaded from the cache (compiled before).
    seconds : float
        How long it took.
    cache : str
        Where numba keeps the kernels: ``NUMBA_CACHE_DIR``, or the
        ``__pycache__`` folders next to the package's modules.
    """

    kinds: tuple[str, ...]
    compiled: int
    loaded: int
    seconds: float
    cache: str

    def __str__(self) -> str:
        return (
            f"warmed {', '.join(self.kinds)}: {self.compiled} kernel signatures "
            f"compiled, {self.loaded} loaded from the cache, in {self.seconds:.1f} s "
            f"(cache: {self.cache})"
        )


def warm(kinds: Any = ALL_KINDS) -> Warmed:
    """Compile (or load) the kernels of the common calls, for ``kinds``
    (index kind names, or one).

    Raises
    ------
    ValueError
        If a kind is not one of ``"flat"``, ``"paged"``, ``"hash"``;
        nothing runs.

    Notes
    -----
    O(k) for k kinds, each a fixed tour on a few ids, then one tour of
    the default containers (``index="auto"``, whatever ``kinds`` says) on
    a long batch of scattered ids: seconds per kind from an empty cache
    (compiling), a fraction of one when the cache holds the kernels
    already.

    Examples
    --------
    >>> report = warm(["flat"])
    >>> report.kinds, str(report).startswith("warmed flat: ")
    (('flat',), True)

    A process whose kernels hold every signature already adds none:

    >>> warm("flat").compiled
    0
    >>> warm(["flat", "trie"])
    Traceback (most recent call last):
    ...
    ValueError: kinds[1] = 'trie' is not an index kind: 'flat', 'paged' or 'hash'
    """
    chosen = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    for k, kind in enumerate(chosen):
        if kind not in KINDS:
            raise ValueError(
                f"kinds[{k}] = {kind!r} is not an index kind: 'flat', 'paged' or 'hash'"
            )
    before = kernel_signatures()
    start = time.perf_counter()
    for kind in chosen:
        _sets(kind)
        _stores(kind)
        _world(kind)
    _defaults()
    seconds = time.perf_counter() - start
    after = kernel_signatures()
    return Warmed(
        kinds=chosen,
        compiled=after[0] - before[0],
        loaded=after[1] - before[1],
        seconds=seconds,
        # numba reads NUMBA_CACHE_DIR once, at its import ("" if unset).
        cache=str(getattr(numba_config, "CACHE_DIR", ""))
        or "__pycache__ next to the package",
    )


def kernel_signatures() -> tuple[int, int]:
    """``(compiled, loaded)``: how many argument signatures the package's
    kernels have compiled, and loaded from numba's cache, in this process
    so far (a kernel called with new argument types adds one).

    Notes
    -----
    O(m + d) for the m modules imported and the d kernels they hold.

    Examples
    --------
    >>> compiled, loaded = kernel_signatures()
    >>> compiled >= 0 and loaded >= 0
    True
    """
    compiled = loaded = 0
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("sparseset.") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and id(value) not in seen:
                seen.add(id(value))
                compiled += len(value.stats.cache_misses)
                loaded += len(value.stats.cache_hits)
    return compiled, loaded


def _sets(kind: str) -> None:
    """A SparseSet's batch, one-id and algebra calls."""
    ids = np.arange(0, 96, 3, dtype=np.int64)
    others = np.arange(1, 120, 5, dtype=np.int64)
    a = SparseSet(index=kind)
    a.add(ids)
    a.add(7)
    a.add([200, 201])
    a.contains(others)
    a.index(ids)
    _ = 9 in a
    a.discard(ids[:2])
    a.discard(9)
    a.remove(ids[4:6])
    b = SparseSet.from_ids(others, index=kind)
    # Small sets' algebra runs one compiled call each; larger sets' runs
    # on member bitmaps: both paths.
    big_a = SparseSet.from_ids(np.arange(0, 6000, 2, dtype=np.int64), index=kind)
    big_b = SparseSet.from_ids(np.arange(0, 6000, 3, dtype=np.int64), index=kind)
    for x, y in ((a, b), (big_a, big_b)):
        for result in (x & y, x | y, x - y, x ^ y):
            np.asarray(result)
            len(result)
    _ = (a == b, a <= b, a.isdisjoint(b))
    c = a.copy()
    c &= b
    c |= b
    c -= a
    c.update(ids)
    c.keep_only(others)
    c.sort()
    token = c.checkpoint()
    c.discard(others[:3])
    c.rollback(token)


def _defaults() -> None:
    """The default containers (``index="auto"``) on a long batch of
    scattered ids, whatever the kinds: the estimate of distinct ids a long
    batch takes, and the kind the default switches to for such ids."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 4_000_000, ESTIMATED_BATCH + 1)
    s = SparseSet()
    s.add(ids)
    s.contains(ids[:10])
    s.discard(ids[:10])
    store = ComponentStore({"pos": ("f8", 3), "mass": "f4"})
    store.add(ids[:10_000], pos=0.0, mass=1.0)
    store.get(ids[:3])


def _stores(kind: str) -> None:
    """A ComponentStore's and a SparseMap's batch and one-id calls."""
    ids = np.arange(0, 96, 3, dtype=np.int64)
    store = ComponentStore({"pos": ("f8", 3), "mass": "f4", "count": "i8"}, index=kind)
    store.add(ids, pos=1.0, mass=2.0, count=0)
    store.add(int(ids[0]), pos=(1.0, 2.0, 3.0), mass=1.0, count=1)
    store.get(ids[:4])
    store.get(int(ids[1]))
    store.set(ids[:3], mass=3.0)
    store.set(int(ids[2]), count=5)
    store.contains(ids)
    store.index(ids)
    store.add_at(np.concatenate([ids[:4], ids[:2]]), count=1)
    store.sort()
    store.discard(ids[:3])
    store.remove(ids[5:7])
    counts = SparseMap("i8", index=kind)
    counts.add_at(np.concatenate([ids, ids[:5]]), 1)
    counts[int(ids[0])] = 3
    counts.get(int(ids[1]), 0)
    _ = counts[ids[:4]]


def _world(kind: str) -> None:
    """A World's calls: create, components, views, groups, tracking,
    hooks' and deferred commands' batches, destroy."""
    w = World(index=kind)
    w.register("pos", "f8", shape=(3,), track=True)
    w.register("vel", "f8", shape=(3,))
    w.register("hp", "i4")
    e = w.create(64)
    reader = w.reader("pos")
    w.add("pos", e, pos=0.0)
    w.add("vel", e[::2], vel=1.0)
    w.add("hp", e[::3], hp=5)
    w.get("pos", e[:4])
    w.get("pos", e[1])
    w.set("pos", e[:5], pos=2.0)
    w.has("pos", e[3])
    _ = e[4] in w["pos"]
    w.touch("pos", e[:4])
    v = w.view("pos", "vel")
    v.rows("pos")
    _ = v.ids
    v.touch("pos")
    g = w.group("pos", "vel")
    g.touch("pos")
    reader.changed()
    reader.added()
    reader.commit()
    with w.deferred() as commands:
        commands.destroy(e[:3])
        commands.remove("hp", e[3])
    w.remove("vel", e[4:8:2])
    w.discard("hp", e[6:12])
    w.destroy(e[20:30])
    reader.removed()
    w.create(8)


__all__ = ["ALL_KINDS", "Warmed", "kernel_signatures", "warm"]
