"""ShardedSet: a set of ids split over the shards of a dask cluster.

Each shard is a :class:`~sparseset.SparseSet` living in a worker's memory
as the result of one dask task; a :class:`ShardedSet` is the dask
collection of those tasks, lazy until computed or persisted, like a dask
array. Every operation adds tasks that run next to the shards: a batch of
ids is split by shard where it lies (one compiled counting pass, see
:mod:`sparseset.kernels.partition`), each shard answers its own run, and
the answers are merged back in the batch's order. Shards never travel to
the client; ``compute()`` is the one explicit exception.
"""

from __future__ import annotations

import os
from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize

from .. import config
from ..sets.index_kinds import IndexKind, kind_or_auto
from ..sets.sparse_set import SparseSet
from . import shards as tasks
from .collection import ShardedCollection, route
from .files import Manifest, save_shards
from .inputs import Ids, as_dask_ids, graph_of
from .layout import Layout, check_shards

#: The per-shard operations, by the names of their tasks.
_COMBINE = {
    "union": tasks.union,
    "intersection": tasks.intersection,
    "difference": tasks.difference,
    "symmetric difference": tasks.symmetric_difference,
}
#: The per-shard comparisons, answering one bool per shard.
_COMPARE = {
    "equality": tasks.equal,
    "subset test": tasks.subset,
    "disjointness test": tasks.disjoint,
}


def default_shards() -> int:
    """Shards when none are asked for:
    :data:`sparseset.config.DISTRIBUTED_SHARDS` if set, else the worker
    threads of the current dask client, else this machine's cores.

    Examples
    --------
    >>> default_shards() >= 1
    True
    """
    if config.DISTRIBUTED_SHARDS:
        return config.DISTRIBUTED_SHARDS
    try:
        from distributed import default_client

        threads: int = sum(default_client().nthreads().values())
        return max(1, threads)
    except (ImportError, ValueError):
        return os.cpu_count() or 1


class ShardedSet(ShardedCollection):
    """A set of non-negative integer ids held in shards on a dask cluster.

    One :class:`~sparseset.SparseSet` per shard, each in one worker's
    memory. Built from a dask array, a dask Series (a dataframe column), a
    numpy array or any ids ``SparseSet`` takes, or from Parquet with
    :meth:`read_parquet`. Lazy, like any dask collection: :meth:`persist`
    builds the shards and keeps them in the cluster's memory; queries
    answer lazy dask arrays. ``add``, ``discard`` and the set algebra
    return new sets (the old one stays valid).

    Parameters
    ----------
    ids : array-like, dask array or dask Series, optional
        The members. In-memory ids are checked here, with the errors
        ``SparseSet.add`` raises; a dask input is checked as its blocks
        are split.
    shards : int, optional
        How many shards: by default
        :data:`sparseset.config.DISTRIBUTED_SHARDS`, or where that is 0 (its
        default) the worker threads of the current dask client (one per
        core of this machine without one).
    by : {"hash", "range"}, optional
        ``"hash"`` (the default) spreads any ids evenly; ``"range"`` gives
        each shard a contiguous block of ``[0, space)``, dense enough for
        a flat or paged index.
    index : {"auto", "hash", "flat", "paged"}, optional
        Each shard's index kind (see :class:`~sparseset.SparseSet`): by
        default ``"auto"``, an index that adapts to the ids each shard
        holds (and takes any id in ``[0, 2**63)``, as ``"hash"`` does).
    layout : Layout, optional
        Another set's ``layout``, to combine with it shard by shard
        (instead of ``shards``, ``by`` and ``space``).
    space : int, optional
        For ``by="range"``: ids are expected in ``[0, space)``. By default
        the largest id plus one, found by one pass over ``ids``.

    Examples
    --------
    >>> import numpy as np
    >>> s = ShardedSet(np.array([5, 1, 9, 5]), shards=2).persist()
    >>> len(s), s.contains([9, 2]).compute().tolist()
    (3, [True, False])
    >>> t = s.add([2]); sorted(t.ids().compute().tolist()), len(s)
    ([1, 2, 5, 9], 3)
    """

    __slots__ = ()

    def __init__(
        self,
        ids: Any = (),
        shards: int | None = None,
        by: str | None = None,
        index: str = "auto",
        *,
        layout: Layout | None = None,
        space: int | None = None,
    ) -> None:
        kind = kind_or_auto(index)
        check_layout_options(shards, by, layout, space)
        source = as_dask_ids(ids, add_to=kind)
        layout = choose_layout(source, shards, by, layout, space)
        token = tokenize("sparseset-build", source.array.name, layout, kind.name)
        name = f"sparseset-shards-{token}"
        layer, _, runs, blocks = route(source, layout, kind, kind.limit, token)
        for k in range(layout.shards):
            capacity = shard_capacity(kind, layout)
            layer[(name, k)] = (
                tasks.build,
                kind.name,
                capacity,
                [(runs, c, k) for c in range(blocks)],
            )
        graph = graph_of(name, layer, [source.array])
        self._setup(graph, name, layout, kind)

    @classmethod
    def _from_graph(
        cls, graph: Any, name: str, layout: Layout, kind: IndexKind
    ) -> ShardedSet:
        out = cls._over(graph, name, layout, kind)
        return out

    def _like(self, graph: Any, name: str) -> ShardedSet:
        return ShardedSet._from_graph(graph, name, self.layout, self._kind)

    @classmethod
    def from_ids(cls, ids: Any, **options: Any) -> ShardedSet:
        """``ShardedSet(ids, **options)``, named as ``SparseSet.from_ids`` is.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range (in-memory
            ids here; a dask input when computed).

        Notes
        -----
        Lazy, as the constructor: O(k) work for k ids when persisted.

        Examples
        --------
        >>> len(ShardedSet.from_ids([3, 3, 4], shards=2))
        2
        """
        return cls(ids, **options)

    @classmethod
    def read_parquet(cls, path: Any, column: str, **options: Any) -> ShardedSet:
        """A set of the ids in one integer column of a Parquet dataset.

        ``path`` is anything ``dask.dataframe.read_parquet`` reads (a file,
        a directory, a glob, a remote URL); its row groups are read by the
        workers, split by shard where they are read. ``options`` are
        ``shards``, ``by``, ``index``, ``layout`` and ``space`` as for
        :class:`ShardedSet`.

        Raises
        ------
        TypeError
            If ``column`` is not a column name.
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        Lazy: O(k) work for k ids when persisted, one task per file part and shard.

        Examples
        --------
        >>> import pathlib, tempfile, pandas as pd
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "events.parquet"
        >>> pd.DataFrame({"user": [7, 3, 7]}).to_parquet(path)
        >>> s = ShardedSet.read_parquet(path, column="user")
        >>> sorted(s.ids().compute().tolist())
        [3, 7]
        """
        import dask.dataframe as dd

        if not isinstance(column, str):
            raise TypeError(f"column must be a column name, not {column!r}")
        frame = dd.read_parquet(path, columns=[column])
        return cls(frame[column], **options)

    # -- the dask collection protocol (the rest is ShardedCollection's) ----

    def __dask_postcompute__(self) -> Any:
        return tasks.whole, (self.layout, self._kind.name)

    def __repr__(self) -> str:
        return (
            f"ShardedSet(shards={self.layout.shards}, by={self.layout.by!r}, "
            f"index={self.kind!r}, name={self._name!r})"
        )

    # -- queries -------------------------------------------------------------

    def contains(self, ids: Any) -> da.Array:
        """Membership of each id, as a lazy bool dask array in the ids'
        order and blocks (0-d for one id).

        Non-negative ids past the index's range are absent; negative ids
        raise ``ValueError`` (here for in-memory ids, when computed for a
        dask array). A dask Series answers an array with a block per
        partition.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, one split pass per block and one task
        per block and shard, with no shuffle.

        Examples
        --------
        >>> s = ShardedSet([2, 4], shards=2)
        >>> s.contains([4, 3, 2**62]).compute().tolist(), bool(s.contains(2).compute())
        ([True, False, False], True)
        """
        source = as_dask_ids(ids)
        return self._lookup(source, "contains", tasks.contains_run, np.bool_)

    def index(self, ids: Any) -> da.Array:
        """Position of each id among the members of :meth:`ids`, -1 where
        absent: ``s.ids()[s.index(x)] == x`` for members. Lazy int64.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, one split pass per block and one task
        per block and shard, with no shuffle.

        Examples
        --------
        >>> s = ShardedSet([9, 2, 4], shards=2, by="range")
        >>> s.index([4, 9, 3]).compute().tolist()
        [1, 2, -1]
        """
        source = as_dask_ids(ids)
        return self._lookup(source, "index", tasks.index_run, np.int64)

    # -- new sets ------------------------------------------------------------

    def add(self, ids: Any) -> ShardedSet:
        """A new set with ``ids`` added (this one stays as it is).

        Ids outside the index's range or negative raise ``ValueError``
        (here for in-memory ids, when computed for a dask array).

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range (in-memory
            ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, one split pass per block and one task
        per block and shard, with no shuffle.

        Examples
        --------
        >>> s = ShardedSet([1], shards=2); t = s.add([5, 1])
        >>> len(s), len(t)
        (1, 2)
        """
        return self._update(as_dask_ids(ids, add_to=self._kind), tasks.add_runs, "add")

    def discard(self, ids: Any) -> ShardedSet:
        """A new set without ``ids`` (absent ones are ignored).

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, one split pass per block and one task
        per block and shard, with no shuffle.

        Examples
        --------
        >>> t = ShardedSet([1, 2, 3], shards=2).discard([2, 7])
        >>> sorted(t.ids().compute().tolist())
        [1, 3]
        """
        return self._update(as_dask_ids(ids), tasks.discard_runs, "discard")

    def remove(self, ids: Any) -> ShardedSet:
        """A new set without ``ids``, which must all be members.

        Lazy, as :meth:`discard` is: when the new set is computed or
        persisted, an absent id raises ``KeyError`` naming it, and nothing
        is built (this set stays as it is, as always). Repeated ids count
        once. Negative ids raise ``ValueError`` (here for in-memory ids).

        Raises
        ------
        KeyError
            When computed or persisted, if an id is not a member.
        ValueError
            If an id is negative (now for in-memory ids, when computed for
            dask ones).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, one split pass per block and
        one task per shard, as :meth:`discard`.

        Examples
        --------
        >>> s = ShardedSet([1, 2, 3], shards=2)
        >>> sorted(s.remove([2, 2]).ids().compute().tolist())
        [1, 3]
        >>> len(s.remove([2, 7]))
        Traceback (most recent call last):
        ...
        KeyError: '7 is not a member of the set; remove removed nothing'
        """
        return self._update(as_dask_ids(ids), tasks.remove_runs, "remove")

    def _update(self, source: Ids, function: Any, what: str) -> ShardedSet:
        limit = self._kind.limit if what == "add" else 0
        token = tokenize(self._name, source.array.name, what)
        name = f"sparseset-shards-{token}"
        layer, _, runs, blocks = route(source, self.layout, self._kind, limit, token)
        for k in range(self.shards):
            # remove names an absent id by its global value: it takes the
            # shard's first id.
            start = (self.layout.start(k),) if what == "remove" else ()
            layer[(name, k)] = (
                function,
                (self._name, k),
                [(runs, c, k) for c in range(blocks)],
                *start,
            )
        graph = graph_of(name, layer, [source.array, self])
        return ShardedSet._from_graph(graph, name, self.layout, self._kind)

    def union(self, other: Any) -> ShardedSet:
        """Members of either set, shard by shard (no shuffle).

        ``other`` is a :class:`ShardedSet` of the same layout, or ids (built
        into one with this set's layout). The result takes this set's
        index kind.

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range (in-memory
            ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(n + m) work for the two sets' members, shard by shard, with no shuffle.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2); b = ShardedSet([2, 3], layout=a.layout)
        >>> sorted(a.union(b).ids().compute().tolist())
        [1, 2, 3]
        """
        return self._combine(other, "union")

    def intersection(self, other: Any) -> ShardedSet:
        """Members of both sets, shard by shard (no shuffle).

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(n + m) work for the two sets' members, shard by shard, with no shuffle.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> a.intersection([2, 3]).ids().compute().tolist()
        [2]
        """
        return self._combine(other, "intersection")

    def difference(self, other: Any) -> ShardedSet:
        """Members of this set that are not in ``other``, shard by shard.

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(n + m) work for the two sets' members, shard by shard, with no shuffle.

        Examples
        --------
        >>> ShardedSet([1, 2], shards=2).difference([2]).ids().compute().tolist()
        [1]
        """
        return self._combine(other, "difference")

    def symmetric_difference(self, other: Any) -> ShardedSet:
        """Members of exactly one of the sets, shard by shard (no shuffle).

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range (in-memory
            ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(n + m) work for the two sets' members, shard by shard, with no shuffle.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> sorted(a.symmetric_difference([2, 3]).ids().compute().tolist())
        [1, 3]
        """
        return self._combine(other, "symmetric difference")

    __or__ = union
    __and__ = intersection
    __sub__ = difference
    __xor__ = symmetric_difference

    def _combine(self, other: Any, what: str) -> ShardedSet:
        other = self._operand(other, what)
        token = tokenize(self._name, other.name, what)
        name = f"sparseset-shards-{token}"
        function = _COMBINE[what]
        layer = {
            (name, k): (function, (self._name, k), (other.name, k))
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self, other])
        return ShardedSet._from_graph(graph, name, self.layout, self._kind)

    def _operand(self, other: Any, what: str) -> ShardedSet:
        """``other`` as a set of this set's layout: a :class:`ShardedSet`
        of the same layout, or ids built into one."""
        if isinstance(other, ShardedSet):
            self._same_layout(other, what)
            return other
        return ShardedSet(other, index=self.kind, layout=self.layout)

    # -- comparisons (computed now: they answer a bool) -----------------------

    def _compare(self, other: ShardedSet, what: str) -> bool:
        """The per-shard answers of ``what`` on both sets, all True."""
        token = tokenize(self._name, other.name, what)
        name = f"sparseset-{what.replace(' ', '-')}-{token}"
        function = _COMPARE[what]
        layer = {
            (name, k): (function, (self._name, k), (other.name, k))
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self, other])
        answers = da.Array(graph, name, ((1,) * self.shards,), np.bool_)
        return bool(answers.all().compute())

    def __eq__(self, other: object) -> bool:
        """Whether both hold the same members, compared shard by shard (computed now).

        ``other`` is a :class:`ShardedSet` of the same layout (another
        layout raises ``ValueError``), a :class:`~sparseset.SparseSet`, a
        ``set`` or any ids; as for ``set``, a collection holding something
        that cannot be an id is simply not equal.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> a == ShardedSet([2, 1, 2], layout=a.layout), a == {1, 2}, a == {1, "x"}
        (True, True, False)
        """
        if not isinstance(other, ShardedSet):
            if not isinstance(other, SparseSet | set | frozenset):
                return NotImplemented
            try:
                ids = np.asarray(other) if isinstance(other, SparseSet) else list(other)
                other = ShardedSet(ids, index="hash", layout=self.layout)
            except (TypeError, ValueError):
                return False  # it holds something no set of ids holds
        return self._compare(self._operand(other, "equality"), "equality")

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def issubset(self, other: Any) -> bool:
        """Whether every member is in ``other`` (computed now, shard by shard).

        ``other`` is a :class:`ShardedSet` of the same layout, or ids.

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).

        Notes
        -----
        Computes now: O(n + m) work for the two sets' members, shard by shard.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> a.issubset([1, 2, 3]), a <= ShardedSet([1], layout=a.layout)
        (True, False)
        """
        return self._compare(self._operand(other, "subset test"), "subset test")

    def issuperset(self, other: Any) -> bool:
        """Whether every member of ``other`` is in this set (computed now).

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).

        Notes
        -----
        Computes now: O(n + m) work for the two sets' members, shard by shard.

        Examples
        --------
        >>> ShardedSet([1, 2], shards=2).issuperset([2])
        True
        """
        return self._operand(other, "subset test").issubset(self)

    def __le__(self, other: Any) -> bool:
        if not isinstance(other, ShardedSet):
            return NotImplemented
        return self.issubset(other)

    def __ge__(self, other: Any) -> bool:
        if not isinstance(other, ShardedSet):
            return NotImplemented
        return self.issuperset(other)

    def isdisjoint(self, other: Any) -> bool:
        """Whether no member is in ``other`` (computed now, shard by shard).

        Raises
        ------
        ValueError
            If ``other`` is a ShardedSet of another layout (build it with
            ``layout=self.layout``).

        Notes
        -----
        Computes now: O(n + m) work for the two sets' members, shard by shard.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> a.isdisjoint([3, 4]), a.isdisjoint([2])
        (True, False)
        """
        other = self._operand(other, "disjointness test")
        return self._compare(other, "disjointness test")

    # -- files ---------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the set to the directory ``path``: one file per shard, each
        written by the worker holding the shard, and a manifest.

        Every file is written atomically. The manifest is written last and
        names this save's shard files, so a reader sees the previous save
        or this one whole; shard files of earlier saves are removed after
        it. ``path`` must be reachable from every worker (a shared or
        network file system) and is created if missing.

        Raises
        ------
        OSError
            If a worker cannot write its shard file or the manifest cannot be written.

        Notes
        -----
        Computes now: O(n) for n members, each shard written by its worker.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp()
        >>> ShardedSet([4, 8], shards=2).save(path)
        >>> sorted(ShardedSet.load(path).ids().compute().tolist())
        [4, 8]
        """
        save_shards(self, path, tasks.MANIFEST_FORMAT, tasks.save_shard)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ShardedSet:
        """Read a set written by :meth:`save`, its shards by the workers.

        The manifest is read and checked here; each shard file is read,
        checked (its ids distinct, in range and in the right shard, as many
        as the manifest says) and kept in memory by a worker before this
        returns. A missing file raises ``FileNotFoundError``, anything
        wrong with one :class:`~sparseset.FormatError`. A shard lost with
        a worker is read again.

        Raises
        ------
        FormatError
            If ``path`` holds no valid manifest, or a shard's file is not the
            one it lists.
        OSError
            If a file cannot be read.

        Notes
        -----
        O(n) for n members, read and checked by the workers, now.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp(); ShardedSet([1, 2], shards=2).save(path)
        >>> len(ShardedSet.load(path))
        2
        """
        manifest = Manifest(path, tasks.MANIFEST_FORMAT)
        name = f"sparseset-shards-{manifest.name}"
        graph = graph_of(name, manifest.layer(name, tasks.load_shard), ())
        loaded = cls._from_graph(graph, name, manifest.layout, manifest.kind).persist()
        # Read and checked now, so that a bad file raises here.
        loaded.shard_lengths()
        return loaded


def check_layout_options(
    shards: int | None, by: str | None, layout: Layout | None, space: int | None
) -> None:
    """Raise for layout options that contradict each other, before any
    input is read: ``layout=`` with ``shards``, ``by`` or ``space``, or a
    ``by`` that is no layout."""
    if layout is not None:
        if not isinstance(layout, Layout):
            raise TypeError(f"layout must be a Layout, not {layout!r}")
        if shards is not None or by is not None or space is not None:
            raise ValueError(
                "give either layout= or shards=/by=/space=, not both "
                f"(layout = {layout})"
            )
    elif by is not None and by not in ("hash", "range"):
        raise ValueError(f"by = {by!r} is not a layout; choose 'hash' or 'range'")


def choose_layout(
    source: Ids | None,
    shards: int | None,
    by: str | None,
    layout: Layout | None,
    space: int | None,
) -> Layout:
    """The layout the options ask for (checked by
    :func:`check_layout_options`): ``layout`` itself, else ``shards``
    (default :func:`default_shards`) by hash or by range over ``space``
    (default: the ids of ``source``, their largest plus one)."""
    if layout is not None:
        return layout
    count = default_shards() if shards is None else check_shards(shards)
    if by == "range":
        if space is None:
            if source is None:
                raise ValueError(
                    "by='range' needs space= when there are no ids to measure"
                )
            space = id_space(source)
        return Layout.range(count, space)
    if space is not None:
        raise ValueError("space= is for by='range' (a hash layout has none)")
    return Layout.hash(count)


def id_space(source: Ids) -> int:
    """The largest id plus one (0 for no ids): a range layout's space.

    For a dask input, one pass over it, computed now.
    """
    if source.values is not None:
        return int(source.values.max()) + 1 if source.values.size else 0
    array: Any = source.array
    ends = array.map_blocks(_end, chunks=(1,), dtype=np.uint64)
    return int(ends.max().compute()) if ends.shape[0] else 0


def _end(block: np.ndarray) -> np.ndarray:
    """A block's largest id plus one (0 if none or negative; at most
    2**64 - 1), as a one-element array."""
    end = int(block.max()) + 1 if block.size else 0
    return np.array([min(max(end, 0), 2**64 - 1)], np.uint64)


def shard_capacity(kind: IndexKind, layout: Layout) -> int | None:
    """A new shard's capacity: a range shard's block for the flat index,
    else left to the runs it is built from (None)."""
    if kind.counts_ids:
        return min(layout.width, kind.max_capacity) if layout.by == "range" else 0
    return None
