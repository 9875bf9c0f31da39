"""Recorder: Mesa's DataCollector for a World.

Per recorded step, a row of named scalars (the model table) and, for
every agent, a row of named values (the agent table). Recording copies
the columns as numpy arrays and does nothing else: a column of a million
agents costs one copy of it, plus its handles when the agents changed
since the last record (otherwise the previous handles array is reused).
Arrow arrays are built from the copies when a table is asked for, or
when a Parquet sink flushes (:mod:`.tables`).
"""

from __future__ import annotations

import importlib
import operator
import os
import pathlib
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import numpy as np

from ..io.tabular import require
from ..world import World
from . import tables
from .reporters import (
    AgentReporter,
    agent_components,
    agent_reporters,
    checked_values,
    model_reporters,
)

#: What a frame may be read as.
KINDS = ("pandas", "polars", "arrow")
#: Agent rows (plus one per step) a Parquet sink buffers before it writes a file.
FLUSH_ROWS = 1 << 22

RowKind = tuple[np.dtype, tuple[int, ...]]


def _world_of(source: Any) -> World:
    if isinstance(source, World):
        return source
    world = getattr(source, "world", None)
    if isinstance(world, World):
        return world
    raise TypeError(
        "Recorder takes a World or a model whose .world is a World, not "
        f"{type(source).__name__}"
    )


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a positive int, not {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be a positive int, not {value!r}") from None
    if number < 1:
        raise ValueError(f"{what} must be a positive int, not {number}")
    return number


class Recorder:
    """Record a World's state every ``every`` steps, as Mesa's DataCollector.

    Parameters
    ----------
    source : World or model
        The world to record, or a model object whose ``.world`` is a
        World: model reporters are then called with the model.
    every : int, optional
        Record the steps ``0, every, 2 * every, ...``; :meth:`collect`
        does nothing on the others.
    model : dict, optional
        Model reporters, ``name -> reporter``: one scalar per recorded
        step. A reporter is a callable of ``source``, or the name of an
        attribute of ``source`` (a method is called with no arguments).
    agents : dict, optional
        Agent reporters, ``name -> reporter``: one value per agent. A
        reporter is a column, named by a one-column component's name
        (``"wealth"``), a column name only one component has,
        ``"component.column"`` or a ``(component, column)`` tuple; or a
        callable ``f(source, handles)`` returning an array with one row
        per handle.
    of : str or sequence of str, optional
        The components whose entities are the agents, besides those the
        agent reporters name. The agents are the entities holding all of
        them (a view), in its order; with none named, every live entity.
    path : str or os.PathLike, optional
        Write a Parquet dataset there (a directory, created if missing,
        which must be empty) instead of keeping the tables in memory:
        ``model/part-*.parquet`` and ``agents/part-*.parquet``, one file
        of each per flush.
    flush_rows : int, optional
        With ``path``: write a file once this many agent rows (plus one
        per step) are waiting.

    Raises
    ------
    TypeError
        If ``source`` is not a World or a model holding one, ``every`` or
        ``flush_rows`` is not an int, or a reporter is of no known form.
    ValueError
        If ``every`` or ``flush_rows`` is not positive, a reporter names a
        component or column the world lacks (the message lists those it
        has), or a reporter is named ``"step"`` (or ``"handle"``).
    FileExistsError
        If ``path`` is a file or a directory that is not empty.

    Notes
    -----
    O(r + c) to make, for r reporters and c components. The tables have
    a ``step`` column; the agent table a ``handle`` column next, then the
    reporters in the order given.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Recorder, World
    >>> w = World(); w.register("wealth", "i8")
    >>> e = w.create(3); w.add("wealth", e, wealth=1)
    3
    >>> rec = Recorder(w, model={"total": lambda w: w["wealth"]["wealth"].sum()},
    ...                agents={"wealth": "wealth"})
    >>> rec.collect()
    True
    >>> w["wealth"]["wealth"][0] += 1
    >>> rec.collect()
    True
    >>> rec.model_frame(kind="arrow").to_pydict()
    {'step': [0, 1], 'total': [3, 4]}
    >>> rec.agent_frame().groupby("step")["wealth"].max().tolist()
    [1, 2]
    """

    def __init__(
        self,
        source: Any,
        every: int = 1,
        model: Mapping[str, Any] | None = None,
        agents: Mapping[str, Any] | None = None,
        *,
        of: Any = None,
        path: str | os.PathLike[str] | None = None,
        flush_rows: int = FLUSH_ROWS,
    ) -> None:
        world = _world_of(source)
        self._source = source
        self._world = world
        self._every = _positive(every, "every")
        self._flush_rows = _positive(flush_rows, "flush_rows")
        self._model = model_reporters(model)
        self._agents = agent_reporters(agents, world)
        self._components = agent_components(of, self._agents, world)
        self._view = (
            world.view(*self._components) if len(self._components) > 1 else None
        )
        # Each agent column's dtype and row shape: a component's from its
        # schema, a callable's from its first non-empty answer.
        self._kinds: list[RowKind | None] = []
        for reporter in self._agents:
            if reporter.component is None:
                self._kinds.append(None)
            else:
                assert reporter.column is not None
                schema = world[reporter.component].schema
                self._kinds.append(schema[reporter.column])
        self._key: Any = None
        self._handles = np.empty(0, dtype=np.int64)
        self._next = 0
        self._recorded: list[int] = []
        self._buffer = tables.Buffer()
        # In memory: the model rows stay in the buffer, the agent steps
        # already built into Arrow are here.
        self._batches: list[Any] = []
        self._dataset = None if path is None else tables.Dataset(path)
        self._closed = False

    # -- recording ------------------------------------------------------------

    @property
    def world(self) -> World:
        """The recorded world, O(1).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> w = World(); Recorder(w).world is w
        True
        """
        return self._world

    @property
    def every(self) -> int:
        """Record one step in ``every``, O(1).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> Recorder(World(), every=5).every
        5
        """
        return self._every

    @property
    def path(self) -> pathlib.Path | None:
        """The Parquet dataset's directory, None in memory; O(1).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> Recorder(World()).path is None
        True
        """
        return None if self._dataset is None else self._dataset.path

    @property
    def steps(self) -> np.ndarray:
        """The steps recorded so far, in order (a new int64 array), O(s).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> rec = Recorder(World(), every=2)
        >>> [rec.collect() for _ in range(5)]
        [True, False, True, False, True]
        >>> rec.steps.tolist()
        [0, 2, 4]
        """
        return np.array(self._recorded, dtype=np.int64)

    def collect(self, step: int | None = None) -> bool:
        """Record this step if it is one in ``every``; once per step.

        Parameters
        ----------
        step : int, optional
            The step's number, greater than the previous call's; by
            default the previous call's plus one (the first is 0).

        Returns
        -------
        bool
            Whether the step was recorded (``step % every == 0``).

        Raises
        ------
        RuntimeError
            If the recorder was closed.
        TypeError
            If ``step`` is not an int.
        ValueError
            If ``step`` is negative or not greater than the previous
            call's, a model reporter returns anything but a scalar, or an
            agent callable returns the wrong number of rows or another
            dtype or row shape than at its first record. Whatever a
            reporter raises propagates with a note naming it. A failed
            call records nothing.

        Notes
        -----
        O(n) for n agents per column: a numpy copy of each column (a
        gather when the agents are a view of several components), and of
        the handles if the agents changed since the last record. Arrow
        arrays are built later, when read or flushed.

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> w = World(); w.register("x", "f4"); w.add("x", w.create(2), x=0.5)
        2
        >>> rec = Recorder(w, agents={"x": "x"})
        >>> rec.collect(step=10), rec.collect(step=11), rec.steps.tolist()
        (True, True, [10, 11])
        """
        if self._closed:
            raise RuntimeError("this Recorder is closed; make a new one to record")
        if step is None:
            number = self._next
        else:
            if isinstance(step, bool):
                raise TypeError(f"step must be an int, not {step!r}")
            try:
                number = operator.index(step)
            except TypeError:
                raise TypeError(f"step must be an int, not {step!r}") from None
            if number < self._next:
                previous = "0 or more" if self._next == 0 else f"> {self._next - 1}"
                raise ValueError(
                    f"step {number} does not follow the previous one: steps "
                    f"must be {previous}"
                )
        if number % self._every:
            self._next = number + 1
            return False
        row = [reporter.report(self._source) for reporter in self._model]
        chunk = self._capture(number) if self._agents or self._components else None
        # Everything is computed: only now does the record change.
        self._next = number + 1
        self._recorded.append(number)
        self._buffer.steps.append(number)
        self._buffer.model.append(row)
        self._buffer.rows += 1
        if chunk is not None:
            self._buffer.agents.append(chunk)
            self._buffer.rows += len(chunk)
        if self._dataset is not None and self._buffer.rows >= self._flush_rows:
            self.flush()
        return True

    def _capture(self, step: int) -> tables.AgentChunk:
        """The agents' handles and each agent reporter's values, copies."""
        world = self._world
        rows: dict[str, np.ndarray] | None = None
        if self._view is not None:
            handles = self._view.ids
            rows = {name: self._view.rows(name) for name in self._components}
        elif self._components:
            store = world[self._components[0]]
            key = store.state_key()
            if key != self._key:
                # The members or their order changed: new handles. Else the
                # previous array (read-only, never written) serves again.
                self._handles, self._key = store.ids, key
            handles = self._handles
        else:
            handles = world.entities
        values = []
        kinds = list(self._kinds)
        for k, reporter in enumerate(self._agents):
            if reporter.call is None:
                assert reporter.component is not None and reporter.column is not None
                column = world[reporter.component][reporter.column]
                if rows is None:
                    values.append(column.copy())
                else:
                    values.append(column[rows[reporter.component]])
                continue
            values.append(self._called(reporter, handles, kinds, k))
        self._kinds = kinds
        return tables.AgentChunk(step, handles, values)

    def _called(
        self,
        reporter: AgentReporter,
        handles: np.ndarray,
        kinds: list[RowKind | None],
        k: int,
    ) -> np.ndarray:
        assert reporter.call is not None
        try:
            answer = reporter.call(self._source, handles)
        except Exception as error:
            error.add_note(f"in agent reporter {reporter.name!r}")
            raise
        values = checked_values(reporter, answer, handles.shape[0])
        kind = (values.dtype, values.shape[1:])
        expected = kinds[k]
        if expected is None:
            if values.shape[0]:
                kinds[k] = kind
        elif kind != expected:
            if values.shape[0] == 0 and values.shape[1:] == expected[1]:
                return values.astype(expected[0])
            raise ValueError(
                f"agent reporter {reporter.name!r} returned dtype {kind[0]} with "
                f"rows of shape {kind[1]}; its first record had dtype "
                f"{expected[0]} with rows of shape {expected[1]}"
            )
        return values

    # -- Arrow, Parquet -------------------------------------------------------

    def _agent_schema(self) -> Any:
        kinds = [
            kind if kind is not None else (np.dtype(np.float64), ())
            for kind in self._kinds
        ]
        return tables.agent_schema([r.name for r in self._agents], kinds)

    def _built_agents(self) -> list[Any]:
        """The buffered agent steps as record batches; empty steps add none."""
        schema = self._agent_schema()
        batches = [
            tables.agent_batch(chunk, schema)
            for chunk in self._buffer.agents
            if len(chunk)
        ]
        self._buffer.agents = []
        return batches

    def _model_of(self, steps: list[int], rows: list[list[Any]]) -> Any:
        return tables.model_table([r.name for r in self._model], steps, rows)

    def flush(self) -> None:
        """Write what is buffered to the Parquet dataset; in memory, build it.

        With ``path``, one Parquet file of each table, holding the steps
        recorded since the last flush (none if nothing was); in memory,
        the buffered steps become Arrow arrays (as reading does).

        Notes
        -----
        O(m) for the m rows buffered.

        Examples
        --------
        >>> import tempfile
        >>> from sparseset import Recorder, World
        >>> rec = Recorder(World(), model={"n": len}, path=tempfile.mkdtemp())
        >>> rec.collect(); rec.flush(); [p.name for p in (rec.path / "model").iterdir()]
        True
        ['part-00000.parquet']
        """
        if self._dataset is None:
            self._batches.extend(self._built_agents())
            return
        if not self._buffer.steps:
            return
        pa = require("pyarrow", "Recorder tables")
        model = self._model_of(self._buffer.steps, self._buffer.model)
        agents = None
        if self._agents or self._components:
            batches = self._built_agents()
            if batches:
                agents = pa.Table.from_batches(batches, schema=self._agent_schema())
        self._dataset.write(model, agents)
        self._buffer.clear()

    def close(self) -> None:
        """Flush, and record no more (the tables stay readable).

        O(m) for the m rows buffered.

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> with Recorder(World(), model={"n": len}) as rec:
        ...     rec.collect()
        True
        >>> rec.model_frame(kind="arrow").num_rows
        1
        """
        if not self._closed:
            self.flush()
            self._closed = True

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def model_table(self) -> Any:
        """The model table as a ``pyarrow.Table``: ``step``, then the reporters.

        Raises
        ------
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        O(s * r) for s recorded steps and r model reporters (read back
        from the files with ``path``).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> rec = Recorder(World(), model={"n": len}); rec.collect()
        True
        >>> rec.model_table().column_names
        ['step', 'n']
        """
        if self._dataset is None:
            return self._model_of(self._buffer.steps, self._buffer.model)
        self.flush()
        return self._dataset.read("model", self._model_of([], []))

    def agent_table(self) -> Any:
        """The agent table as a ``pyarrow.Table``: ``step``, ``handle``, reporters.

        One row per agent per recorded step, in the agents' order.

        Raises
        ------
        ImportError
            If pyarrow is not installed.

        Notes
        -----
        O(m) for the m rows not yet built into Arrow; those built before
        are reused without a copy (read back from the files with ``path``).

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> w = World(); w.register("x", "f8"); w.add("x", w.create(2), x=1.5)
        2
        >>> rec = Recorder(w, agents={"x": "x"}); rec.collect()
        True
        >>> rec.agent_table().to_pydict()["x"]
        [1.5, 1.5]
        """
        pa = require("pyarrow", "Recorder tables")
        schema = self._agent_schema()
        empty = schema.empty_table()
        if self._dataset is None:
            self.flush()
            if not self._batches:
                return empty
            return pa.Table.from_batches(self._batches, schema=schema)
        self.flush()
        return self._dataset.read("agents", empty)

    def model_frame(self, kind: str = "pandas") -> Any:
        """The model table as a pandas or polars frame (or ``"arrow"``: a table).

        Raises
        ------
        ValueError
            If ``kind`` is not ``"pandas"``, ``"polars"`` or ``"arrow"``.
        ImportError
            If the library is not installed.

        Notes
        -----
        O(s * r), as :meth:`model_table`, plus the conversion.

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> rec = Recorder(World(), model={"n": len}); rec.collect()
        True
        >>> rec.model_frame(kind="polars").columns
        ['step', 'n']
        """
        return _frame(self.model_table, kind)

    def agent_frame(self, kind: str = "pandas") -> Any:
        """The agent table as a pandas or polars frame (or ``"arrow"``: a table).

        Raises
        ------
        ValueError
            If ``kind`` is not ``"pandas"``, ``"polars"`` or ``"arrow"``.
        ImportError
            If the library is not installed.

        Notes
        -----
        O(m) for m rows, as :meth:`agent_table`, plus the conversion.

        Examples
        --------
        >>> from sparseset import Recorder, World
        >>> w = World(); w.register("x", "f8"); w.add("x", w.create(2), x=1.5)
        2
        >>> rec = Recorder(w, agents={"x": "x"}); rec.collect()
        True
        >>> rec.agent_frame().columns.tolist()
        ['step', 'handle', 'x']
        """
        return _frame(self.agent_table, kind)

    def __repr__(self) -> str:
        where = "memory" if self._dataset is None else str(self._dataset.path)
        return (
            f"Recorder(every={self._every}, model={[r.name for r in self._model]}, "
            f"agents={[r.name for r in self._agents]}, steps={len(self._recorded)}, "
            f"in {where})"
        )


def _frame(table: Any, kind: str) -> Any:
    if kind not in KINDS:
        raise ValueError(
            f"kind must be one of {', '.join(map(repr, KINDS))}, not {kind!r}"
        )
    if kind == "arrow":
        return table()
    if kind == "pandas":
        require("pandas", f"kind={kind!r}")
        return table().to_pandas()
    try:
        polars = importlib.import_module("polars")
    except ImportError:
        raise ImportError('kind="polars" needs polars: pip install polars') from None
    return polars.from_arrow(table())
