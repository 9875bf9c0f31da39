"""ShardedStore: ids with columns, split over the shards of a dask cluster.

Each shard is a :class:`~sparseset.ComponentStore` in a worker's memory,
partitioned as a :class:`~sparseset.distributed.ShardedSet` is (the same
:class:`Layout` objects, hash or range). A batch of ids, and its column
values with it, is split by shard where it lies; each shard adds,
accumulates or answers its own run; answers are merged back in the
batch's order. ``update`` and ``add_at`` return new lazy stores, as
``ShardedSet.add`` does.
"""

from __future__ import annotations

import os
from typing import Any

import dask.array as da
import numpy as np
from dask.base import is_dask_collection, tokenize

from ..io.schema import Schema, parse_schema
from ..sets.index_kinds import IndexKind, kind_or_auto
from ..stores.component_store import ComponentStore, UnknownColumnError
from . import shards as tasks
from . import store_shards as store_tasks
from .collection import ShardedCollection, route
from .files import Manifest, save_shards
from .inputs import Ids, as_dask_ids, graph_of, in_dask, series_values
from .layout import Layout
from .sharded_set import check_layout_options, choose_layout, shard_capacity


class ShardedStore(ShardedCollection):
    """Ids with named columns, held in shards on a dask cluster.

    One :class:`~sparseset.ComponentStore` per shard, each in one worker's
    memory, laid out as a :class:`ShardedSet` is. Built empty from a
    schema, or from ids and columns with :meth:`from_arrays`,
    :meth:`from_dask_dataframe` or :meth:`read_parquet`. Lazy, like any
    dask collection: :meth:`persist` builds the shards; :meth:`get` and
    :meth:`contains` answer lazy dask arrays in the order of their ids;
    :meth:`update`, :meth:`add_at` and :meth:`join` return new stores (the
    old one stays valid); :meth:`compute` gathers one ``ComponentStore``.

    Parameters
    ----------
    schema : dict or numpy structured dtype
        The columns, as :class:`~sparseset.ComponentStore` takes them.
    shards, by, index, layout, space
        As for :class:`ShardedSet`; ``by="range"`` needs ``space`` here
        (there are no ids to measure).

    Examples
    --------
    >>> import numpy as np
    >>> counts = ShardedStore({"n": "i8"}, shards=2)
    >>> counts = counts.add_at(np.array([7, 3, 7, 7]), n=1).persist()
    >>> len(counts), counts.get([7, 3])["n"].compute().tolist()
    (2, [3, 1])
    >>> counts.compute().get(7)["n"].item()
    3
    """

    __slots__ = ("_schema",)

    def __init__(
        self,
        schema: Any,
        shards: int | None = None,
        by: str | None = None,
        index: str = "auto",
        *,
        layout: Layout | None = None,
        space: int | None = None,
    ) -> None:
        parsed = parse_schema(schema)
        kind = kind_or_auto(index)
        check_layout_options(shards, by, layout, space)
        layout = choose_layout(None, shards, by, layout, space)
        capacity = shard_capacity(kind, layout)
        # The dtype's descr: a structured dtype's token is its .str alone,
        # which any two schemas of the same row size share.
        description = repr(_schema_dtype(parsed).descr)
        token = tokenize("sparseset-store", layout, kind.name, description)
        name = f"sparseset-store-{token}"
        layer = {
            (name, k): (store_tasks.new_store, parsed, kind.name, capacity)
            for k in range(layout.shards)
        }
        self._setup(graph_of(name, layer, ()), name, layout, kind)
        self._schema = parsed

    @classmethod
    def _from_graph(
        cls, graph: Any, name: str, layout: Layout, kind: IndexKind, schema: Schema
    ) -> ShardedStore:
        out = cls._over(graph, name, layout, kind)
        out._schema = schema
        return out

    def _like(self, graph: Any, name: str) -> ShardedStore:
        return ShardedStore._from_graph(
            graph, name, self.layout, self._kind, self._schema
        )

    @classmethod
    def from_arrays(
        cls,
        ids: Any,
        schema: Any = None,
        *,
        shards: int | None = None,
        by: str | None = None,
        index: str = "auto",
        layout: Layout | None = None,
        space: int | None = None,
        **columns: Any,
    ) -> ShardedStore:
        """A store of ``ids`` with their ``columns``, added as
        :meth:`update` adds them (a repeated id takes its last row).

        ``ids`` are what :class:`ShardedSet` takes; each column is one row
        for every id, or one row per id as a numpy array, a list or a dask
        array (split with the ids). Without ``schema``, each column's dtype
        and row shape are its values' (``values.shape[1:]``; a scalar is a
        column of single values). The layout
        options are :class:`ShardedSet`'s.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range, or a value
            does not fit its column (in-memory inputs here; dask inputs when computed).
        UnknownColumnError
            If a keyword names a column the store does not have.

        Notes
        -----
        Lazy: O(k) work for k ids when persisted, times the row width.

        Examples
        --------
        >>> import numpy as np
        >>> s = ShardedStore.from_arrays([5, 1, 5], pos=np.eye(3), shards=2)
        >>> s.schema, s.get(5)["pos"].compute().tolist()
        ({'pos': (dtype('float64'), (3,))}, [0.0, 0.0, 1.0])
        """
        return cls._build(ids, schema, columns, shards, by, index, layout, space)

    @classmethod
    def _build(
        cls,
        ids: Any,
        schema: Any,
        columns: dict[str, Any],
        shards: int | None = None,
        by: str | None = None,
        index: str = "auto",
        layout: Layout | None = None,
        space: int | None = None,
    ) -> ShardedStore:
        check_layout_options(shards, by, layout, space)
        kind = kind_or_auto(index)
        source = as_dask_ids(ids, add_to=kind)
        if schema is None:
            schema = {name: _spec_of(name, value) for name, value in columns.items()}
        layout = choose_layout(source, shards, by, layout, space)
        empty = cls(schema, index=index, layout=layout)
        return empty._write(source, columns, "update")

    @classmethod
    def from_dask_dataframe(
        cls, frame: Any, id: str = "id", schema: Any = None, **options: Any
    ) -> ShardedStore:
        """A store of a dask DataFrame's rows, keyed by its column ``id``.

        Every other column is a column of the store (only ``schema``'s,
        cast to it, when given); each partition is split by shard where it
        lies. Integer, float and bool columns only; a nullable column
        holding a null raises when computed. ``options`` are
        :meth:`from_arrays`'s layout options.

        Raises
        ------
        TypeError
            If ``id`` is not a column name.
        KeyError
            If ``id``, or a column of ``schema``, is not a column of the frame.

        Notes
        -----
        Lazy: O(n) work for n rows when persisted, one task per partition and
        shard, as :meth:`from_arrays`.

        Examples
        --------
        >>> import dask.dataframe as dd, pandas as pd
        >>> events = pd.DataFrame({"user": [4, 2, 4], "spent": [1.5, 2.0, 3.0]})
        >>> frame = dd.from_pandas(events, npartitions=2)
        >>> s = ShardedStore.from_dask_dataframe(frame, id="user", shards=2)
        >>> s.get([4, 2])["spent"].compute().tolist()
        [3.0, 2.0]
        """
        if not isinstance(id, str):
            raise TypeError(f"id must be a column name, not {id!r}")
        if id not in frame.columns:
            raise KeyError(
                f"id = {id!r} is not a column of the frame; its columns: "
                f"{', '.join(map(str, frame.columns))}"
            )
        names = (
            list(parse_schema(schema))
            if schema is not None
            else [c for c in frame.columns if c != id]
        )
        missing = [name for name in names if name not in frame.columns]
        if missing:
            raise KeyError(f"column {missing[0]!r} of the schema is not in the frame")
        values = {
            str(name): series_values(frame[name], f"column {name!r}") for name in names
        }
        return cls._build(frame[id], schema, values, **options)

    @classmethod
    def read_parquet(
        cls, path: Any, id: str = "id", schema: Any = None, **options: Any
    ) -> ShardedStore:
        """A store of a Parquet dataset's rows, keyed by its column ``id``:
        :meth:`from_dask_dataframe` on ``dask.dataframe.read_parquet(path)``
        (only ``schema``'s columns are read, when given).

        Raises
        ------
        KeyError
            If ``id`` or a field of ``schema`` is not a column of the dataset.

        Notes
        -----
        Lazy: O(n) work for n rows when persisted, one task per partition and shard.

        Examples
        --------
        >>> import pathlib, tempfile, pandas as pd
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "events.parquet"
        >>> pd.DataFrame({"user": [7, 3], "n": [1, 2]}).to_parquet(path)
        >>> ShardedStore.read_parquet(path, id="user").get(3)["n"].compute().item()
        2
        """
        import dask.dataframe as dd

        wanted = None if schema is None else [id, *parse_schema(schema)]
        frame = dd.read_parquet(path, columns=wanted)
        return cls.from_dask_dataframe(frame, id, schema, **options)

    # -- the dask collection protocol (the rest is ShardedCollection's) ----

    def __dask_postcompute__(self) -> Any:
        return store_tasks.whole, (self.layout, self._kind.name, self._schema)

    # -- what it is --------------------------------------------------------

    @property
    def schema(self) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
        """Column name -> ``(dtype, row_shape)``, as a shard's.

        O(c) for c columns: a new dict each time.

        Examples
        --------
        >>> ShardedStore({"n": "i4"}, shards=1).schema
        {'n': (dtype('int32'), ())}
        """
        return dict(self._schema)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, in schema order.

        O(c) for c columns.
        """
        return tuple(self._schema)

    def __repr__(self) -> str:
        return (
            f"ShardedStore({', '.join(self._schema)}; shards={self.shards}, "
            f"by={self.layout.by!r}, index={self.kind!r}, name={self._name!r})"
        )

    # -- queries -------------------------------------------------------------

    def contains(self, ids: Any) -> da.Array:
        """Membership of each id, as a lazy bool dask array in the ids'
        order and blocks (0-d for one id), as :meth:`ShardedSet.contains`.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative (in-memory ids here; a dask input when computed).

        Notes
        -----
        Lazy: O(k) work for k ids when computed, split by shard with no shuffle.

        Examples
        --------
        >>> s = ShardedStore.from_arrays([2, 4], n=1, shards=2)
        >>> s.contains([4, 3]).compute().tolist()
        [True, False]
        """
        return self._lookup(as_dask_ids(ids), "contains", tasks.contains_run, bool)

    def get(self, ids: Any) -> dict[str, da.Array]:
        """The rows of ``ids``, one lazy dask array per column, in the ids'
        order and blocks (rows of one id for one id).

        Every id must be in the store: when computed, an absent one raises
        ``KeyError`` naming it. Ids are checked as for :meth:`contains`.

        Raises
        ------
        KeyError
            When computed, if an id is not in the store.

        Notes
        -----
        Lazy: O(k) work for k ids when computed, times the row width, split
        by shard with no shuffle.

        Examples
        --------
        >>> s = ShardedStore.from_arrays([2, 4], n=[20, 40], shards=2)
        >>> s.get([4, 2, 4])["n"].compute().tolist(), s.get(2)["n"].compute().item()
        ([40, 20, 40], 20)
        >>> s.get([3])["n"].compute()
        Traceback (most recent call last):
        ...
        KeyError: 'id 3 is not in the store'
        """
        source = as_dask_ids(ids)
        token = tokenize(self._name, source.array.name, "get")
        layer, splits, runs, blocks = route(source, self.layout, self._kind, 0, token)
        look = f"sparseset-get-{token}"
        for c in range(blocks):
            for k in range(self.shards):
                layer[(look, c, k)] = (
                    store_tasks.get_run,
                    (self._name, k),
                    (runs, c, k),
                    self.layout.start(k),
                )
        out = {}
        for j, (name, (dtype, shape)) in enumerate(self._schema.items()):
            column = f"sparseset-get-{name}-{token}"
            merges = dict(layer)
            for c in range(blocks):
                merges[(column, c, *(0,) * len(shape))] = (
                    store_tasks.merge_rows,
                    (splits, c),
                    j,
                    *[(look, c, k) for k in range(self.shards)],
                )
            graph = graph_of(column, merges, [source.array, self])
            chunks = (source.array.chunks[0], *((n,) for n in shape))
            rows = da.Array(graph, column, chunks, dtype)
            out[name] = rows[0] if source.scalar else rows
        return out

    # -- new stores ----------------------------------------------------------

    def update(self, ids: Any, /, **columns: Any) -> ShardedStore:
        """A new store with ``ids`` added or their rows replaced, as
        :meth:`ComponentStore.add <sparseset.ComponentStore.add>` does (a
        repeated id takes its last value; columns not given are zero on new
        rows, left as they were on replaced rows). This store stays as it is.

        Each column is one row for every id, or one row per id (a numpy
        array, a list, or a dask array split with the ids). In-memory
        values and ids are checked now, with the store's errors; a dask
        input's when computed, naming its block.

        Raises
        ------
        TypeError
            If the ids are not integers (in-memory ids here; a dask input when its
            blocks are computed).
        ValueError
            If an id is negative or outside the shards' index kind's range, or a value
            does not fit its column (in-memory inputs here; dask inputs when computed).
        UnknownColumnError
            If a keyword names a column the store does not have.

        Notes
        -----
        Lazy: O(k) work for k ids when computed, times the row width.

        Examples
        --------
        >>> s = ShardedStore.from_arrays([1, 2], hp=[10, 20], shards=2)
        >>> t = s.update([2, 3], hp=[25, 30])
        >>> t.get([1, 2, 3])["hp"].compute().tolist(), len(s)
        ([10, 25, 30], 2)
        """
        return self._write(as_dask_ids(ids, add_to=self._kind), columns, "update")

    def add_at(self, ids: Any, /, **columns: Any) -> ShardedStore:
        """A new store with each occurrence's values added to its id's row,
        as :meth:`ComponentStore.add_at <sparseset.ComponentStore.add_at>`
        does: missing ids are inserted zero-filled, then every occurrence
        accumulates (a repeated id once per occurrence). A counter: ``n=1``.

        Columns must hold numbers (``TypeError`` now if not). An integer
        sum that does not fit its column raises ``ValueError`` when
        computed, naming the shard and the id, and builds nothing. Values
        are given and checked as for :meth:`update`.

        Raises
        ------
        TypeError
            If a column given does not hold numbers.
        ValueError
            When computed, if an integer sum does not fit its column.

        Notes
        -----
        Lazy: O(k) work for k ids when computed, times the row width, as
        :meth:`update`.

        Examples
        --------
        >>> counts = ShardedStore({"n": "i8", "spent": "f8"}, shards=2)
        >>> counts = counts.add_at([5, 9, 5], n=1, spent=[1.0, 2.0, 0.5])
        >>> counts.get([5, 9])["n"].compute().tolist()
        [2, 1]
        >>> counts.get(5)["spent"].compute().item()
        1.5
        """
        for name in columns:
            dtype = self._column_spec(name)[0]
            if dtype.kind not in "iuf":
                raise TypeError(
                    f"column {name!r}: add_at adds numbers; "
                    f"a {dtype} column cannot hold a sum"
                )
        return self._write(as_dask_ids(ids, add_to=self._kind), columns, "add_at")

    def _column_spec(self, name: str) -> tuple[np.dtype, tuple[int, ...]]:
        try:
            return self._schema[name]
        except KeyError:
            raise UnknownColumnError(
                f"{name!r} is not a column of this store; columns: "
                f"{', '.join(self._schema) or '(none)'}"
            ) from None

    def _write(self, source: Ids, columns: dict[str, Any], what: str) -> ShardedStore:
        """The tasks of :meth:`update` (``what="update"``) or :meth:`add_at`."""
        constants, arrays = self._values(source, columns)
        token = tokenize(
            self._name,
            source.array.name,
            what,
            {name: array.name for name, array in arrays.items()},
            constants,
        )
        layer, splits, runs, blocks = route(
            source, self.layout, self._kind, self._kind.limit, token
        )
        rows = f"sparseset-rows-{token}"
        parts = f"sparseset-part-{token}"
        schema = {name: self._schema[name] for name in arrays}
        if arrays:
            for c, offset in enumerate(source.offsets()):
                layer[(rows, c)] = (
                    store_tasks.split_rows,
                    (splits, c),
                    offset,
                    c,
                    schema,
                    *[
                        (array.name, c, *(0,) * (array.ndim - 1))
                        for array in arrays.values()
                    ],
                )
                for k in range(self.shards):
                    layer[(parts, c, k)] = (store_tasks.part, (rows, c), k)
        name = f"sparseset-store-{token}"
        function = store_tasks.update if what == "update" else store_tasks.add_at
        for k in range(self.shards):
            layer[(name, k)] = (
                function,
                (self._name, k),
                [(runs, c, k) for c in range(blocks)],
                [(parts, c, k) if arrays else None for c in range(blocks)],
                constants,
                self.layout.start(k),
                k,
            )
        graph = graph_of(name, layer, [source.array, self, *arrays.values()])
        return self._like(graph, name)

    def _values(
        self, source: Ids, columns: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, da.Array]]:
        """The column values of a batch: one row for every id (checked and
        cast now), and dask arrays of one row per id, blocked as the ids
        are (in-memory ones checked and cast now)."""
        constants: dict[str, Any] = {}
        arrays: dict[str, da.Array] = {}
        chunks = source.array.chunks[0]
        count = source.array.shape[0]
        for name, value in columns.items():
            _, shape = self._column_spec(name)
            if is_dask_collection(value):
                arrays[name] = self._blocked(name, value, source)
                continue
            if np.shape(value) == shape or source.scalar:
                one = store_tasks.prepared(self._schema, 1, {name: value})[name]
                constants[name] = one[0]
                continue
            if np.isnan(count):
                raise ValueError(
                    f"column {name!r}: in-memory values for ids of unknown "
                    "length (a dask Series); give the values as a dask array "
                    "or Series of the same partitions"
                )
            rows = store_tasks.prepared(self._schema, int(count), {name: value})[name]
            arrays[name] = in_dask(rows, chunks=(chunks,))
        return constants, arrays

    def _blocked(self, name: str, value: Any, source: Ids) -> da.Array:
        """A dask array or Series of values, blocked as the ids are."""
        if not isinstance(value, da.Array):
            if getattr(value, "ndim", 0) != 1 or not hasattr(value, "to_dask_array"):
                raise TypeError(
                    f"column {name!r}: values must be a dask array or Series, "
                    f"not a {type(value).__name__}"
                )
            value = series_values(value, f"column {name!r}")
        if value.ndim < 1:
            raise ValueError(f"column {name!r}: a 0-d dask array is not rows")
        ids = source.array.chunks[0]
        mine = value.chunks[0]
        if len(mine) != len(ids) or (mine != ids and not _unknown(mine, ids)):
            if _unknown(mine, ids):
                raise ValueError(
                    f"column {name!r}: {len(mine)} blocks of values for "
                    f"{len(ids)} blocks of ids of unknown sizes; take both "
                    "from the same dask DataFrame"
                )
            if value.shape[0] != source.array.shape[0]:
                raise ValueError(
                    f"column {name!r}: {value.shape[0]} rows of values for "
                    f"{source.array.shape[0]} ids"
                )
            value = value.rechunk({0: ids})
        if value.ndim > 1:
            value = value.rechunk({axis: -1 for axis in range(1, value.ndim)})
        blocked: da.Array = value
        return blocked

    def join(self, other: ShardedStore) -> ShardedStore:
        """The ids in both stores, with the columns of both, shard by shard
        (no shuffle): an inner join on the ids.

        Both must have the same layout (else ``ValueError`` naming both)
        and no column name in common. Ids keep this store's order within
        a shard; the result takes this store's index kind.

        Raises
        ------
        TypeError
            If ``other`` is not a ShardedStore.
        ValueError
            If the layouts differ or a column name is in both stores.

        Notes
        -----
        Lazy: O(n + m) work for the two stores' members, shard by shard, with no
        shuffle.

        Examples
        --------
        >>> users = ShardedStore.from_arrays([1, 2, 3], age=[30, 40, 50], shards=2)
        >>> spent = ShardedStore.from_arrays([3, 1, 9], total=[5.0, 1.0, 9.0],
        ...                                  layout=users.layout)
        >>> both = users.join(spent)
        >>> both.columns, sorted(both.ids().compute().tolist())
        (('age', 'total'), [1, 3])
        >>> both.get(3)["total"].compute().item()
        5.0
        """
        if not isinstance(other, ShardedStore):
            raise TypeError(f"join takes a ShardedStore, not {type(other).__name__}")
        self._same_layout(other, "join")
        shared = [name for name in other.columns if name in self._schema]
        if shared:
            raise ValueError(
                f"both stores have a column {shared[0]!r}; a join keeps every "
                "column of both, so their names must differ"
            )
        token = tokenize(self._name, other.name, "join")
        name = f"sparseset-store-{token}"
        capacity = shard_capacity(self._kind, self.layout) or 0
        layer = {
            (name, k): (
                store_tasks.join,
                (self._name, k),
                (other.name, k),
                capacity,
                self._kind.name,
            )
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self, other])
        return ShardedStore._from_graph(
            graph, name, self.layout, self._kind, {**self._schema, **other.schema}
        )

    # -- out -----------------------------------------------------------------

    def to_dask_dataframe(self, id: str = "id") -> Any:
        """The store as a dask DataFrame indexed by id, one partition per
        shard, as :meth:`ComponentStore.to_pandas
        <sparseset.ComponentStore.to_pandas>` writes each (a field of rows
        ``(k,)`` is the columns ``name_0 .. name_{k-1}``).

        Notes
        -----
        Lazy: O(n) per column for n members when computed, one partition per shard.

        Examples
        --------
        >>> s = ShardedStore.from_arrays([3, 1], n=[30, 10], shards=2)
        >>> s.to_dask_dataframe(id="user").compute().sort_index()["n"].tolist()
        [10, 30]
        """
        import dask.dataframe as dd
        from dask.delayed import Delayed

        name = f"sparseset-frame-{tokenize(self._name, id)}"
        layer = {
            (name, k): (store_tasks.frame, (self._name, k), self.layout.start(k), id)
            for k in range(self.shards)
        }
        graph = graph_of(name, layer, [self])
        parts = [Delayed((name, k), graph, layer=name) for k in range(self.shards)]
        meta = store_tasks.empty_frame(self._schema, id)
        return dd.from_delayed(parts, meta=meta, verify_meta=False)

    # -- files ---------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the store to the directory ``path``: one file per shard
        (its ids and columns), each written by the worker holding the
        shard, and a manifest, as :meth:`ShardedSet.save` does.

        Raises
        ------
        OSError
            If a worker cannot write its shard file or the manifest cannot be written.

        Notes
        -----
        Computes now: O(n) per column for n members, each shard written by its worker.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp()
        >>> ShardedStore.from_arrays([4, 8], n=[40, 80], shards=2).save(path)
        >>> ShardedStore.load(path).get([8, 4])["n"].compute().tolist()
        [80, 40]
        """
        save_shards(
            self,
            path,
            store_tasks.MANIFEST_FORMAT,
            store_tasks.save_shard,
            {"schema": np.zeros(0, _schema_dtype(self._schema))},
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ShardedStore:
        """Read a store written by :meth:`save`, its shards by the workers,
        with :meth:`ShardedSet.load`'s checks, and each column's dtype and
        row shape checked against the saved schema.

        Raises
        ------
        FileNotFoundError
            If the directory or a shard file is missing.
        sparseset.FormatError
            If the manifest or a shard file is truncated, corrupted or inconsistent with
            the saved schema.

        Notes
        -----
        O(n) per column for n members, read and checked by the workers.

        Examples
        --------
        >>> import tempfile
        >>> path = tempfile.mkdtemp()
        >>> ShardedStore.from_arrays([1, 2], n=1, shards=2).save(path)
        >>> len(ShardedStore.load(path))
        2
        """
        manifest = Manifest(path, store_tasks.MANIFEST_FORMAT)
        saved = manifest.arrays.get("schema")
        if saved is None or saved.dtype.names is None:
            from ..io.npz import FormatError

            raise FormatError(f"{manifest.where!r} holds no store schema")
        schema = parse_schema(saved.dtype)
        name = f"sparseset-store-{manifest.name}"
        layer = manifest.layer(name, store_tasks.load_shard, schema)
        graph = graph_of(name, layer, ())
        loaded = cls._from_graph(
            graph, name, manifest.layout, manifest.kind, schema
        ).persist()
        # Read and checked now, so that a bad file raises here.
        loaded.shard_lengths()
        return loaded

    def compute(self, **kwargs: Any) -> ComponentStore:
        """The whole store, gathered to the client as one
        :class:`~sparseset.ComponentStore` of the shards' index kind.

        Notes
        -----
        O(n) per column for n members, all sent to the client: use it on purpose.

        Examples
        --------
        >>> store = ShardedStore.from_arrays([2, 1], n=[5, 6], shards=2).compute()
        >>> type(store).__name__, sorted(store.ids.tolist()), int(store.get(1)["n"])
        ('ComponentStore', [1, 2], 6)
        """
        whole: ComponentStore = super().compute(**kwargs)  # type: ignore[no-untyped-call]
        return whole


def _schema_dtype(schema: Schema) -> np.dtype:
    """The schema as a structured dtype (what a manifest keeps)."""
    return np.dtype([(name, dtype, shape) for name, (dtype, shape) in schema.items()])


def _spec_of(name: str, value: Any) -> tuple[Any, tuple[int, ...]]:
    """A column's ``(dtype, row_shape)`` from its values (one row per id)."""
    if is_dask_collection(value):
        if not isinstance(value, da.Array):
            value = series_values(value, f"column {name!r}")
        return value.dtype, tuple(int(n) for n in value.shape[1:])
    array = np.asarray(value)
    # One value for every id is a row of its own shape (a scalar: one value).
    return array.dtype, array.shape[1:] if array.ndim else ()


def _unknown(*chunks: tuple[float, ...]) -> bool:
    """Whether any of these block sizes is unknown (nan)."""
    return any(np.isnan(size) for sizes in chunks for size in sizes)
