"""Ids in any of the forms a sharded set takes, as one 1-D dask array.

In-memory ids (numpy arrays, lists, scalars) are checked here, on the
client, before any task exists, with the same errors as
:class:`~sparseset.SparseSet`; a dask array or Series is checked for its
dtype and shape here and for its values inside the tasks that split it.
"""

from __future__ import annotations

import uuid
from typing import Any

import dask.array as da
import numpy as np
from dask.base import is_dask_collection
from dask.highlevelgraph import HighLevelGraph

from ..sets.ids import as_ids, reject_negative, reject_out_of_range
from ..sets.index_kinds import IndexKind


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
        return Ids(_checked(_series_values(ids)), False, None)
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
    # A random name: tokenizing the array would hash all of it.
    name = f"sparseset-ids-{uuid.uuid4().hex}"
    return Ids(da.from_array(arr, chunks="auto", name=name), scalar, arr)


def graph_of(name: str, layer: Any, dependencies: Any) -> HighLevelGraph:
    """``HighLevelGraph.from_collections``, typed loosely: dask's own
    collections do not satisfy its typing protocol (``mypy`` says so of
    ``dask.array.Array``), so the checks would only be noise here."""
    return HighLevelGraph.from_collections(name, layer, dependencies)


def _series_values(series: Any) -> da.Array:
    """A dask Series' values as a dask array, one block per partition
    (their lengths unknown until computed)."""
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_integer_dtype(dtype):
        raise TypeError(f"ids must be integers, got a Series of dtype {dtype}")
    if not isinstance(dtype, np.dtype):
        # A nullable or pyarrow integer column: as numpy integers (a
        # partition holding a null raises when it is computed).
        series = series.astype(np.dtype(str(dtype).split("[")[0].lower()))
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
