"""``python -m sparseset bench``: the core workloads next to their usual alternatives.

Seven workloads, each timed for sparseset and for what a Python programmer
would otherwise write (builtin sets and dicts, numpy, esper when it is
installed), on the same data in the same process, so that the ratios are
what to read:

=============  ==========================================================
set add        ``SparseSet.add(ids)``: n new ids into an empty set
               reserved for the 4n-id space
contains       ``SparseSet.contains(queries)``: n queries, half members
discard        ``SparseSet.discard(victims)``: a random half of the members
intersection   ``a & b``: two n-id sets sharing half their members
store add      ``ComponentStore.add(ids, pos=P, vel=V)``: n rows of two
               float64 3-vectors into an empty, reserved store
group update   ``g["pos"] += g["vel"] * dt`` over the owning group of a
               World whose n entities all have ``pos`` and ``vel``
view join      ``w.view("pos", "vel")`` built, then ``pos += vel * dt``
               through its rows by a cached ``@njit`` system; ``pos`` on
               all n entities, ``vel`` on a random half
=============  ==========================================================

The ids are n distinct ids drawn from a 4n-id space in random order (fixed
seed), as in the asv suite, so that at n = 1,000,000 the random reads
leave the caches. Times are ns per element: per id, per discarded member,
per matched entity for the view join. Every measurement is the median over
``repeats`` runs, each a fresh untimed setup followed by one timed call;
every compiled path runs once at a tiny size first, so compilation is
never timed.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import IO, Any

import numba
import numpy as np
from numba import njit

from . import __version__
from ._console import Stopwatch, progress, pyplot
from .sparse_set import FLAT_LIMIT, SparseSet
from .store import ComponentStore
from .world import World

#: Python loops over dicts and esper run on at most this many elements and
#: are reported per element: at 1,000,000 they would take seconds per call.
PYTHON_CAP = 100_000
#: Timed runs of a Python baseline, at most: they are slow and steady.
SLOW_REPEATS = 3
DT = 1.0 / 60.0
SCHEMA = {"pos": ("f8", 3), "vel": ("f8", 3)}
#: The implementation every baseline is compared with.
SPARSESET = "sparseset"
#: The esper world the baselines use; deleted when the bench is done.
_ESPER_WORLD = "sparseset-bench"
#: Size of the untimed warm-up run that compiles every numba path.
_WARM_UP_N = 64


@dataclass(frozen=True)
class Result:
    """One measurement: a workload run by one implementation.

    Attributes
    ----------
    workload : str
        The workload's name, such as ``"contains"``.
    implementation : str
        ``"sparseset"``, or a baseline such as ``"numpy isin"``; its first
        word is the family (sparseset, numpy, Python, esper).
    ns_per_element : float
        ``seconds / elements`` in nanoseconds.
    elements : int
        Elements the timed call worked on (ids, rows, matched entities).
    seconds : float
        Median seconds of one timed call.
    scaled : bool
        True when a Python loop was timed on a subset of ``PYTHON_CAP``
        elements rather than all n; its ns per element stands for n.
    low, high : float, optional
        With ``--processes``: the smallest and largest ns per element of
        the fresh processes (``ns_per_element`` is then their median).

    Examples
    --------
    >>> r = Result("contains", "sparseset", 7.5, 1000, 7.5e-6, False)
    >>> r.implementation, r.ns_per_element
    ('sparseset', 7.5)
    """

    workload: str
    implementation: str
    ns_per_element: float
    elements: int
    seconds: float
    scaled: bool = False
    low: float | None = None
    high: float | None = None


# -- numba systems ----------------------------------------------------------


@njit(cache=True)
def _integrate_rows(
    pos: np.ndarray,
    vel: np.ndarray,
    pos_rows: np.ndarray,
    vel_rows: np.ndarray,
    dt: float,
) -> None:
    # A user's system over a view: the view hands out rows, the system
    # gathers through them. Plain int64 indexing, as a user would write it.
    for k in range(pos_rows.shape[0]):
        p = pos_rows[k]
        q = vel_rows[k]
        for j in range(3):
            pos[p, j] += vel[q, j] * dt


# -- esper components: slotted, like a careful esper user's -------------------


@dataclass(slots=True)
class _Pos:
    x: float
    y: float
    z: float


@dataclass(slots=True)
class _Vel:
    x: float
    y: float
    z: float


def _esper_module() -> Any:
    """esper if it can be imported now, else None (its rows are then left out)."""
    try:
        import esper
    except ImportError:
        return None
    return esper


# -- data ---------------------------------------------------------------------


class _Data:
    """Every workload's input for one n and seed; Python lists made on demand."""

    def __init__(self, n: int, seed: int, esper: Any) -> None:
        rng = np.random.default_rng(seed)
        self.n = n
        self.half = max(1, n // 2)
        self.space = 4 * n
        self.esper = esper
        perm = rng.permutation(self.space)
        self.ids = perm[:n].copy()
        hits = rng.choice(self.ids, self.half, replace=False)
        misses = rng.choice(perm[n:], n - self.half, replace=False)
        self.queries = rng.permutation(np.concatenate([hits, misses]))
        self.victims = rng.choice(self.ids, self.half, replace=False)
        # Half of these are the last `half` of self.ids, half non-members.
        self.other = rng.permutation(perm[n - self.half : 2 * n - self.half])
        self.pos = rng.uniform(-100.0, 100.0, (n, 3))
        self.vel = rng.standard_normal((n, 3))
        # World workloads: entity k (handle k in a fresh world) has pos[k]
        # and vel[k]; components are added in random order so that rows
        # and handles disagree, as after a while of play.
        self.pos_order = rng.permutation(n)
        self.vel_order = rng.permutation(n)
        self.vel_members = rng.choice(n, self.half, replace=False)
        self.cap = min(n, PYTHON_CAP)
        self.scaled = n > PYTHON_CAP

    @cached_property
    def ids_list(self) -> list[int]:
        ids: list[int] = self.ids.tolist()
        return ids

    @cached_property
    def pyset(self) -> set[int]:
        return set(self.ids_list)

    def world(self, vel_entities: np.ndarray) -> tuple[World, np.ndarray]:
        """A fresh world: pos on every entity, vel on ``vel_entities``."""
        w = World(capacity=self.n)
        w.register("pos", "f8", shape=(3,))
        w.register("vel", "f8", shape=(3,))
        e = w.create(self.n)
        w.add("pos", e[self.pos_order], pos=self.pos[self.pos_order])
        w.add("vel", e[vel_entities], vel=self.vel[vel_entities])
        return w, e


@dataclass(frozen=True)
class _Case:
    """One implementation of a workload.

    ``prepare`` does the untimed setup of one run and returns the call to
    time; the call returns what it made or changed, and ``canonical`` turns
    that into arrays comparable across implementations (the tests check
    that every implementation does the same work).
    """

    implementation: str
    prepare: Callable[[], Callable[[], Any]]
    elements: int
    canonical: Callable[[Any], Any]
    slow: bool = False
    scaled: bool = False


def _fixed(call: Callable[[], Any]) -> Callable[[], Callable[[], Any]]:
    """A ``prepare`` for a call whose work does not change from run to run."""
    return lambda: call


def _sorted_ids(ids: Any) -> np.ndarray:
    if isinstance(ids, SparseSet):
        return np.sort(ids.ids.astype(np.int64))
    if isinstance(ids, set):
        return np.sort(np.fromiter(ids, np.int64, len(ids)))
    return np.sort(np.asarray(ids, np.int64))


def _positions(w: World, n: int) -> np.ndarray:
    # A fresh world's handles are the indexes 0 .. n-1.
    pos: np.ndarray = w.get("pos", np.arange(n))["pos"]
    return pos


# -- workloads ------------------------------------------------------------------


def _set_add(d: _Data) -> list[_Case]:
    ids, ids_list = d.ids, d.ids_list
    # Filled once and cleared before each run: clear() only resets the
    # size, so the add does all its work, but the timed call no longer
    # pays first-touch page faults on the reserved 4n index, whose cost
    # depends on the allocator and huge pages, not on the library.
    s = SparseSet(capacity=d.space)
    s.add(ids)

    def sparse() -> Callable[[], Any]:
        s.clear()

        def run() -> SparseSet:
            s.add(ids)
            return s

        return run

    def python() -> Callable[[], Any]:
        py: set[int] = set()

        def run() -> set[int]:
            py.update(ids_list)
            return py

        return run

    return [
        _Case(SPARSESET, sparse, d.n, _sorted_ids),
        _Case("Python set.update", python, d.n, _sorted_ids, slow=True),
    ]


def _contains(d: _Data) -> list[_Case]:
    q = d.queries
    q_list = q.tolist()
    s = SparseSet.from_ids(d.ids, capacity=d.space)
    ids, pyset = d.ids, d.pyset

    def python() -> list[bool]:
        return [x in pyset for x in q_list]

    return [
        _Case(SPARSESET, _fixed(lambda: s.contains(q)), d.n, np.asarray),
        _Case("numpy isin", _fixed(lambda: np.isin(q, ids)), d.n, np.asarray),
        _Case("Python set", _fixed(python), d.n, np.asarray, slow=True),
    ]


def _discard(d: _Data) -> list[_Case]:
    victims, victims_list = d.victims, d.victims.tolist()
    base, pybase = SparseSet.from_ids(d.ids, capacity=d.space), d.pyset

    # Discard mutates: every run gets its own full copy, made untimed.
    def sparse() -> Callable[[], Any]:
        s = base.copy()

        def run() -> SparseSet:
            s.discard(victims)
            return s

        return run

    def python() -> Callable[[], Any]:
        py = pybase.copy()

        def run() -> set[int]:
            py.difference_update(victims_list)
            return py

        return run

    return [
        _Case(SPARSESET, sparse, d.half, _sorted_ids),
        _Case("Python set.difference_update", python, d.half, _sorted_ids, slow=True),
    ]


def _intersection(d: _Data) -> list[_Case]:
    a = SparseSet.from_ids(d.ids, capacity=d.space)
    b = SparseSet.from_ids(d.other, capacity=d.space)
    a_ids, b_ids = d.ids, d.other
    set_a, set_b = d.pyset, set(d.other.tolist())
    return [
        _Case(SPARSESET, _fixed(lambda: a & b), d.n, _sorted_ids),
        _Case(
            "numpy intersect1d",
            _fixed(lambda: np.intersect1d(a_ids, b_ids, assume_unique=True)),
            d.n,
            _sorted_ids,
        ),
        _Case(
            "Python set &", _fixed(lambda: set_a & set_b), d.n, _sorted_ids, slow=True
        ),
    ]


def _rows_by_id(ids: Any, pos: Any, vel: Any) -> tuple[np.ndarray, ...]:
    order = np.argsort(np.asarray(ids, np.int64), kind="stable")
    return (
        np.asarray(ids, np.int64)[order],
        np.asarray(pos, np.float64).reshape(-1, 3)[order],
        np.asarray(vel, np.float64).reshape(-1, 3)[order],
    )


def _store_add(d: _Data) -> list[_Case]:
    ids, pos, vel = d.ids, d.pos, d.vel
    # Filled and cleared once, as in set add: no first-touch page faults.
    store = ComponentStore(SCHEMA, capacity=d.space)
    store.add(ids, pos=pos, vel=vel)

    def sparse() -> Callable[[], Any]:
        store.clear()

        def run() -> ComponentStore:
            store.add(ids, pos=pos, vel=vel)
            return store

        return run

    def store_rows(s: ComponentStore) -> tuple[np.ndarray, ...]:
        return _rows_by_id(s.ids, s["pos"], s["vel"])

    # The Python baselines start from Python ints and row tuples, made
    # untimed, as numpy arrays are the store's input.
    m = d.cap
    ids_list = d.ids_list[:m]
    pos_rows = [tuple(row) for row in pos[:m].tolist()]
    vel_rows = [tuple(row) for row in vel[:m].tolist()]

    def python() -> Callable[[], Any]:
        rows: dict[int, tuple[list[float], list[float]]] = {}

        # Mutable lists, so the rows can be updated in place by a system,
        # and a copy of the input, as the store copies it into its columns.
        def run() -> dict[int, tuple[list[float], list[float]]]:
            for x, p, v in zip(ids_list, pos_rows, vel_rows, strict=True):
                rows[x] = (list(p), list(v))
            return rows

        return run

    def dict_rows(rows: dict[int, tuple[list[float], list[float]]]) -> Any:
        keys = list(rows)
        return _rows_by_id(keys, [rows[k][0] for k in keys], [rows[k][1] for k in keys])

    cases = [
        _Case(SPARSESET, sparse, d.n, store_rows),
        _Case(
            "Python dict of rows",
            python,
            m,
            dict_rows,
            slow=True,
            scaled=d.scaled,
        ),
    ]
    esper = d.esper
    if esper is not None:

        def esper_prepare() -> Callable[[], Any]:
            esper.switch_world(_ESPER_WORLD)
            esper.clear_database()
            create = esper.create_entity

            def run() -> list[int]:
                return [
                    create(_Pos(*p), _Vel(*v))
                    for p, v in zip(pos_rows, vel_rows, strict=True)
                ]

            return run

        def esper_rows(entities: list[int]) -> Any:
            found = [esper.components_for_entity(e) for e in entities]
            return _rows_by_id(
                ids_list,
                [(p.x, p.y, p.z) for p, _ in found],
                [(v.x, v.y, v.z) for _, v in found],
            )

        cases.append(
            _Case("esper", esper_prepare, m, esper_rows, slow=True, scaled=d.scaled)
        )
    return cases


def _group_update(d: _Data) -> list[_Case]:
    n = d.n
    w, _ = d.world(d.vel_order)
    g = w.group("pos", "vel")
    pos, vel = d.pos.copy(), d.vel.copy()

    # The work is the same on every run (positions only drift), so the
    # state is built once.
    def sparse() -> World:
        g["pos"] += g["vel"] * DT
        return w

    def numpy() -> np.ndarray:
        nonlocal pos
        pos += vel * DT
        return pos

    m = d.cap
    order = d.pos_order[d.pos_order < m].tolist()
    pos_list, vel_list = d.pos[:m].tolist(), d.vel[:m].tolist()
    rows = {k: (pos_list[k], vel_list[k]) for k in order}

    def python() -> dict[int, tuple[list[float], list[float]]]:
        dt = DT
        for p, v in rows.values():
            p[0] += v[0] * dt
            p[1] += v[1] * dt
            p[2] += v[2] * dt
        return rows

    def dict_positions(r: dict[int, tuple[list[float], list[float]]]) -> np.ndarray:
        return np.array([r[k][0] for k in range(len(r))], np.float64)

    cases = [
        _Case(SPARSESET, _fixed(sparse), n, lambda w: _positions(w, n)),
        _Case("numpy arrays", _fixed(numpy), n, np.asarray),
        _Case(
            "Python dict loop",
            _fixed(python),
            m,
            dict_positions,
            slow=True,
            scaled=d.scaled,
        ),
    ]
    esper = d.esper
    if esper is not None:
        esper.switch_world(_ESPER_WORLD)
        esper.clear_database()
        objects: list[Any] = [None] * m
        for k in order:
            objects[k] = _Pos(*pos_list[k])
            esper.create_entity(objects[k], _Vel(*vel_list[k]))

        def esper_prepare() -> Callable[[], Any]:
            esper.switch_world(_ESPER_WORLD)
            # esper caches a query's result until the next change: a frame
            # with no changes since the last one finds it there.
            esper.get_components(_Pos, _Vel)

            def run() -> list[Any]:
                dt = DT
                for _, (p, v) in esper.get_components(_Pos, _Vel):
                    p.x += v.x * dt
                    p.y += v.y * dt
                    p.z += v.z * dt
                return objects

            return run

        cases.append(
            _Case(
                "esper",
                esper_prepare,
                m,
                lambda objs: np.array([(p.x, p.y, p.z) for p in objs], np.float64),
                slow=True,
                scaled=d.scaled,
            )
        )
    return cases


def _view_join(d: _Data) -> list[_Case]:
    n = d.n
    w, _ = d.world(d.vel_members)

    # A new view every run, so the join is computed every time: what a
    # frame pays after entities came and went.
    def sparse() -> World:
        v = w.view("pos", "vel")
        _integrate_rows(
            w["pos"]["pos"], w["vel"]["vel"], v.rows("pos"), v.rows("vel"), DT
        )
        return w

    # numpy's join: the stores as plain id arrays and row arrays in the
    # same row order as the world's.
    pos_ids, vel_ids = d.pos_order.copy(), d.vel_members.copy()
    pos, vel = d.pos[pos_ids], d.vel[vel_ids]

    def numpy() -> tuple[np.ndarray, np.ndarray]:
        _, pos_rows, vel_rows = np.intersect1d(
            pos_ids, vel_ids, assume_unique=True, return_indices=True
        )
        pos[pos_rows] += vel[vel_rows] * DT
        return pos_ids, pos

    def numpy_positions(result: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        ids, rows = result
        out = np.empty_like(rows)
        out[ids] = rows
        return out

    m = d.cap
    pos_list, vel_list = d.pos[:m].tolist(), d.vel[:m].tolist()
    pos_rows = {k: pos_list[k] for k in d.pos_order[d.pos_order < m].tolist()}
    vel_rows = {k: vel_list[k] for k in d.vel_members[d.vel_members < m].tolist()}

    def python() -> dict[int, list[float]]:
        dt = DT
        for k, v in vel_rows.items():
            p = pos_rows[k]
            p[0] += v[0] * dt
            p[1] += v[1] * dt
            p[2] += v[2] * dt
        return pos_rows

    return [
        _Case(SPARSESET, _fixed(sparse), d.half, lambda w: _positions(w, n)),
        _Case("numpy intersect1d", _fixed(numpy), d.half, numpy_positions),
        _Case(
            "Python dict loop",
            _fixed(python),
            len(vel_rows),
            lambda r: np.array([r[k] for k in range(len(r))], np.float64),
            slow=True,
            scaled=d.scaled,
        ),
    ]


#: The workloads in table order: name -> builder of its cases.
_WORKLOADS: dict[str, Callable[[_Data], list[_Case]]] = {
    "set add": _set_add,
    "contains": _contains,
    "discard": _discard,
    "intersection": _intersection,
    "store add": _store_add,
    "group update": _group_update,
    "view join": _view_join,
}
#: Workload names, in the order they run and are shown.
WORKLOADS = tuple(_WORKLOADS)


# -- timing ---------------------------------------------------------------------


def _time_once(case: _Case) -> float:
    call = case.prepare()
    # As timeit does: a collector pause in the middle of a Python loop
    # would be charged to whichever call happened to trigger it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        result = call()
        seconds = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    # Freed after the clock stopped: dropping a million-id set is not the
    # operation being measured.
    del result
    return seconds


def _measure(workload: str, case: _Case, repeats: int) -> Result:
    if not case.slow:
        # One untimed run at full size first: the first call of a case pays
        # for fresh pages of its temporaries (up to 20x a later call's time
        # for the group update), which a single timed run would report.
        _time_once(case)
    runs = min(repeats, SLOW_REPEATS) if case.slow else repeats
    seconds = statistics.median(_time_once(case) for _ in range(runs))
    return Result(
        workload,
        case.implementation,
        seconds / max(case.elements, 1) * 1e9,
        case.elements,
        seconds,
        case.scaled,
    )


def _warm_up(seed: int, esper: Any) -> None:
    """Run every case once at a tiny size, so numba compiles (or loads) now.

    Same dtypes and array kinds as the timed runs, so the same
    specialisations are hit.
    """
    with _esper_world(esper):
        data = _Data(_WARM_UP_N, seed, esper)
        for build in _WORKLOADS.values():
            for case in build(data):
                case.prepare()()


@contextmanager
def _esper_world(esper: Any) -> Iterator[None]:
    """Leave esper's current world as it was and drop the bench's world."""
    if esper is None:
        yield
        return
    previous = esper.current_world
    try:
        yield
    finally:
        if esper.current_world != previous:
            esper.switch_world(previous)
        if previous != _ESPER_WORLD and _ESPER_WORLD in esper.list_worlds():
            esper.delete_world(_ESPER_WORLD)


def _versions(esper: Any) -> dict[str, str | None]:
    return {
        "sparseset": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "esper": None if esper is None else str(getattr(esper, "__version__", "?")),
    }


# -- the command ----------------------------------------------------------------


def _check_arguments(n: Any, repeats: Any, plot_path: str | None) -> None:
    """Refuse a bad size, repeat count or missing matplotlib before any work."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n = {n!r}: the bench needs a positive integer size")
    if 4 * int(n) > FLAT_LIMIT:
        raise ValueError(f"n = {n}: the 4n-id space must fit the flat index (2**31)")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats = {repeats!r}: need at least one timed run")
    if plot_path is not None:
        pyplot()  # a missing matplotlib should stop us now, not after a minute


def run_bench(
    n: int,
    *,
    repeats: int = 5,
    plot_path: str | None = None,
    json_path: str | None = None,
    out: IO[str] | None = None,
    seed: int = 0,
) -> list[Result]:
    """Time every workload at size ``n``; print a table to ``out``.

    Parameters
    ----------
    n : int
        Ids per workload, drawn from a ``4 * n``-id space in random order.
        Python dict and esper loops run on at most ``PYTHON_CAP`` of them
        and are reported per element (marked ``*`` in the table).
    repeats : int, optional
        Timed runs per measurement; the median is reported. Python
        baselines run at most ``SLOW_REPEATS`` times.
    plot_path : str, optional
        Where to write a PNG bar chart (needs matplotlib; checked before
        anything is timed).
    json_path : str, optional
        Where to write ``{"n", "repeats", "seed", "threads", "versions",
        "results"}`` as JSON.
    out : text stream, optional
        Where the table goes; ``sys.stdout`` (as it is at call time) by
        default. Progress goes to stderr.
    seed : int, optional
        Seed of every random input.

    Returns
    -------
    list of Result
        One per workload and implementation, in table order. esper rows
        are present only when esper can be imported.

    Examples
    --------
    >>> import io
    >>> table = io.StringIO()
    >>> results = run_bench(2000, repeats=1, out=table)
    >>> sorted({r.workload for r in results}) == sorted(WORKLOADS)
    True
    >>> all(r.ns_per_element > 0 for r in results)
    True
    >>> "view join" in table.getvalue()
    True
    """
    _check_arguments(n, repeats, plot_path)
    n = int(n)
    out = sys.stdout if out is None else out
    esper = _esper_module()
    watch = Stopwatch()
    _warm_up(seed, esper)
    results: list[Result] = []
    with _esper_world(esper):
        data = _Data(n, seed, esper)
        for workload in progress(WORKLOADS, len(WORKLOADS), f"bench n={n:,}"):
            for case in _WORKLOADS[workload](data):
                results.append(_measure(workload, case, repeats))
    versions = _versions(esper)
    title = (
        f"sparseset {__version__} bench: n = {n:,}; numba {numba.__version__}, "
        f"numpy {np.__version__}, Python {versions['python']}, "
        f"esper {versions['esper'] or 'not installed'}; "
        f"{numba.get_num_threads()} numba threads, {os.cpu_count()} CPUs\n"
        f"n distinct ids from a {4 * n:,}-id space in random order (seed {seed}); "
        f"median of {repeats} runs, {min(repeats, SLOW_REPEATS)} for Python "
        "baselines"
    )
    meta = {
        "repeats": repeats,
        "seed": seed,
        "threads": numba.get_num_threads(),
        "versions": versions,
    }
    _report(results, title, watch, out, json_path, plot_path, n=n, **meta)
    return results


def _report(
    results: list[Result],
    title: str,
    watch: Stopwatch,
    out: IO[str],
    json_path: str | None,
    plot_path: str | None,
    *,
    n: int,
    **meta: Any,
) -> None:
    """Print the table and the time taken; write the JSON and plot if asked."""
    print(format_table(results, title=title), file=out)
    print(f"bench took {watch.seconds():.1f} s", file=out, flush=True)
    if json_path is not None:
        write_json(json_path, results, n=n, **meta)
    if plot_path is not None:
        write_plot(results, plot_path, title=f"sparseset bench, n = {n:,}")


def run_bench_processes(
    n: int,
    processes: int,
    *,
    repeats: int = 5,
    plot_path: str | None = None,
    json_path: str | None = None,
    out: IO[str] | None = None,
    seed: int = 0,
) -> list[Result]:
    """:func:`run_bench` in ``processes`` fresh processes, one after another;
    report each figure's median over them and its spread.

    Random-access workloads swing by up to 2x between processes on a shared
    machine (page placement, the other tenants): one process can make a
    table; the median of several, with the range beside it, does not.

    Parameters
    ----------
    n, repeats, plot_path, json_path, out, seed
        As for :func:`run_bench`; each process gets ``n``, ``repeats`` and
        ``seed``. The JSON holds the combined results and every process's
        figures (``"per_process"``).
    processes : int
        How many fresh processes (``python -m sparseset bench``), at least 1.

    Returns
    -------
    list of Result
        One per workload and implementation: ``ns_per_element`` and
        ``seconds`` are medians over the processes, ``low`` and ``high``
        the extremes of ``ns_per_element``.

    Examples
    --------
    >>> import io
    >>> results = run_bench_processes(500, 2, repeats=1, out=io.StringIO())
    >>> all(r.low <= r.ns_per_element <= r.high for r in results)
    True
    """
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes = {processes!r}: need at least one process")
    _check_arguments(n, repeats, plot_path)
    out = sys.stdout if out is None else out
    watch = Stopwatch()
    runs: list[list[Result]] = []
    meta: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sparseset-bench-") as tmp:
        for k in progress(range(processes), processes, f"{processes} processes"):
            path = os.path.join(tmp, f"process-{k}.json")
            command = [sys.executable, "-m", "sparseset", "bench", "--n", str(n)]
            command += ["--repeats", str(repeats), "--seed", str(seed)]
            command += ["--json", path]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(
                    f"bench process {k + 1} of {processes} failed "
                    f"(exit {done.returncode}):\n{done.stderr.strip()}"
                )
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            meta = {key: doc[key] for key in ("threads", "versions")}
            runs.append([Result(**r) for r in doc["results"]])
    results = combine_processes(runs)
    versions = meta["versions"]
    title = (
        f"sparseset {__version__} bench: n = {n:,}; median of {processes} fresh "
        f"processes (lowest-highest in brackets), each the median of {repeats} "
        f"runs; numba {versions['numba']}, numpy {versions['numpy']}, Python "
        f"{versions['python']}, esper {versions['esper'] or 'not installed'}; "
        f"{meta['threads']} numba threads, {os.cpu_count()} CPUs"
    )
    per_process = [[dataclasses.asdict(r) for r in run] for run in runs]
    _report(
        results,
        title,
        watch,
        out,
        json_path,
        plot_path,
        n=n,
        repeats=repeats,
        seed=seed,
        processes=processes,
        per_process=per_process,
        **meta,
    )
    return results


def combine_processes(runs: Sequence[Sequence[Result]]) -> list[Result]:
    """Each figure's median over several processes' results, with its range.

    Examples
    --------
    >>> runs = [[Result("contains", "sparseset", ns, 10, ns * 1e-8)]
    ...         for ns in (8.0, 12.0, 9.0)]
    >>> r, = combine_processes(runs)
    >>> r.ns_per_element, r.low, r.high
    (9.0, 8.0, 12.0)
    """
    combined = []
    for first, *others in zip(*runs, strict=True):
        same = [first, *others]
        ns = [r.ns_per_element for r in same]
        combined.append(
            dataclasses.replace(
                first,
                ns_per_element=statistics.median(ns),
                seconds=statistics.median(r.seconds for r in same),
                low=min(ns),
                high=max(ns),
            )
        )
    return combined


def _ns(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    if value < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def _figure(r: Result) -> str:
    """ns per element, with the processes' range when there is one."""
    if r.low is None or r.high is None:
        return _ns(r.ns_per_element)
    return f"{_ns(r.ns_per_element)} ({_ns(r.low)}-{_ns(r.high)})"


def _speedup(ratio: float) -> str:
    if ratio >= 10:
        return f"{ratio:,.0f}x"
    if ratio >= 1:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def format_table(results: Sequence[Result], title: str = "") -> str:
    """The results as an aligned plain-text table, one row per workload.

    Each row has sparseset's ns per element, then every baseline's ns per
    element and its speedup (baseline / sparseset). A baseline timed on a
    subset (``scaled``) is marked ``*`` and explained under the table.

    Examples
    --------
    >>> rows = [Result("contains", "sparseset", 8.0, 10, 8e-8),
    ...         Result("contains", "Python set", 240.0, 10, 2.4e-6)]
    >>> print(format_table(rows))  # doctest: +NORMALIZE_WHITESPACE
    workload  sparseset ns  baselines: ns per element (speedup = baseline / sparseset)
    contains          8.00  Python set  240  30x
    ns per element: per id (discard: per removed id; view join: per matched entity)
    """
    by_workload: dict[str, list[Result]] = {}
    for r in results:
        by_workload.setdefault(r.workload, []).append(r)
    grid: list[list[tuple[str, str]]] = [
        [
            ("workload", "<"),
            ("sparseset ns", ">"),
            ("baselines: ns per element (speedup = baseline / sparseset)", "<"),
        ]
    ]
    any_scaled = False
    for workload, rows in by_workload.items():
        mine = next((r for r in rows if r.implementation == SPARSESET), None)
        line = [(workload, "<"), (_figure(mine) if mine else "-", ">")]
        for r in rows:
            if r is mine:
                continue
            any_scaled |= r.scaled
            line.append((r.implementation + ("*" if r.scaled else ""), "<"))
            line.append((_figure(r), ">"))
            ratio = r.ns_per_element / mine.ns_per_element if mine else float("nan")
            line.append((_speedup(ratio) if mine else "", ">"))
        grid.append(line)
    lines = [title] if title else []
    lines += _align(grid)
    if any_scaled:
        lines.append(
            f"* Python loop timed on {PYTHON_CAP:,} elements (n > {PYTHON_CAP:,}) "
            "and reported per element"
        )
    lines.append(
        "ns per element: per id (discard: per removed id; "
        "view join: per matched entity)"
    )
    return "\n".join(lines)


def _align(grid: list[list[tuple[str, str]]]) -> list[str]:
    """Pad every column to its widest cell; the header's long last cell hangs."""
    body = grid[1:]
    columns = max(len(row) for row in grid)
    widths = [
        max((len(row[c][0]) for row in body if c < len(row)), default=0)
        for c in range(columns)
    ]
    for c, (text, _) in enumerate(grid[0][:-1]):
        widths[c] = max(widths[c], len(text))
    lines = []
    for row in grid:
        cells = []
        for c, (text, how) in enumerate(row):
            last = row is grid[0] and c == len(row) - 1
            cells.append(
                text
                if last
                else text.rjust(widths[c])
                if how == ">"
                else text.ljust(widths[c])
            )
        lines.append("  ".join(cells).rstrip())
    return lines


def write_json(
    path: str,
    results: Sequence[Result],
    *,
    n: int,
    **meta: Any,
) -> None:
    """Write ``{"n": n, **meta, "results": [...]}`` to ``path`` as JSON.

    Each result is an object with the fields of :class:`Result`.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bench.json")
    >>> write_json(path, [Result("contains", "sparseset", 8.0, 10, 8e-8)], n=10,
    ...            versions={"numpy": "2"})
    >>> doc = json.load(open(path))
    >>> doc["n"], doc["versions"], doc["results"][0]["ns_per_element"]
    (10, {'numpy': '2'}, 8.0)
    """
    doc = {"n": n, **meta, "results": [dataclasses.asdict(r) for r in results]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


#: Bar colours per implementation family (the first word of its name).
_COLOURS = {
    "sparseset": "tab:blue",
    "numpy": "tab:orange",
    "Python": "tab:green",
    "esper": "tab:red",
}


def write_plot(results: Sequence[Result], path: str, title: str = "") -> None:
    """Write a PNG bar chart of ns per element (log scale), grouped by workload.

    One bar per implementation, coloured by family (sparseset, numpy,
    Python, esper) and labelled with its name; hatched bars were timed on
    a subset. Needs matplotlib.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bench.png")
    >>> write_plot([Result("contains", "sparseset", 8.0, 10, 8e-8),
    ...             Result("contains", "Python set", 240.0, 10, 2.4e-6)], path)
    >>> os.path.getsize(path) > 0
    True
    """
    plt = pyplot()
    workloads = list(dict.fromkeys(r.workload for r in results))
    widest = max((sum(r.workload == w for r in results) for w in workloads), default=1)
    width = 0.8 / widest
    fig, ax = plt.subplots(figsize=(max(8.0, 1.5 * len(workloads)), 5.5))
    try:
        for i, workload in enumerate(workloads):
            rows = [r for r in results if r.workload == workload]
            for j, r in enumerate(rows):
                x = i + (j - (len(rows) - 1) / 2) * width
                family = r.implementation.split()[0]
                ax.bar(
                    x,
                    r.ns_per_element,
                    width * 0.9,
                    color=_COLOURS.get(family, "tab:gray"),
                    hatch="//" if r.scaled else None,
                    edgecolor="white" if r.scaled else None,
                )
                label = r.implementation.removeprefix("Python ").removeprefix("numpy ")
                ax.text(
                    x,
                    r.ns_per_element * 1.15,
                    label + ("*" if r.scaled else ""),
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
        ax.set_yscale("log")
        top = max((r.ns_per_element for r in results), default=1.0)
        ax.set_ylim(top=top * 25)
        ax.set_xticks(range(len(workloads)), workloads)
        ax.set_ylabel("ns per element (log scale; lower is better)")
        handles = [
            plt.Rectangle((0, 0), 1, 1, color=colour) for colour in _COLOURS.values()
        ]
        ax.legend(handles, list(_COLOURS), loc="upper left", fontsize=8, ncols=4)
        if title:
            ax.set_title(
                title
                + ("  (* timed on a subset)" if any(r.scaled for r in results) else "")
            )
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)


__all__ = [
    "WORKLOADS",
    "Result",
    "combine_processes",
    "format_table",
    "run_bench",
    "run_bench_processes",
    "write_json",
    "write_plot",
]
