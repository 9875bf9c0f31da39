"""The bench's workloads: what each times, and the baselines beside it.

One definition for two tables. ``python -m sparseset bench`` times the
:func:`cases` of every workload in :data:`WORKLOADS` on the inputs of
:class:`~sparseset.bench.data.WorkloadData`; the asv suite
(``asv_bench/benchmarks``: ``sparse_set.py``, ``store.py``, ``world.py``,
``parallel.py``) builds its data from the same class with the same seed,
and uses this module's system (:func:`integrate_rows`), esper components
and constants, so both time the same ids, queries, rows and worlds.

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

Each workload's first case is sparseset; the others are what a Python
programmer would otherwise write: builtin sets and dicts, numpy, and esper
when it is installed. Every case returns what it made or changed, and its
``canonical`` turns that into arrays comparable across cases, so the tests
can check that all of a workload's cases do the same work.

Examples
--------
>>> data = WorkloadData(100)
>>> [case.implementation for case in cases("contains", data)]
['sparseset', 'numpy isin', 'Python set']
>>> run = cases("contains", data)[0].prepare()
>>> int(run().sum()) == data.half
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from .. import config
from ..sets.sparse_set import SparseSet
from ..stores.component_store import ComponentStore
from ..world.world import World
from .data import WorkloadData

__all__ = [
    "DT",
    "ESPER_WORLD",
    "PYTHON_CAP",
    "SPARSESET",
    "WORKLOADS",
    "Case",
    "EsperPos",
    "EsperVel",
    "cases",
    "integrate_rows",
]

#: Python loops over dicts and esper run on at most this many elements and
#: are reported per element (:data:`sparseset.config.BENCH_PYTHON_CAP`).
PYTHON_CAP = config.BENCH_PYTHON_CAP
#: Seconds per step of the ``pos += vel * dt`` systems.
DT = 1.0 / 60.0
#: The implementation every baseline is compared with.
SPARSESET = "sparseset"
#: The esper world the baselines use (the bench deletes it when done).
ESPER_WORLD = "sparseset-bench"


# -- numba systems ------------------------------------------------------------


@njit(cache=True)
def integrate_rows(
    pos: np.ndarray,
    vel: np.ndarray,
    pos_rows: np.ndarray,
    vel_rows: np.ndarray,
    dt: float,
) -> None:
    """A user's cached system over a view: ``pos += vel * dt`` for the matches.

    Takes the two whole ``(rows, 3)`` column arrays and the view's row
    arrays, and indexes with them as a user would (signed int64 rows, no
    tricks): ``pos[pos_rows[k]] += vel[vel_rows[k]] * dt``.

    Examples
    --------
    >>> pos, vel = np.zeros((2, 3)), np.ones((3, 3))
    >>> integrate_rows(pos, vel, np.array([1]), np.array([2]), 0.5)
    >>> pos.tolist()
    [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]
    """
    for k in range(pos_rows.shape[0]):
        p = pos_rows[k]
        q = vel_rows[k]
        for j in range(3):
            pos[p, j] += vel[q, j] * dt


# -- esper components: slotted, like a careful esper user's -------------------


@dataclass(slots=True)
class EsperPos:
    """esper's ``pos`` component: one slotted object per entity.

    Examples
    --------
    >>> EsperPos(1.0, 2.0, 3.0).y
    2.0
    """

    x: float
    y: float
    z: float


@dataclass(slots=True)
class EsperVel:
    """esper's ``vel`` component: one slotted object per entity.

    Examples
    --------
    >>> EsperVel(1.0, 2.0, 3.0).z
    3.0
    """

    x: float
    y: float
    z: float


# -- cases --------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One implementation of a workload.

    Attributes
    ----------
    implementation : str
        :data:`SPARSESET` or a baseline's name; its first word is the family
        (sparseset, numpy, Python, esper).
    prepare : callable
        Does the untimed setup of one run and returns the call to time.
        The call returns what it made or changed.
    elements : int
        Elements one call works on (ids, rows, matched entities).
    canonical : callable
        Turns the call's return value into arrays comparable across the
        cases of the workload.
    slow : bool
        A Python baseline: timed fewer times.
    scaled : bool
        Runs on the first :data:`PYTHON_CAP` elements only, not all n.

    Examples
    --------
    >>> case = cases("set add", WorkloadData(5))[0]
    >>> case.implementation, case.elements
    ('sparseset', 5)
    >>> case.canonical(case.prepare()()).tolist() == sorted(WorkloadData(5).ids)
    True
    """

    implementation: str
    prepare: Callable[[], Callable[[], Any]]
    elements: int
    canonical: Callable[[Any], Any]
    slow: bool = False
    scaled: bool = False


def cases(workload: str, data: WorkloadData, esper: Any = None) -> list[Case]:
    """The implementations of ``workload`` on ``data``, sparseset's first.

    Builds the containers the cases run on (untimed); each case's
    ``prepare()`` then sets up one run.

    Parameters
    ----------
    workload : str
        One of :data:`WORKLOADS`.
    data : WorkloadData
        The inputs.
    esper : module, optional
        The imported esper module, to add its cases (store add, group
        update); its world :data:`ESPER_WORLD` is filled here. Without it,
        no esper cases.

    Raises
    ------
    ValueError
        If ``workload`` is not one of :data:`WORKLOADS`.

    Notes
    -----
    O(n) for the data's n ids: it builds the containers the cases run on
    (and draws the inputs they need on first use); nothing runs.

    Examples
    --------
    >>> [c.implementation for c in cases("discard", WorkloadData(10))]
    ['sparseset', 'Python set.difference_update']
    >>> cases("sort", WorkloadData(10))
    Traceback (most recent call last):
    ...
    ValueError: workload 'sort' is not one of ('set add', ...)
    """
    build = _WORKLOADS.get(workload)
    if build is None:
        raise ValueError(f"workload {workload!r} is not one of {WORKLOADS}")
    return build(data, esper)


def _python_count(d: WorkloadData) -> int:
    """How many elements a Python dict or esper loop runs on."""
    return min(d.n, PYTHON_CAP)


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


# -- workloads ----------------------------------------------------------------


def _set_add(d: WorkloadData, esper: Any) -> list[Case]:
    ids, ids_list = d.ids, d.ids_list
    # Filled once and cleared before each run: clear() only resets the
    # size, so the add does all its work, but the timed call no longer
    # pays first-touch page faults on the reserved 4n index, whose cost
    # depends on the allocator and huge pages, not on the library.
    s = d.member_set()

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
        Case(SPARSESET, sparse, d.n, _sorted_ids),
        Case("Python set.update", python, d.n, _sorted_ids, slow=True),
    ]


def _contains(d: WorkloadData, esper: Any) -> list[Case]:
    q = d.queries
    q_list = q.tolist()
    s = d.member_set()
    ids, pyset = d.ids, d.pyset

    def python() -> list[bool]:
        return [x in pyset for x in q_list]

    return [
        Case(SPARSESET, _fixed(lambda: s.contains(q)), d.n, np.asarray),
        Case("numpy isin", _fixed(lambda: np.isin(q, ids)), d.n, np.asarray),
        Case("Python set", _fixed(python), d.n, np.asarray, slow=True),
    ]


def _discard(d: WorkloadData, esper: Any) -> list[Case]:
    victims, victims_list = d.victims, d.victims.tolist()
    base, pybase = d.member_set(), d.pyset

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
        Case(SPARSESET, sparse, d.half, _sorted_ids),
        Case("Python set.difference_update", python, d.half, _sorted_ids, slow=True),
    ]


def _intersection(d: WorkloadData, esper: Any) -> list[Case]:
    a, b = d.member_set(), d.other_set()
    a_ids, b_ids = d.ids, d.other
    set_a, set_b = d.pyset, set(d.other.tolist())
    return [
        Case(SPARSESET, _fixed(lambda: a & b), d.n, _sorted_ids),
        Case(
            "numpy intersect1d",
            _fixed(lambda: np.intersect1d(a_ids, b_ids, assume_unique=True)),
            d.n,
            _sorted_ids,
        ),
        Case(
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


def _store_add(d: WorkloadData, esper: Any) -> list[Case]:
    ids, pos, vel = d.ids, d.pos, d.vel
    # Filled and cleared once, as in set add: no first-touch page faults.
    store = d.store()

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
    m = _python_count(d)
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
        Case(SPARSESET, sparse, d.n, store_rows),
        Case(
            "Python dict of rows",
            python,
            m,
            dict_rows,
            slow=True,
            scaled=d.n > m,
        ),
    ]
    if esper is not None:

        def esper_prepare() -> Callable[[], Any]:
            esper.switch_world(ESPER_WORLD)
            esper.clear_database()
            create = esper.create_entity

            def run() -> list[int]:
                return [
                    create(EsperPos(*p), EsperVel(*v))
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
            Case("esper", esper_prepare, m, esper_rows, slow=True, scaled=d.n > m)
        )
    return cases


def _group_update(d: WorkloadData, esper: Any) -> list[Case]:
    n = d.n
    w = d.world(d.vel_order)
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

    m = _python_count(d)
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
        Case(SPARSESET, _fixed(sparse), n, lambda w: _positions(w, n)),
        Case("numpy arrays", _fixed(numpy), n, np.asarray),
        Case(
            "Python dict loop",
            _fixed(python),
            m,
            dict_positions,
            slow=True,
            scaled=d.n > m,
        ),
    ]
    if esper is not None:
        esper.switch_world(ESPER_WORLD)
        esper.clear_database()
        objects: list[Any] = [None] * m
        for k in order:
            objects[k] = EsperPos(*pos_list[k])
            esper.create_entity(objects[k], EsperVel(*vel_list[k]))

        def esper_prepare() -> Callable[[], Any]:
            esper.switch_world(ESPER_WORLD)
            # esper caches a query's result until the next change: a frame
            # with no changes since the last one finds it there.
            esper.get_components(EsperPos, EsperVel)

            def run() -> list[Any]:
                dt = DT
                for _, (p, v) in esper.get_components(EsperPos, EsperVel):
                    p.x += v.x * dt
                    p.y += v.y * dt
                    p.z += v.z * dt
                return objects

            return run

        cases.append(
            Case(
                "esper",
                esper_prepare,
                m,
                lambda objs: np.array([(p.x, p.y, p.z) for p in objs], np.float64),
                slow=True,
                scaled=d.n > m,
            )
        )
    return cases


def _view_join(d: WorkloadData, esper: Any) -> list[Case]:
    n = d.n
    w = d.world(d.vel_members)

    # A new view every run, so the join is computed every time: what a
    # frame pays after entities came and went.
    def sparse() -> World:
        v = w.view("pos", "vel")
        integrate_rows(
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

    m = _python_count(d)
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
        Case(SPARSESET, _fixed(sparse), d.half, lambda w: _positions(w, n)),
        Case("numpy intersect1d", _fixed(numpy), d.half, numpy_positions),
        Case(
            "Python dict loop",
            _fixed(python),
            len(vel_rows),
            lambda r: np.array([r[k] for k in range(len(r))], np.float64),
            slow=True,
            scaled=d.n > m,
        ),
    ]


#: The workloads in table order: name -> builder of its cases.
_WORKLOADS: dict[str, Callable[[WorkloadData, Any], list[Case]]] = {
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
