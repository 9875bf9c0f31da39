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

import glob
import os
import uuid
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.base import DaskMethodsMixin, tokenize
from dask.core import flatten
from dask.highlevelgraph import HighLevelGraph

from .. import config
from ..io import npz as io
from ..sets.index_kinds import IndexKind, kind_named
from . import shards as tasks
from .inputs import Ids, as_dask_ids, graph_of
from .layout import Layout, check_shards

#: The per-shard operations, by the names of their tasks.
_COMBINE = {
    "union": tasks.union,
    "intersection": tasks.intersection,
    "difference": tasks.difference,
}
MANIFEST = "manifest.npz"


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


class ShardedSet(DaskMethodsMixin):
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
    index : {"hash", "flat", "paged"}, optional
        Each shard's index kind (see :class:`~sparseset.SparseSet`); the
        default ``"hash"`` takes any id in ``[0, 2**63)``.
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

    __slots__ = ("_graph", "_kind", "_lengths", "_name", "layout")

    def __init__(
        self,
        ids: Any = (),
        shards: int | None = None,
        by: str | None = None,
        index: str = "hash",
        *,
        layout: Layout | None = None,
        space: int | None = None,
    ) -> None:
        kind = kind_named(index)
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
        source = as_dask_ids(ids, add_to=kind)
        if layout is None:
            count = default_shards() if shards is None else check_shards(shards)
            if by == "range":
                layout = Layout.range(
                    count, id_space(source) if space is None else space
                )
            elif space is not None:
                raise ValueError("space= is for by='range' (a hash layout has none)")
            else:
                layout = Layout.hash(count)
        token = tokenize("sparseset-build", source.array.name, layout, kind.name)
        name = f"sparseset-shards-{token}"
        layer, _, runs, blocks = route(source, layout, kind, kind.limit, token)
        for k in range(layout.shards):
            capacity = _capacity(kind, layout)
            layer[(name, k)] = (
                tasks.build,
                kind.name,
                capacity,
                [(runs, c, k) for c in range(blocks)],
            )
        graph = graph_of(name, layer, [source.array])
        self._setup(graph, name, layout, kind)

    def _setup(
        self, graph: HighLevelGraph, name: str, layout: Layout, kind: IndexKind
    ) -> None:
        self._graph = graph
        self._name = name
        self.layout = layout
        self._kind = kind
        self._lengths: np.ndarray | None = None

    @classmethod
    def _from_graph(
        cls, graph: Any, name: str, layout: Layout, kind: IndexKind
    ) -> ShardedSet:
        out = cls.__new__(cls)
        if not isinstance(graph, HighLevelGraph):
            graph = graph_of(name, graph, ())
        out._setup(graph, name, layout, kind)
        return out

    @classmethod
    def from_ids(cls, ids: Any, **options: Any) -> ShardedSet:
        """``ShardedSet(ids, **options)``, named as ``SparseSet.from_ids`` is.

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

    # -- the dask collection protocol ----------------------------------------

    def __dask_graph__(self) -> HighLevelGraph:
        return self._graph

    def __dask_keys__(self) -> list[tuple[str, int]]:
        return [(self._name, k) for k in range(self.layout.shards)]

    def __dask_layers__(self) -> tuple[str, ...]:
        return (self._name,)

    def __dask_tokenize__(self) -> str:
        return self._name

    __dask_scheduler__ = staticmethod(dask.threaded.get)

    @staticmethod
    def __dask_optimize__(dsk: Any, keys: Any, **kwargs: Any) -> Any:
        # Only the tasks the shards need: a set built on another keeps the
        # other's graph, not its queries'.
        if isinstance(dsk, HighLevelGraph):
            return dsk.cull(set(flatten(keys)))
        return dsk

    def __dask_postcompute__(self) -> Any:
        return tasks.whole, (self.layout, self._kind.name)

    def __dask_postpersist__(self) -> Any:
        return self._rebuild, ()

    def _rebuild(self, dsk: Any, *, rename: Any = None) -> ShardedSet:
        name = rename.get(self._name, self._name) if rename else self._name
        return ShardedSet._from_graph(dsk, name, self.layout, self._kind)

    def persist(self, **kwargs: Any) -> ShardedSet:
        """This set with its shards built and kept in the cluster's memory:
        dask's ``persist``, typed (dask's own is unannotated).

        Examples
        --------
        >>> s = ShardedSet([4, 2, 4], shards=2).persist(); len(s)
        2
        """
        persisted: ShardedSet = super().persist(**kwargs)  # type: ignore[no-untyped-call]
        return persisted

    # -- what it is --------------------------------------------------------

    @property
    def kind(self) -> str:
        """Each shard's index kind."""
        return self._kind.name

    @property
    def shards(self) -> int:
        """How many shards."""
        return self.layout.shards

    @property
    def name(self) -> str:
        """The dask name of the shards' tasks: keys are ``(name, shard)``."""
        return self._name

    def __repr__(self) -> str:
        return (
            f"ShardedSet(shards={self.layout.shards}, by={self.layout.by!r}, "
            f"index={self.kind!r}, name={self._name!r})"
        )

    def _per_shard(self, function: Any, prefix: str) -> da.Array:
        """A dask array with one element per shard: ``function(shard)``."""
        name = f"sparseset-{prefix}-{self._name}"
        layer = {(name, k): (function, (self._name, k)) for k in range(self.shards)}
        graph = graph_of(name, layer, [self])
        return da.Array(graph, name, ((1,) * self.shards,), np.int64)

    def shard_lengths(self) -> np.ndarray:
        """How many members each shard holds (computed once, then kept).

        Examples
        --------
        >>> ShardedSet([0, 1, 2, 3], shards=2, by="range").shard_lengths().tolist()
        [2, 2]
        """
        if self._lengths is None:
            self._lengths = np.asarray(self._per_shard(tasks.length, "len").compute())
        return self._lengths.copy()

    def shard_nbytes(self) -> np.ndarray:
        """Bytes each shard's arrays hold (its index and dense).

        Examples
        --------
        >>> ShardedSet(range(1000), shards=2, by="range", index="flat").shard_nbytes()
        array([4000, 4000])
        """
        return np.asarray(self._per_shard(tasks.nbytes, "nbytes").compute())

    def __len__(self) -> int:
        return int(self.shard_lengths().sum())

    def ids(self) -> da.Array:
        """The members as a dask array of int64, one block per shard.

        Blocks follow the shards; within a shard, members are in its
        insertion order (until a removal swaps one in). Computes the
        shards' lengths, so that the blocks' sizes are known.

        Examples
        --------
        >>> s = ShardedSet([9, 2, 4], shards=2, by="range")
        >>> s.ids().compute().tolist(), s.ids().chunks
        ([2, 4, 9], ((2, 1),))
        """
        lengths = self.shard_lengths()
        name = f"sparseset-ids-{self._name}"
        layer = {
            (name, k): (tasks.members, (self._name, k), self.layout.start(k))
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self])
        return da.Array(graph, name, (tuple(int(n) for n in lengths),), np.int64)

    # -- queries -------------------------------------------------------------

    def contains(self, ids: Any) -> da.Array:
        """Membership of each id, as a lazy bool dask array in the ids'
        order and blocks (0-d for one id).

        Non-negative ids past the index's range are absent; negative ids
        raise ``ValueError`` (here for in-memory ids, when computed for a
        dask array). A dask Series answers an array with a block per
        partition.

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

        Examples
        --------
        >>> s = ShardedSet([9, 2, 4], shards=2, by="range")
        >>> s.index([4, 9, 3]).compute().tolist()
        [1, 2, -1]
        """
        source = as_dask_ids(ids)
        return self._lookup(source, "index", tasks.index_run, np.int64)

    def _lookup(self, source: Ids, what: str, function: Any, dtype: Any) -> da.Array:
        token = tokenize(self._name, source.array.name, what)
        layer, splits, runs, blocks = route(source, self.layout, self._kind, 0, token)
        look = f"sparseset-look-{token}"
        out = f"sparseset-{what}-{token}"
        extra: list[Any] = [()] * self.shards
        if what == "index":
            # Each shard's positions start after the members of the shards
            # before it: one tiny task per shard, and one to add them up.
            lengths, firsts = f"sparseset-len-{token}", f"sparseset-firsts-{token}"
            for k in range(self.shards):
                layer[(lengths, k)] = (tasks.length, (self._name, k))
            layer[(firsts, 0)] = (
                tasks.firsts,
                *[(lengths, k) for k in range(self.shards)],
            )
            for k in range(self.shards):
                layer[(firsts, 1, k)] = (tasks.pick, (firsts, 0), k)
            extra = [((firsts, 1, k),) for k in range(self.shards)]
        for c in range(blocks):
            for k in range(self.shards):
                layer[(look, c, k)] = (
                    function,
                    (self._name, k),
                    (runs, c, k),
                    *extra[k],
                )
            layer[(out, c)] = (
                tasks.merge_block,
                (splits, c),
                np.dtype(dtype).str,
                *[(look, c, k) for k in range(self.shards)],
            )
        graph = graph_of(out, layer, [source.array, self])
        result = da.Array(graph, out, source.array.chunks, dtype)
        return result[0] if source.scalar else result

    # -- new sets ------------------------------------------------------------

    def add(self, ids: Any) -> ShardedSet:
        """A new set with ``ids`` added (this one stays as it is).

        Ids outside the index's range or negative raise ``ValueError``
        (here for in-memory ids, when computed for a dask array).

        Examples
        --------
        >>> s = ShardedSet([1], shards=2); t = s.add([5, 1])
        >>> len(s), len(t)
        (1, 2)
        """
        return self._update(as_dask_ids(ids, add_to=self._kind), tasks.add_runs, "add")

    def discard(self, ids: Any) -> ShardedSet:
        """A new set without ``ids`` (absent ones are ignored).

        Examples
        --------
        >>> t = ShardedSet([1, 2, 3], shards=2).discard([2, 7])
        >>> sorted(t.ids().compute().tolist())
        [1, 3]
        """
        return self._update(as_dask_ids(ids), tasks.discard_runs, "discard")

    def _update(self, source: Ids, function: Any, what: str) -> ShardedSet:
        limit = self._kind.limit if what == "add" else 0
        token = tokenize(self._name, source.array.name, what)
        name = f"sparseset-shards-{token}"
        layer, _, runs, blocks = route(source, self.layout, self._kind, limit, token)
        for k in range(self.shards):
            layer[(name, k)] = (
                function,
                (self._name, k),
                [(runs, c, k) for c in range(blocks)],
            )
        graph = graph_of(name, layer, [source.array, self])
        return ShardedSet._from_graph(graph, name, self.layout, self._kind)

    def union(self, other: Any) -> ShardedSet:
        """Members of either set, shard by shard (no shuffle).

        ``other`` is a :class:`ShardedSet` of the same layout, or ids (built
        into one with this set's layout). The result takes this set's
        index kind.

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2); b = ShardedSet([2, 3], layout=a.layout)
        >>> sorted(a.union(b).ids().compute().tolist())
        [1, 2, 3]
        """
        return self._combine(other, "union")

    def intersection(self, other: Any) -> ShardedSet:
        """Members of both sets, shard by shard (no shuffle).

        Examples
        --------
        >>> a = ShardedSet([1, 2], shards=2)
        >>> a.intersection([2, 3]).ids().compute().tolist()
        [2]
        """
        return self._combine(other, "intersection")

    def difference(self, other: Any) -> ShardedSet:
        """Members of this set that are not in ``other``, shard by shard.

        Examples
        --------
        >>> ShardedSet([1, 2], shards=2).difference([2]).ids().compute().tolist()
        [1]
        """
        return self._combine(other, "difference")

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def _combine(self, other: Any, what: str) -> ShardedSet:
        if not isinstance(other, ShardedSet):
            other = ShardedSet(other, index=self.kind, layout=self.layout)
        elif other.layout != self.layout:
            raise ValueError(
                f"cannot take the {what} of sets with different shard layouts: "
                f"{self.layout} and {other.layout}; build one with the other's "
                "layout (ShardedSet(ids, layout=other.layout))"
            )
        token = tokenize(self._name, other._name, what)
        name = f"sparseset-shards-{token}"
        function = _COMBINE[what]
        layer = {
            (name, k): (function, (self._name, k), (other._name, k))
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self, other])
        return ShardedSet._from_graph(graph, name, self.layout, self._kind)

    # -- files ---------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the set to the directory ``path``: one file per shard, each
        written by the worker holding the shard, and a manifest.

        Every file is written atomically. The manifest is written last and
        names this save's shard files, so a reader sees the previous save
        or this one whole; shard files of earlier saves are removed after
        it. ``path`` must be reachable from every worker (a shared or
        network file system) and is created if missing.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp()
        >>> ShardedSet([4, 8], shards=2).save(path)
        >>> sorted(ShardedSet.load(path).ids().compute().tolist())
        [4, 8]
        """
        directory = os.path.abspath(os.fspath(path))
        os.makedirs(directory, exist_ok=True)
        stamp = uuid.uuid4().hex[:12]
        files = [f"shard-{k:05d}-{stamp}.npz" for k in range(self.shards)]
        name = f"sparseset-save-{stamp}"
        layer = {
            (name, k): (
                tasks.save_shard,
                (self._name, k),
                os.path.join(directory, files[k]),
                k,
                self.layout,
                self.kind,
            )
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self])
        try:
            lengths = da.Array(graph, name, ((1,) * self.shards,), np.int64).compute()
            io.save(
                os.path.join(directory, MANIFEST),
                tasks.MANIFEST_FORMAT,
                tasks.VERSION,
                {
                    "by": np.array(self.layout.by),
                    "shards": np.int64(self.shards),
                    "width": np.int64(self.layout.width),
                    "index": np.array(self.kind),
                    "files": np.array(files),
                    "lengths": np.asarray(lengths, np.int64),
                },
            )
        finally:
            # Shard files no manifest names: this save's after a failure, or
            # an earlier save's after success.
            current = set(_manifest_files(directory))
            for stale in glob.glob(os.path.join(directory, "shard-*.npz")):
                if os.path.basename(stale) not in current:
                    os.unlink(stale)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ShardedSet:
        """Read a set written by :meth:`save`, its shards by the workers.

        The manifest is read and checked here; each shard file is read,
        checked (its ids distinct, in range and in the right shard, as many
        as the manifest says) and kept in memory by a worker before this
        returns. A missing file raises ``FileNotFoundError``, anything
        wrong with one :class:`~sparseset.FormatError`. A shard lost with
        a worker is read again.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp(); ShardedSet([1, 2], shards=2).save(path)
        >>> len(ShardedSet.load(path))
        2
        """
        directory = os.path.abspath(os.fspath(path))
        manifest = os.path.join(directory, MANIFEST)
        arrays = io.load(manifest, tasks.MANIFEST_FORMAT, tasks.VERSION)
        layout, kind, files, lengths = _read_manifest(manifest, arrays)
        name = f"sparseset-shards-{tokenize(manifest, os.stat(manifest).st_mtime_ns)}"
        layer = {
            (name, k): (
                tasks.load_shard,
                os.path.join(directory, files[k]),
                k,
                layout,
                kind.name,
                int(lengths[k]),
            )
            for k in range(layout.shards)
        }
        graph = graph_of(name, layer, ())
        loaded = cls._from_graph(graph, name, layout, kind).persist()
        # Read and checked now, so that a bad file raises here.
        loaded._lengths = np.asarray(loaded._per_shard(tasks.length, "len").compute())
        return loaded


def _manifest_files(directory: str) -> list[str]:
    """The shard files the directory's manifest names (none if unreadable)."""
    try:
        arrays = io.load(
            os.path.join(directory, MANIFEST), tasks.MANIFEST_FORMAT, tasks.VERSION
        )
    except (OSError, io.FormatError):
        return []
    files = arrays.get("files")
    return [] if files is None else [str(f) for f in np.atleast_1d(files)]


def _read_manifest(
    where: str, arrays: dict[str, np.ndarray]
) -> tuple[Layout, IndexKind, list[str], np.ndarray]:
    """The layout, index kind, shard files and lengths a manifest holds,
    or :class:`~sparseset.FormatError` saying what is wrong."""
    try:
        by, shards, width = (
            str(arrays["by"]),
            int(arrays["shards"]),
            int(arrays["width"]),
        )
        kind = kind_named(str(arrays["index"]))
        layout = Layout(by, shards, width)
        files = [str(f) for f in arrays["files"]]
        lengths = np.asarray(arrays["lengths"])
    except (KeyError, TypeError, ValueError) as error:
        raise io.FormatError(f"{where!r} is not a valid manifest: {error}") from error
    if (
        len(files) != shards
        or lengths.shape != (shards,)
        or lengths.dtype.kind not in "iu"
        or (lengths < 0).any()
        or any(os.path.basename(f) != f or not f.endswith(".npz") for f in files)
    ):
        raise io.FormatError(
            f"{where!r} does not list one file and one length per shard"
        )
    return layout, kind, files, lengths


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


def _capacity(kind: IndexKind, layout: Layout) -> int | None:
    """A new shard's capacity: a range shard's block for the flat index,
    else left to the runs it is built from (None)."""
    if kind.counts_ids:
        return min(layout.width, kind.max_capacity) if layout.by == "range" else 0
    return None


def route(
    source: Ids, layout: Layout, kind: IndexKind, limit: int, token: str
) -> tuple[dict[Any, Any], str, str, int]:
    """Tasks that split each block of ``source`` by shard, where it lies.

    Returns the layer, the name of the splits (``(splits, block)``), the
    name of the runs (``(runs, block, shard)``: one task per pair, so that
    each shard receives only its own run) and the number of blocks.
    """
    array = source.array
    splits, runs = f"sparseset-split-{token}", f"sparseset-run-{token}"
    layer: dict[Any, Any] = {}
    for c, offset in enumerate(source.offsets()):
        layer[(splits, c)] = (
            tasks.split_block,
            (array.name, c),
            layout,
            kind.name,
            limit,
            offset,
            c,
        )
        for k in range(layout.shards):
            layer[(runs, c, k)] = (tasks.run_of, (splits, c), k)
    return layer, splits, runs, len(source.array.chunks[0])
