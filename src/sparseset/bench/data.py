"""The bench's inputs, drawn from a seed, and the containers built from them.

:class:`WorkloadData` holds every input of the workloads in
:mod:`sparseset.bench.workloads` for one size and seed: the ids, the
queries, the members to discard, a second set's ids, the rows of a store
and the orders in which a world's entities get their components. Both
tables time these inputs: ``python -m sparseset bench`` (n from
``--n``, seed from ``--seed``, :data:`SEED` by default) and the asv suite in
``asv_bench/benchmarks`` (n = 1,000,000, seed :data:`SEED`), which also
draws its further inputs from :func:`rng` with the same seed.

Examples
--------
>>> data = WorkloadData(1000)
>>> data.space, len(data.ids), int(np.isin(data.queries, data.ids).sum())
(4000, 1000, 500)
>>> len(data.member_set() & data.other_set())
500
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..sets.sparse_set import SparseSet
from ..stores.component_store import ComponentStore
from ..world.world import World

__all__ = ["SCHEMA", "SEED", "STREAMS", "WorkloadData", "rng"]

#: The seed of every input, unless another is asked for: the bench's
#: default (``--seed``) and the asv suite's.
SEED = 0
#: The columns of the store and of the world's two components.
SCHEMA = {"pos": ("f8", 3), "vel": ("f8", 3)}
#: The random stream each input of :class:`WorkloadData` is drawn from.
#: Streams are independent, so changing how one input is drawn never
#: changes another; the asv suite draws its further inputs (its own
#: victims and query batches) from other streams of the same seed.
STREAMS = {
    "space_order": 0,
    "queries": 1,
    "victims": 2,
    "other": 3,
    "pos": 10,
    "vel": 11,
    "pos_order": 20,
    "vel_members": 21,
    "vel_order": 22,
}


def rng(seed: int, stream: int) -> np.random.Generator:
    """A fresh generator for one input: ``default_rng([seed, stream])``.

    Examples
    --------
    >>> a, b = rng(0, 1).integers(100, size=3), rng(0, 1).integers(100, size=3)
    >>> a.tolist() == b.tolist()
    True
    """
    return np.random.default_rng([seed, stream])


class WorkloadData:
    """Every workload's input for ``n`` ids and one seed, drawn on first use.

    The ids are ``n`` distinct ids of a ``4 * n``-id space in random order,
    so that at n = 1,000,000 the random reads leave the caches. Each input
    is drawn from its own stream (:data:`STREAMS`, :func:`rng`), so what an
    input holds depends on ``n`` and ``seed`` only, not on which inputs
    were drawn before it.

    Parameters
    ----------
    n : int
        Ids per workload, at least 1.
    seed : int, optional
        Seed of every input (:data:`SEED` by default), non-negative.

    Attributes
    ----------
    n, seed : int
        As given.
    half : int
        ``max(1, n // 2)``: members queried, discarded, shared, and
        entities with ``vel`` in the view join.
    space : int
        ``4 * n``: the ids lie in ``[0, space)``, the containers are
        reserved for it.

    Examples
    --------
    >>> d = WorkloadData(8, seed=3)
    >>> d.space, d.half, sorted(set(d.ids.tolist())) == sorted(d.ids.tolist())
    (32, 4, True)
    >>> int(np.isin(d.queries, d.ids).sum()), int(np.isin(d.other, d.ids).sum())
    (4, 4)
    >>> WorkloadData(8, seed=3).ids.tolist() == d.ids.tolist()
    True
    """

    def __init__(self, n: int, seed: int = SEED) -> None:
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n = {n!r}: the workloads need a positive integer size")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed = {seed!r}: need a non-negative integer seed")
        self.n = int(n)
        self.seed = int(seed)
        self.half = max(1, self.n // 2)
        self.space = 4 * self.n

    def __repr__(self) -> str:
        return f"WorkloadData(n={self.n}, seed={self.seed})"

    def _rng(self, name: str) -> np.random.Generator:
        return rng(self.seed, STREAMS[name])

    @cached_property
    def space_order(self) -> np.ndarray:
        """The whole id space in random order; its first n are :attr:`ids`.

        O(s) for the s ids of the space, drawn on first use and kept.
        """
        order: np.ndarray = self._rng("space_order").permutation(self.space)
        return order

    @cached_property
    def ids(self) -> np.ndarray:
        """The members: n distinct int64 ids in random order.

        O(n), made on first use and kept.
        """
        return np.ascontiguousarray(self.space_order[: self.n])

    @cached_property
    def queries(self) -> np.ndarray:
        """n queries, :attr:`half` of them members, shuffled together.

        O(s) for the s ids of the space (the misses are drawn from its rest),
        made on first use and kept.
        """
        g = self._rng("queries")
        hits = g.choice(self.ids, self.half, replace=False)
        misses = g.choice(self.space_order[self.n :], self.n - self.half, replace=False)
        queries: np.ndarray = g.permutation(np.concatenate([hits, misses]))
        return queries

    @cached_property
    def victims(self) -> np.ndarray:
        """A random half of the members, in random order: what discard removes.

        O(n), drawn on first use and kept.
        """
        victims: np.ndarray = self._rng("victims").choice(
            self.ids, self.half, replace=False
        )
        return victims

    @cached_property
    def other(self) -> np.ndarray:
        """A second set's n ids, the intersection's right operand.

        O(n), drawn on first use and kept.

        The last :attr:`half` of :attr:`ids` and ``n - half`` non-members,
        shuffled together.
        """
        n, half = self.n, self.half
        other: np.ndarray = self._rng("other").permutation(
            self.space_order[n - half : 2 * n - half]
        )
        return other

    @cached_property
    def pos(self) -> np.ndarray:
        """float64 ``(n, 3)`` positions, uniform in ``[-100, 100)``.

        O(n), drawn on first use and kept.

        Row k belongs to ``ids[k]`` in a store and to entity k in a world.
        """
        pos: np.ndarray = self._rng("pos").uniform(-100.0, 100.0, (self.n, 3))
        return pos

    @cached_property
    def vel(self) -> np.ndarray:
        """float64 ``(n, 3)`` velocities, standard normal, laid out as :attr:`pos`.

        O(n), drawn on first use and kept.
        """
        vel: np.ndarray = self._rng("vel").standard_normal((self.n, 3))
        return vel

    @cached_property
    def pos_order(self) -> np.ndarray:
        """The order a world's entities get ``pos``: every index, shuffled.

        O(n), drawn on first use and kept.

        Components are added in random order so that rows and handles
        disagree, as after a while of play.
        """
        order: np.ndarray = self._rng("pos_order").permutation(self.n)
        return order

    @cached_property
    def vel_order(self) -> np.ndarray:
        """The order every entity gets ``vel`` (group update): shuffled.

        O(n), drawn on first use and kept.
        """
        order: np.ndarray = self._rng("vel_order").permutation(self.n)
        return order

    @cached_property
    def vel_members(self) -> np.ndarray:
        """The entities with ``vel`` in the view join, in random order.

        O(n), drawn on first use and kept.

        A random :attr:`half` of the entity indexes ``0 .. n - 1``.
        """
        members: np.ndarray = self._rng("vel_members").choice(
            self.n, self.half, replace=False
        )
        return members

    @cached_property
    def ids_list(self) -> list[int]:
        """:attr:`ids` as Python ints, for the Python baselines.

        O(n), made on first use and kept.
        """
        ids: list[int] = self.ids.tolist()
        return ids

    @cached_property
    def pyset(self) -> set[int]:
        """:attr:`ids` as a builtin set (shared: copy it to change it).

        O(n), made on first use and kept.
        """
        return set(self.ids_list)

    # -- the containers the workloads run on -----------------------------------

    def member_set(self) -> SparseSet:
        """A new set holding :attr:`ids`, reserved for the id space.

        Notes
        -----
        O(s + n) for the s ids of the space (the flat index reserved for it)
        and the n members.

        Examples
        --------
        >>> d = WorkloadData(10)
        >>> s = d.member_set(); len(s), s.capacity >= d.space
        (10, True)
        """
        return SparseSet.from_ids(self.ids, capacity=self.space)

    def other_set(self) -> SparseSet:
        """A new set holding :attr:`other`, reserved for the id space.

        Notes
        -----
        O(s + n) for the s ids of the space (the flat index reserved for it)
        and the n members.

        Examples
        --------
        >>> d = WorkloadData(10)
        >>> len(d.member_set() & d.other_set()) == d.half
        True
        """
        return SparseSet.from_ids(self.other, capacity=self.space)

    def store(self, count: int | None = None) -> ComponentStore:
        """A new :data:`SCHEMA` store holding the first ``count`` ids and rows.

        Reserved for the id space; ``count`` is every id by default. Row k
        holds ``pos[k]`` and ``vel[k]`` of ``ids[k]``.

        Raises
        ------
        TypeError
            If ``count`` is not an integer.
        ValueError
            If ``count`` is negative or more than the data's n ids.

        Notes
        -----
        O(s + count) for the s ids of the space (the flat index reserved for
        it) and the rows added.

        Examples
        --------
        >>> d = WorkloadData(10)
        >>> store = d.store(4)
        >>> store.ids.tolist() == d.ids[:4].tolist()
        True
        >>> bool((store["vel"] == d.vel[:4]).all())
        True
        >>> d.store(11)
        Traceback (most recent call last):
        ...
        ValueError: count = 11: the data holds 10 ids
        """
        count = self.n if count is None else count
        if isinstance(count, bool) or not isinstance(count, int | np.integer):
            raise TypeError(f"count = {count!r}: need an integer")
        if not 0 <= count <= self.n:
            raise ValueError(f"count = {count}: the data holds {self.n} ids")
        store = ComponentStore(SCHEMA, capacity=self.space)
        store.add(self.ids[:count], pos=self.pos[:count], vel=self.vel[:count])
        return store

    def world(self, vel_entities: np.ndarray) -> World:
        """A fresh world of n entities: ``pos`` on all, ``vel`` on ``vel_entities``.

        Entity k (handle k in a fresh world) has ``pos[k]`` and ``vel[k]``;
        ``pos`` is added in :attr:`pos_order`, ``vel`` in the order of
        ``vel_entities`` (:attr:`vel_order` or :attr:`vel_members`).

        Notes
        -----
        O(n) for the n entities and their rows.

        Examples
        --------
        >>> d = WorkloadData(10)
        >>> w = d.world(d.vel_members)
        >>> len(w["pos"]), len(w["vel"]), len(w.view("pos", "vel")) == d.half
        (10, 5, True)
        """
        w = World(capacity=self.n)
        w.register("pos", "f8", shape=(3,))
        w.register("vel", "f8", shape=(3,))
        e = w.create(self.n)
        w.add("pos", e[self.pos_order], pos=self.pos[self.pos_order])
        w.add("vel", e[vel_entities], vel=self.vel[vel_entities])
        return w
