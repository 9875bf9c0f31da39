"""Recorded steps as Arrow tables, in memory or as a Parquet dataset.

Recording copies numpy arrays and nothing else (the hot path); Arrow
arrays are built from those copies when a table is first asked for or
when a Parquet sink flushes, zero-copy where Arrow allows. pyarrow is
imported then, never by ``import sparseset``.

A Parquet dataset is a directory::

    model/part-00000.parquet    the model table's rows of one flush
    agents/part-00000.parquet   the agent table's rows of one flush

Each file is written aside and renamed into place, so a reader of the
directory never sees half a file.
"""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..io.tabular import arrow_type, require, to_arrow_array
from .reporters import HANDLE, STEP


@dataclass
class AgentChunk:
    """One recorded step of the agent table: numpy copies, no Arrow yet."""

    step: int
    handles: np.ndarray
    values: list[np.ndarray]

    def __len__(self) -> int:
        return int(self.handles.shape[0])


@dataclass
class Buffer:
    """What was recorded and not yet built into Arrow (or flushed)."""

    steps: list[int] = field(default_factory=list)
    model: list[list[Any]] = field(default_factory=list)
    agents: list[AgentChunk] = field(default_factory=list)
    rows: int = 0

    def clear(self) -> None:
        """Forget everything buffered, O(1)."""
        self.steps = []
        self.model = []
        self.agents = []
        self.rows = 0


def _pyarrow() -> Any:
    return require("pyarrow", "Recorder tables")


def _field(name: str, dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    pa = _pyarrow()
    kind, metadata = arrow_type(dtype)
    for size in reversed(shape):
        kind = pa.list_(kind, size)
    return pa.field(name, kind, nullable=False, metadata=metadata)


def agent_schema(
    names: list[str], kinds: list[tuple[np.dtype, tuple[int, ...]]]
) -> Any:
    """The agent table's schema: step, handle, then each reporter's column.

    O(r) for r reporters.

    Examples
    --------
    >>> agent_schema(["w"], [(np.dtype("f8"), ())]).names
    ['step', 'handle', 'w']
    """
    pa = _pyarrow()
    fields = [
        pa.field(STEP, pa.int64(), nullable=False),
        pa.field(HANDLE, pa.int64(), nullable=False),
    ]
    fields += [_field(name, *kind) for name, kind in zip(names, kinds, strict=True)]
    return pa.schema(fields)


def agent_batch(chunk: AgentChunk, schema: Any) -> Any:
    """One recorded step of agents as a ``pyarrow.RecordBatch``, O(n) for n agents.

    Examples
    --------
    >>> chunk = AgentChunk(3, np.array([7, 9]), [np.array([0.5, 1.5])])
    >>> schema = agent_schema(["w"], [(np.dtype("f8"), ())])
    >>> agent_batch(chunk, schema).to_pydict()
    {'step': [3, 3], 'handle': [7, 9], 'w': [0.5, 1.5]}
    """
    pa = _pyarrow()
    steps = np.full(len(chunk), chunk.step, dtype=np.int64)
    arrays = [to_arrow_array(steps), to_arrow_array(chunk.handles)]
    arrays += [to_arrow_array(values) for values in chunk.values]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def model_table(names: list[str], steps: list[int], rows: list[list[Any]]) -> Any:
    """The model table of ``rows`` (one list of values per step), O(s * r).

    Each reporter's Arrow type is inferred from its values.

    Examples
    --------
    >>> model_table(["n"], [0, 2], [[5], [6]]).to_pydict()
    {'step': [0, 2], 'n': [5, 6]}
    """
    pa = _pyarrow()
    columns = {STEP: pa.array(steps, pa.int64())}
    for k, name in enumerate(names):
        columns[name] = pa.array([row[k] for row in rows])
    return pa.table(columns)


def concat(tables: list[Any], empty: Any) -> Any:
    """``tables`` end to end (``empty`` if there are none), O(1) per table.

    A model reporter whose values were ints in one part and floats in
    another reads back as floats.

    Examples
    --------
    >>> import pyarrow as pa
    >>> concat([pa.table({"a": [1]}), pa.table({"a": [2.5]})], None).to_pydict()
    {'a': [1.0, 2.5]}
    """
    pa = _pyarrow()
    if not tables:
        return empty
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive")


class Dataset:
    """A Parquet dataset directory a Recorder writes, one file per flush."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Use ``path``: created if missing, refused if it holds anything.

        O(1).

        Raises
        ------
        FileExistsError
            If ``path`` is a file or a directory that is not empty.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> d = Dataset(pathlib.Path(tempfile.mkdtemp()) / "run")
        >>> d.files("model")
        []
        """
        self.path = pathlib.Path(path)
        if self.path.exists() and (not self.path.is_dir() or any(self.path.iterdir())):
            raise FileExistsError(
                f"{str(self.path)!r} exists and is not an empty directory; a "
                "Recorder writes a new dataset (remove it or choose another path)"
            )
        for part in ("model", "agents"):
            (self.path / part).mkdir(parents=True, exist_ok=True)
        self.parts = 0

    def files(self, part: str) -> list[pathlib.Path]:
        """The Parquet files of ``part`` ("model" or "agents"), in order. O(f).

        Examples
        --------
        >>> import tempfile
        >>> Dataset(tempfile.mkdtemp()).files("agents")
        []
        """
        return sorted((self.path / part).glob("part-*.parquet"))

    def write(self, model: Any, agents: Any) -> None:
        """Write the next file of each table (``None``: none), atomically.

        O(rows) for the rows written.

        Examples
        --------
        >>> import tempfile, pyarrow as pa
        >>> d = Dataset(tempfile.mkdtemp()); d.write(pa.table({"a": [1]}), None)
        >>> [p.name for p in d.files("model")], d.files("agents")
        (['part-00000.parquet'], [])
        """
        pq = require("pyarrow.parquet", "Recorder(path=...)")
        for part, table in (("model", model), ("agents", agents)):
            if table is None:
                continue
            target = self.path / part / f"part-{self.parts:05d}.parquet"
            aside = target.with_suffix(".tmp")
            try:
                pq.write_table(table, aside)
                aside.replace(target)
            finally:
                aside.unlink(missing_ok=True)
        self.parts += 1

    def read(self, part: str, empty: Any) -> Any:
        """Every file of ``part`` as one table (``empty`` if none), O(rows).

        Examples
        --------
        >>> import tempfile, pyarrow as pa
        >>> d = Dataset(tempfile.mkdtemp()); d.read("model", pa.table({})).num_rows
        0
        """
        pq = require("pyarrow.parquet", "Recorder(path=...)")
        return concat([pq.read_table(f) for f in self.files(part)], empty)
