"""Ids in any of the forms a sharded set takes, as one 1-D dask array.

In-memory ids (numpy arrays, lists, scalars) are checked here, on the
client, before any task exists, with the same errors as
:class:`~sparseset.SparseSet`; a dask array or Series is checked for its
dtype and shape here and for its values inside the tasks that split it.

An in-memory array of :data:`SCATTER_BYTES` or more, when a
``distributed`` client is the scheduler dask would use, is sent to the
workers with ``client.scatter`` (block by block, spread over them) rather
than carried inside the task graph: the graph stays small (no "Sending
large graph" warning) and no block passes through the scheduler.
Scattered data has no lineage: a worker lost with a block of it loses
the block (see :func:`in_dask`).
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import dask.array as da
import numpy as np
from dask.base import get_scheduler, is_dask_collection
from dask.highlevelgraph import HighLevelGraph

from ..sets.ids import as_ids, reject_negative, reject_out_of_range
from ..sets.index_kinds import IndexKind

#: In-memory inputs of at least this many bytes are scattered to the
#: workers when a distributed client computes (smaller ones ride in the
#: graph, where they keep their lineage). dask warns of graphs past 10 MB.
SCATTER_BYTES = 1 << 20


class Ids:
    """Ids as a dask array: ``array``; ``scalar`` if they were one id;
    ``values`` the numpy array when they came from memory (else None)."""

    __slots__ = ("array", "scalar", "values")

    def __init__(self, array: da.Array, scalar: bool, values: np.ndarray | None):
        self.array = array
        self.scalar = scalar
        self.values = values

    def offsets(self) -> list[int | None]:
        """Where each block starts in the batch (None where unknown)."""
        sizes = self.array.chunks[0]
        out: list[int | None] = []
        total: float = 0
        for size in sizes:
            out.append(None if np.isnan(total) else int(total))
            total += size
        return out


def as_dask_ids(ids: Any, add_to: IndexKind | None = None) -> Ids:
    """``ids`` as a 1-D integer dask array, with the checks that can run now.

    With ``add_to``, in-memory ids are also checked against that index
    kind's range, as ``SparseSet.add`` checks them.

    Examples
    --------
    >>> as_dask_ids([3, 1]).array.compute().tolist()
    [3, 1]
    >>> as_dask_ids([3, -1])
    Traceback (most recent call last):
    ...
    ValueError: ids must be non-negative: ids[1] = -1
    """
    if isinstance(ids, da.Array):
        return Ids(_checked(ids), False, None)
    if is_dask_collection(ids) and hasattr(ids, "to_dask_array"):
        if getattr(ids, "ndim", 1) != 1:
            raise ValueError(
                "ids must be a dask array or a dask Series (one column), "
                f"not a {type(ids).__name__}"
            )
        return Ids(_checked(series_values(ids)), False, None)
    if is_dask_collection(ids):
        raise TypeError(
            f"ids must be a dask array or Series, not a {type(ids).__name__}"
        )
    arr, scalar = as_ids(ids)
    reject_negative(arr, scalar)
    if add_to is not None and arr.size:
        reject_out_of_range(
            arr, add_to.limit, add_to.name, scalar, ids, add_to.hint(int(arr.max()))
        )
    return Ids(in_dask(arr), scalar, arr)


def active_client() -> Any:
    """The ``distributed.Client`` dask would compute with now, or None
    (no client, or another scheduler chosen with ``dask.config.set``).

    Examples
    --------
    >>> import dask
    >>> with dask.config.set(scheduler="sync"):
    ...     active_client() is None
    True
    """
    scheduler = get_scheduler()
    owner = getattr(scheduler, "__self__", None)
    if owner is None:
        return None
    from distributed import Client

    return owner if isinstance(owner, Client) else None


def in_dask(values: np.ndarray, chunks: Any = "auto") -> da.Array:
    """An in-memory array as a dask array, blocks of ``chunks`` along its
    first axis (``"auto"``: dask's choice), whole along the others.

    With a distributed client active and :data:`SCATTER_BYTES` or more,
    the blocks are scattered to the workers (spread over them) and the
    graph names them; else the array rides in the graph. Either way the
    name is random: tokenizing the array would hash all of it.

    Examples
    --------
    >>> in_dask(np.arange(6), chunks=((4, 2),)).chunks
    ((4, 2),)
    """
    if chunks == "auto":
        chunks = da.core.normalize_chunks(
            ("auto", *values.shape[1:]), values.shape, dtype=values.dtype
        )
    else:
        chunks = (tuple(chunks[0]), *((n,) for n in values.shape[1:]))
    client = active_client() if values.nbytes >= SCATTER_BYTES else None
    if client is None:
        name = f"sparseset-input-{uuid.uuid4().hex}"
        kept: da.Array = da.from_array(values, chunks=chunks, name=name)
        return kept
    edges = np.concatenate([[0], np.cumsum(chunks[0])]).astype(np.int64)
    blocks = [values[a:b] for a, b in itertools.pairwise(edges.tolist())]
    futures = client.scatter(blocks, hash=False)
    scattered: da.Array = da.concatenate(
        [
            da.from_delayed(future, shape=block.shape, dtype=block.dtype)
            for future, block in zip(futures, blocks, strict=True)
        ]
    )
    return scattered


def graph_of(name: str, layer: Any, dependencies: Any) -> HighLevelGraph:
    """``HighLevelGraph.from_collections``, typed loosely: dask's own
    collections do not satisfy its typing protocol (``mypy`` says so of
    ``dask.array.Array``), so the checks would only be noise here."""
    return HighLevelGraph.from_collections(name, layer, dependencies)


def series_values(series: Any, what: str = "ids") -> da.Array:
    """A dask Series' values as a dask array, one block per partition
    (their lengths unknown until computed). ``what`` the series is, for
    the error: ``"ids"`` must be integers, other columns numbers or bools.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> frame = dd.from_pandas(pd.DataFrame({"n": [1, 2, 3]}), npartitions=2)
    >>> series_values(frame["n"]).compute().tolist()
    [1, 2, 3]
    >>> series_values(frame["n"].astype(float))
    Traceback (most recent call last):
    ...
    TypeError: ids must be integers, got a Series of dtype float64
    """
    import pandas as pd

    dtype = series.dtype
    integer = pd.api.types.is_integer_dtype(dtype)
    if what == "ids" and (pd.api.types.is_bool_dtype(dtype) or not integer):
        raise TypeError(f"ids must be integers, got a Series of dtype {dtype}")
    if what != "ids" and not (
        integer
        or pd.api.types.is_float_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
    ):
        raise TypeError(f"{what}: a Series of dtype {dtype} is not numbers")
    if not isinstance(dtype, np.dtype):
        # A nullable or pyarrow integer column: as numpy integers (a
        # partition holding a null raises when it is computed).
        plain = getattr(dtype, "numpy_dtype", None)
        series = series.astype(np.dtype(plain or str(dtype).split("[")[0].lower()))
    values: da.Array = series.to_dask_array()
    return values


def _checked(arr: da.Array) -> da.Array:
    if arr.ndim != 1:
        raise ValueError(
            f"ids must be a 1-D array, got a {arr.ndim}-D dask array "
            f"of shape {arr.shape}"
        )
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError("ids must be integers, not bool")
    if kind not in "iu":
        raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
    return arr
