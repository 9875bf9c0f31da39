"""What the tasks of a sharded store run: plain functions on numpy arrays and
:class:`~sparseset.ComponentStore` shards.

Each shard is a ``ComponentStore`` keyed by ids local to the shard (``id -
start``, as a :class:`~sparseset.distributed.ShardedSet`'s shards are).
Tasks never mutate their inputs: ``update`` and ``add_at`` copy the shard
first, so that a task dask reruns after losing a worker computes the
same answer from the same inputs. Nothing here imports dask.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..io import npz as io
from ..io.schema import Schema
from ..stores.component_store import ComponentStore
from .layout import Layout, Split
from .shards import VERSION, checked_ids, members, one_thread, read_shard

#: The format names of a saved sharded store's files.
SHARD_FORMAT = "sparseset.ShardedStore.shard"
MANIFEST_FORMAT = "sparseset.ShardedStore"


def new_store(schema: Schema, kind: str, capacity: int | None) -> ComponentStore:
    """An empty shard (room for ``capacity`` ids; None: none reserved).

    Examples
    --------
    >>> len(new_store({"n": (np.dtype("i8"), ())}, "hash", None))
    0
    """
    return ComponentStore(schema, capacity or 0, index=kind)


def copy_store(store: ComponentStore) -> ComponentStore:
    """A new store holding the same ids and rows, of the same kind (one
    that adapts, as the store does, if it adapts).

    Examples
    --------
    >>> old = ComponentStore({"n": "i8"}); old.add([4], n=7)
    1
    >>> new = copy_store(old); new.add([5]); old.ids.tolist(), new.ids.tolist()
    1
    ([4], [4, 5])
    """
    # Pickling's copy: it keeps whether the index adapts, which no
    # public attribute tells (``kind`` says what it uses now).
    out: ComponentStore = copy.copy(store)
    return out


def prepared(
    schema: Schema, count: int, values: dict[str, Any], where: str = ""
) -> dict[str, np.ndarray]:
    """``values`` cast and checked for ``count`` rows exactly as
    :meth:`ComponentStore.add <sparseset.ComponentStore.add>` checks them
    (same errors, ``where`` put in front of the message).

    Examples
    --------
    >>> schema = {"n": (np.dtype("u1"), ())}
    >>> prepared(schema, 2, {"n": [1, 2]})["n"].dtype
    dtype('uint8')
    >>> prepared(schema, 2, {"n": [1, 300]}, "block 3: ")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: block 3: column 'n': ... 300 ...
    """
    probe = ComponentStore({name: schema[name] for name in values}, count, index="flat")
    try:
        probe.add(np.arange(count), **values)
    except (TypeError, ValueError) as error:
        if not where:
            raise
        raise type(error)(f"{where}{error}") from None
    return {name: probe[name] for name in values}


def split_rows(
    split: Split, offset: int | None, number: int, schema: Schema, *blocks: Any
) -> tuple[dict[str, np.ndarray], ...]:
    """One block of column values (``blocks``, in ``schema``'s order),
    checked as :func:`prepared` checks them and split as the block's ids
    were: shard ``s`` gets the rows of its run, in batch order.

    Examples
    --------
    >>> split, _ = Layout.range(2, space=10).split(np.array([7, 1, 9]))
    >>> parts = split_rows(split, 0, 0, {"n": (np.dtype("i8"), ())}, [70, 10, 90])
    >>> [part["n"].tolist() for part in parts]
    [[10], [70, 90]]
    """
    count = split.tags.shape[0]
    where = f"block {number} of the values" + (
        f" (rows {offset}..{offset + count - 1} of the batch): "
        if offset is not None
        else ": "
    )
    values = prepared(schema, count, dict(zip(schema, blocks, strict=True)), where)
    order = np.argsort(split.tags, kind="stable")
    starts = split.starts
    return tuple(
        {name: rows[order[starts[s] : starts[s + 1]]] for name, rows in values.items()}
        for s in range(starts.shape[0] - 1)
    )


def part(parts: tuple[dict[str, np.ndarray], ...], shard: int) -> dict[str, Any]:
    """Shard ``shard``'s rows of a split block (what travels)."""
    return parts[shard]


def build(
    schema: Schema,
    kind: str,
    capacity: int | None,
    runs: list[np.ndarray],
    rows: list[dict[str, Any] | None],
    constants: dict[str, Any],
) -> ComponentStore:
    """A new shard holding the ids of ``runs`` with their ``rows`` (and the
    ``constants``, one row for every id), added in order.

    Examples
    --------
    >>> schema = {"n": (np.dtype("i8"), ())}
    >>> shard = build(schema, "hash", None, [np.array([3, 1])], [None], {"n": 5})
    >>> shard.ids.tolist(), shard["n"].tolist()
    ([3, 1], [5, 5])
    """
    store = new_store(schema, kind, capacity)
    return update(store, runs, rows, constants, 0, 0, copy=False)


def update(
    store: ComponentStore,
    runs: list[np.ndarray],
    rows: list[dict[str, Any] | None],
    constants: dict[str, Any],
    start: int,
    k: int,
    copy: bool = True,
) -> ComponentStore:
    """A copy of ``store`` (the store itself with ``copy=False``) with each
    run's ids added or their rows replaced, as ``ComponentStore.add`` does.

    Examples
    --------
    >>> old = ComponentStore({"n": "i8"}); old.add([1], n=1)
    1
    >>> new = update(old, [np.array([1, 2])], [{"n": np.array([5, 6])}], {}, 0, 0)
    >>> old["n"].tolist(), new["n"].tolist()
    ([1], [5, 6])
    """
    out = copy_store(store) if copy else store
    ids, values = joined(runs, rows)
    with one_thread():
        out.add(ids, **values, **constants)
    return out


def add_at(
    store: ComponentStore,
    runs: list[np.ndarray],
    rows: list[dict[str, Any] | None],
    constants: dict[str, Any],
    start: int,
    k: int,
) -> ComponentStore:
    """A copy of ``store`` with each run's values accumulated, as
    ``ComponentStore.add_at`` does. A sum that does not fit its column
    raises ``ValueError`` naming the shard (ids in a range layout's shard
    are counted from its ``start``).

    Examples
    --------
    >>> old = ComponentStore({"n": "i8"}, index="hash")
    >>> runs = [np.array([4, 4]), np.array([4])]
    >>> new = add_at(old, runs, [None, None], {"n": 1}, 0, 0)
    >>> len(old), int(new.get(4)["n"])
    (0, 3)
    """
    out = copy_store(store)
    ids, values = joined(runs, rows)
    with one_thread():
        try:
            out.add_at(ids, **values, **constants)
        except ValueError as error:
            counted = f", whose ids are counted from {start}" if start else ""
            raise ValueError(f"shard {k}{counted}: {error}") from None
    return out


def joined(
    runs: list[np.ndarray], rows: list[dict[str, Any] | None]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A shard's runs (one per block, in batch order) as one batch, with
    their rows: one call on the shard, so that its per-call work (an
    add_at's bound on each column's sums) is done once, not per block.

    Examples
    --------
    >>> ids, values = joined([np.array([1]), np.array([2, 3])],
    ...                      [{"n": np.array([10])}, {"n": np.array([20, 30])}])
    >>> ids.tolist(), values["n"].tolist()
    ([1, 2, 3], [10, 20, 30])
    """
    if len(runs) == 1:
        return runs[0], dict(rows[0] or {})
    ids = np.concatenate(runs) if runs else np.empty(0, np.int64)
    given = [part for part in rows if part is not None]
    values = {
        name: np.concatenate([part[name] for part in given])
        for name in (given or [{}])[0]
    }
    return ids, values


def get_run(store: ComponentStore, run: np.ndarray, start: int) -> tuple[Any, ...]:
    """The rows of the ids of ``run``, one array per column; ``KeyError``
    naming the first absent id (its global id) if any is absent.

    Examples
    --------
    >>> store = ComponentStore({"n": "i8"}); store.add([2, 5], n=[20, 50])
    2
    >>> get_run(store, np.array([5, 2]), 0)
    (array([50, 20]),)
    >>> get_run(store, np.array([3]), 100)
    Traceback (most recent call last):
    ...
    KeyError: 'id 103 is not in the store'
    """
    with one_thread():
        positions = store.index(run)
    if positions.shape[0] and positions.min() < 0:
        absent = int(run[int(np.argmin(positions))]) + start
        raise KeyError(f"id {absent} is not in the store")
    return tuple(store[name][positions] for name in store.columns)


def merge_rows(split: Split, column: int, *answers: tuple[Any, ...]) -> np.ndarray:
    """One column of a block's answers, from each shard's (in shard order),
    back in the block's order.

    Examples
    --------
    >>> split, _ = Layout.range(2, space=10).split(np.array([7, 1, 9]))
    >>> merge_rows(split, 0, (np.array([10]),), (np.array([70, 90]),)).tolist()
    [70, 10, 90]
    """
    values = np.concatenate([answer[column] for answer in answers])
    out = np.empty_like(values)
    out[np.argsort(split.tags, kind="stable")] = values
    return out


def join(
    a: ComponentStore, b: ComponentStore, capacity: int, index: str = "auto"
) -> ComponentStore:
    """The ids of both shards, in ``a``'s order, with the columns of both,
    in a store of index kind ``index`` (the joined collection's).

    Examples
    --------
    >>> a = ComponentStore({"x": "i8"}); a.add([1, 2, 3], x=[10, 20, 30])
    3
    >>> b = ComponentStore({"y": "f8"}); b.add([3, 1, 9], y=[0.3, 0.1, 0.9])
    3
    >>> both = join(a, b, 0)
    >>> both.ids.tolist(), both["x"].tolist(), both["y"].tolist()
    ([1, 3], [10, 30], [0.1, 0.3])
    """
    with one_thread():
        found = b.contains(a.ids)
        ids = a.ids[found]
        out = ComponentStore({**a.schema, **b.schema}, capacity, index=index)
        theirs = b.get(ids)
        out.add(ids, **{name: a[name][found] for name in a.columns}, **theirs)
    return out


def frame(store: ComponentStore, start: int, id: str) -> Any:
    """The shard as a ``pandas.DataFrame`` indexed by global id (as
    ``ComponentStore.to_pandas`` writes it).

    Examples
    --------
    >>> store = ComponentStore({"n": "i8"}); store.add([2], n=5)
    1
    >>> frame(store, 10, "user").to_dict()
    {'n': {12: 5}}
    """
    out = store.to_pandas(id)
    if start:
        out.index = out.index.astype(np.int64) + np.int64(start)
    return out


def whole(
    shards: list[ComponentStore], layout: Layout, kind: str, schema: Schema
) -> ComponentStore:
    """One :class:`~sparseset.ComponentStore` of every shard's rows (global ids).

    Examples
    --------
    >>> a = ComponentStore({"n": "i8"}); a.add([1], n=5)
    1
    >>> b = ComponentStore({"n": "i8"}); b.add([0], n=7)
    1
    >>> store = whole([a, b], Layout.range(2, space=10), "flat", a.schema)
    >>> store.ids.tolist(), store["n"].tolist()
    ([1, 5], [5, 7])
    """
    out = ComponentStore(schema, sum(len(shard) for shard in shards), index=kind)
    for k, shard in enumerate(shards):
        out.add(
            members(shard, layout.start(k)),
            **{name: shard[name] for name in shard.columns},
        )
    return out


def empty_frame(schema: Schema, id: str) -> Any:
    """An empty frame with the columns and dtypes :func:`frame` gives."""
    out = ComponentStore(schema).to_pandas(id)
    out.index = out.index.astype(np.int64)
    return out


# -- files -------------------------------------------------------------------


def column_key(name: str) -> str:
    """The name of column ``name``'s array in a shard file."""
    return f"column_{name}"


def save_shard(
    store: ComponentStore, path: str, k: int, layout: Layout, kind: str
) -> np.ndarray:
    """Write shard ``k`` (its global ids and every column) to ``path``,
    atomically; returns its length as a one-element array."""
    arrays = {"ids": members(store, layout.start(k)), "shard": np.int64(k)}
    for name in store.columns:
        arrays[column_key(name)] = store[name]
    io.save(path, SHARD_FORMAT, VERSION, arrays)
    return np.array([len(store)], np.int64)


def load_shard(
    path: str, k: int, layout: Layout, kind: str, expected: int, schema: Schema
) -> ComponentStore:
    """Read shard ``k`` back from ``path``, checking its ids as a saved
    set's are (:func:`~sparseset.distributed.shards.checked_ids`) and each
    column's dtype and shape against ``schema``;
    :class:`~sparseset.FormatError` if wrong."""
    arrays = read_shard(path, k, SHARD_FORMAT, "sharded store")
    local = checked_ids(path, arrays, k, layout, kind, expected)
    columns = {}
    for name, (dtype, shape) in schema.items():
        values = arrays.get(column_key(name))
        if (
            values is None
            or values.dtype != dtype
            or values.shape
            != (
                expected,
                *shape,
            )
        ):
            raise io.FormatError(
                f"{path!r} should hold column {name!r} as {expected} rows of "
                f"{dtype} {shape}, holds "
                + ("nothing" if values is None else f"{values.dtype} {values.shape}")
            )
        columns[name] = values
    store = ComponentStore(schema, expected, index=kind)
    store.add(local, **columns)
    if len(store) != expected:
        raise io.FormatError(f"{path!r} holds repeated ids")
    return store
