"""Deferred commands: structural changes collected now, applied later as batches.

A :class:`Commands` buffer takes ``create``, ``destroy``, ``add``,
``add_at``, ``remove``, ``discard`` and ``clear`` calls and applies them in order at
its :meth:`Commands.apply`: the end of a ``with world.deferred() as cmd:``
block, or the end of the call whose hooks made them (see :mod:`.hooks`).
Runs of the same command on the same component become one batch call, so
a system that despawns entities one at a time while it walks a view pays
for one ``destroy``.

``@njit`` systems record into the buffer's twin, :attr:`Commands.jit` (a
:class:`~sparseset.jit.commands.CommandBuffer`): ``destroy(h)``,
``add("name", h)`` (with one value per column, or zero-filled),
``remove("name", h)`` and ``discard("name", h)``. What they recorded joins
the buffer's commands, in order, before the next command Python records
and when the buffer is applied; from there on it is applied exactly as
those are (batches, hooks, change tracking, the same errors).

``create(n)`` hands out its handles at once: the world holds their indexes
(neither alive nor free) until the buffer is applied, when they come alive,
or dropped, when they die unused. A held handle is dead to every other call
until then, and stays dead forever if the buffer is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Protocol

import numpy as np

from ..jit.commands import (
    ADD_VALUES,
    DESTROY,
    OP_NAMES,
    CommandBuffer,
    discard_recorded,
    make_command_buffer,
    take_recorded,
)
from ..sets.ids import as_ids
from ..sets.interrupts import critical


class Target(Protocol):
    """What a buffer applies its commands to: a World."""

    def __getitem__(self, name: str) -> Any: ...

    @property
    def components(self) -> tuple[str, ...]: ...

    def destroy(self, handles: Any) -> int: ...


#: Hold ``n`` entity indexes, returning their handles; bring held handles
#: to life; drop held handles (they die unused).
Hold = Callable[[int], np.ndarray]
Settle = Callable[[np.ndarray], None]
#: A reentrant lock: the world's.
Lock = AbstractContextManager[Any]
#: One recorded command: ``(op, component, handles, columns)``.
Command = tuple[str, str, np.ndarray, dict[str, Any]]


class Commands:
    """A buffer of structural changes to a world, applied in order, as batches.

    Made by :meth:`World.deferred <sparseset.World.deferred>` (or by a hook's
    triggering call); not constructed directly.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("hp", "i4"); e = w.create(3)
    >>> with w.deferred() as cmd:
    ...     new = cmd.create(2)
    ...     cmd.add("hp", new, hp=[7, 8])
    ...     cmd.destroy(e[0])
    ...     len(w), bool(w.alive(new[0]))  # nothing applied yet
    (3, False)
    >>> len(w), w.get("hp", new)["hp"].tolist()
    (4, [7, 8])
    """

    __slots__ = (
        "_admit",
        "_buffer",
        "_commands",
        "_hold",
        "_layout",
        "_lock",
        "_owned",
        "_release",
        "_world",
    )

    def __init__(
        self, world: Target, lock: Lock, hold: Hold, admit: Settle, release: Settle
    ) -> None:
        self._world = world
        #: The world's lock: held while entities are held, applied or dropped.
        self._lock = lock
        self._hold, self._admit, self._release = hold, admit, release
        #: ``(op, component, handles, columns)`` in call order.
        self._commands: list[Command] = []
        #: Applied by its owner (a schedule's batch), not at a block's end.
        self._owned = False
        #: The twin compiled code records into, once asked for, and the
        #: components it knows: ``(name, columns)`` by slot.
        self._buffer: CommandBuffer | None = None
        self._layout: list[tuple[str, tuple[str, ...]]] = []

    def __len__(self) -> int:
        # Compiled code's records count as the commands they become: one
        # per run of the same command on the same component.
        self._collect()
        return len(self._commands)

    @property
    def jit(self) -> CommandBuffer:
        """The buffer's twin for ``@njit`` systems: what they record there
        is applied with the buffer, in order with what Python records.

        O(c) for c components the first time (an empty buffer); O(1) afterwards.

        In compiled code: ``buf.destroy(h)``, ``buf.add("name", h)`` (new
        rows zero-filled), ``buf.add("name", h, v0, v1, ...)`` (one value
        per column, in schema order), ``buf.remove("name", h)``,
        ``buf.discard("name", h)`` and ``len(buf)``; ``h`` is a handle or,
        except with values, a 1-D array of handles. Component names are
        string literals, checked when the system compiles against the
        components registered when this was first asked for. Handles are
        checked when applied, as the Python commands' are. The same
        twin each time (``cmd.jit is cmd.jit``); its type is one numba
        caches, so a ``@njit(cache=True)`` system compiles once per
        machine. See :mod:`sparseset.jit.commands`.

        Examples
        --------
        >>> from numba import njit
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e, hp=[5, 0, 7])
        3
        >>> @njit
        ... def despawn_dead(hp, handles, buf):
        ...     for k in range(hp.shape[0]):
        ...         if hp[k] <= 0:
        ...             buf.destroy(handles[k])
        >>> with w.deferred() as cmd:
        ...     despawn_dead(w["hp"]["hp"], w["hp"].ids, cmd.jit)
        >>> w.alive(e).tolist()
        [True, False, True]
        """
        if self._buffer is None:
            stores = [(name, self._world[name]) for name in self._world.components]
            self._layout = [(name, tuple(store.schema)) for name, store in stores]
            self._buffer = make_command_buffer(
                [(name, list(store.schema.values())) for name, store in stores]
            )
        return self._buffer

    def _collect(self) -> None:
        """Move what compiled code recorded into the commands, in order:
        one command per run of the same op on the same component."""
        if self._buffer is None or len(self._buffer) == 0:
            return
        records, values = take_recorded(self._buffer)
        ops, slots = records[:, 0], records[:, 1]
        cuts = np.flatnonzero((ops[1:] != ops[:-1]) | (slots[1:] != slots[:-1])) + 1
        for start, stop in zip(
            [0, *cuts.tolist()], [*cuts.tolist(), len(records)], strict=True
        ):
            op, slot = int(ops[start]), int(slots[start])
            handles = np.ascontiguousarray(records[start:stop, 2])
            if op == DESTROY:
                self._commands.append(("destroy", "", handles, {}))
                continue
            name, columns = self._layout[slot]
            cast = {}
            if op == ADD_VALUES:
                rows = records[start:stop, 3]
                cast = {col: values[slot][k][rows] for k, col in enumerate(columns)}
            self._commands.append((OP_NAMES[op], name, handles, cast))

    def __repr__(self) -> str:
        return f"<sparseset Commands: {len(self._commands)} pending>"

    # -- recording ----------------------------------------------------------

    @critical  # holds entities: Ctrl-C must not come between hold and record
    def create(self, n: int) -> np.ndarray:
        """``n`` new entities, alive once the buffer is applied; their
        handles now (int64), for the buffer's other commands.

        Raises
        ------
        TypeError
            If ``n`` is not an integer.
        ValueError
            If ``n`` is negative.

        Notes
        -----
        O(n), amortised.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World()
        >>> with w.deferred() as cmd:
        ...     e = cmd.create(2)
        >>> w.alive(e).tolist()
        [True, True]
        """
        self._collect()
        with self._lock:
            handles = self._hold(n)
        self._commands.append(("create", "", handles, {}))
        return handles

    def destroy(self, handles: Any) -> None:
        """Destroy entities when the buffer is applied (as
        :meth:`World.destroy <sparseset.World.destroy>`; a handle destroyed
        twice in one run of destroys counts once).

        Raises
        ------
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles to record; applying it costs what
        :meth:`sparseset.World.destroy` costs.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); e = w.create(2)
        >>> with w.deferred() as cmd:
        ...     cmd.destroy(e[0]); cmd.destroy(e[0])
        >>> w.alive(e).tolist()
        [False, True]
        """
        self._record("destroy", "", handles, {})

    def add(self, name: str, handles: Any, /, **columns: Any) -> None:
        """Give entities component ``name`` when the buffer is applied (as
        ``world[name].add``). The component and the values are checked
        now: a bad one raises here and records nothing.

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.
        UnknownColumnError
            If a keyword names a column the component does not have.
        ValueError
            If a value cannot be cast to its column or broadcast to the handles.

        Notes
        -----
        O(k) for k handles to record (the values are cast now); applying it costs what
        ``world[name].add`` costs.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hp", "i4"); e = w.create(1)
        >>> with w.deferred() as cmd:
        ...     cmd.add("hp", e, hp=5)
        >>> w.get("hp", e[0])["hp"].item()
        5
        """
        self._record("add", name, handles, columns)

    def add_at(self, name: str, handles: Any, /, **columns: Any) -> None:
        """Accumulate values into component ``name`` when the buffer is
        applied (as ``world[name].add_at``: a repeated handle adds each
        time, and a run of these is one call).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.
        UnknownColumnError
            If a keyword names a column the component does not have.
        ValueError
            If a value cannot be cast to its column or broadcast to the handles.

        Notes
        -----
        O(k) for k handles to record; applying it costs what ``world[name].add_at``
        costs.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("hits", "i4"); e = w.create(1)
        >>> with w.deferred() as cmd:
        ...     cmd.add_at("hits", e, hits=1); cmd.add_at("hits", e, hits=2)
        >>> w.get("hits", e[0])["hits"].item()
        3
        """
        self._record("add_at", name, handles, columns)

    def remove(self, name: str, handles: Any) -> None:
        """Take component ``name`` from entities when the buffer is applied
        (as ``world[name].remove``: they must have it then).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles to record; applying it raises as ``world[name].remove`` does,
        for an entity that lacks the component then.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(1); w.add("tag", e)
        1
        >>> with w.deferred() as cmd:
        ...     cmd.remove("tag", e)
        >>> bool(w.has("tag", e[0]))
        False
        """
        self._record("remove", name, handles, {})

    def discard(self, name: str, handles: Any) -> None:
        """Take component ``name`` from those of the entities that have it
        when the buffer is applied (as ``world[name].discard``).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.
        TypeError
            If a handle is not an integer.
        ValueError
            If a handle is negative or the handles are not one-dimensional.

        Notes
        -----
        O(k) for k handles to record.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); e = w.create(2); w.add("tag", e[0])
        1
        >>> with w.deferred() as cmd:
        ...     cmd.discard("tag", e)
        >>> len(w["tag"])
        0
        """
        self._record("discard", name, handles, {})

    def clear(self, name: str) -> None:
        """Take component ``name`` from every entity when the buffer is
        applied (as ``world[name].clear``).

        Raises
        ------
        UnknownComponentError
            If ``name`` was never registered.

        Notes
        -----
        O(1) to record; applying it costs what ``world[name].clear`` costs.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); w.register("tag"); w.add("tag", w.create(2))
        2
        >>> with w.deferred() as cmd:
        ...     cmd.clear("tag")
        >>> len(w["tag"])
        0
        """
        self._world[name]  # an unknown component raises here
        self._collect()
        self._commands.append(("clear", name, np.empty(0, np.int64), {}))

    @critical
    def _record(
        self, op: str, name: str, handles: Any, columns: Mapping[str, Any]
    ) -> None:
        ids, _ = as_ids(handles)
        ids = np.array(ids, np.int64)  # a copy: later edits of theirs don't reach us
        cast = {}
        if name:
            store = self._world[name]
            cast = {col: store.cast(ids.shape[0], col, v) for col, v in columns.items()}
        self._collect()
        self._commands.append((op, name, ids, cast))

    # -- applying -----------------------------------------------------------

    @critical  # all or nothing for Ctrl-C (see sets.interrupts)
    def apply(self) -> None:
        """Apply the commands in order, a run of the same command on the
        same component (and columns) as one batch, and empty the buffer.

        A command that raises stops the rest: the commands before it stay
        applied, the entities of later ``create`` commands die unused, and
        the error propagates with a note naming the command.

        Raises
        ------
        Exception
            Whatever the first failing command raises (a dead handle, a missing
            component), with a note naming the command; the commands before it stay
            applied.

        Notes
        -----
        The sum of the recorded commands' costs, a run of the same command on the same
        component applied as one batch.

        O(r) for r recorded rows, plus what each command costs on the world:
        a run of the same command on the same component is applied as one
        batch call.
        """
        with self._lock:  # one step for other threads
            self._collect()
            self._apply(self._commands)

    def _apply(self, commands: list[Command]) -> None:
        self._commands = []
        k = 0
        try:
            while k < len(commands):
                op, name, _, columns = commands[k]
                stop = k + 1
                while stop < len(commands) and (
                    commands[stop][:2] == (op, name)
                    and commands[stop][3].keys() == columns.keys()
                ):
                    stop += 1
                self._apply_run(commands[k:stop])
                k = stop
        except Exception as error:
            op, name = commands[k][:2]
            what = f"{op}({name!r}, ...)" if name else f"{op}(...)"
            error.add_note(f"while applying the deferred command {what}")
            self._drop(commands[k:])
            raise

    def _apply_run(self, run: list[Command]) -> None:
        op, name = run[0][:2]
        handles = np.concatenate([command[2] for command in run])
        if op == "create":
            self._admit(handles)
        elif op == "destroy":
            self._world.destroy(handles)
        elif op in ("add", "add_at"):
            columns = {
                col: np.concatenate([command[3][col] for command in run])
                for col in run[0][3]
            }
            if op == "add":
                self._world[name].add(handles, **columns)
            else:
                self._world[name].add_at(handles, **columns)
        elif op == "remove":
            self._world[name].remove(handles)
        elif op == "discard":
            self._world[name].discard(handles)
        else:
            self._world[name].clear()

    @critical
    def drop(self) -> None:
        """Forget every command; the entities of ``create`` die unused.

        Notes
        -----
        O(c) for c recorded commands.

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); cmd = w.deferred(); e = cmd.create(1); cmd.drop()
        >>> len(w), bool(w.alive(e[0]))
        (0, False)
        """
        if self._buffer is not None:
            discard_recorded(self._buffer)
        commands, self._commands = self._commands, []
        self._drop(commands)

    def _drop(self, commands: list[Command]) -> None:
        held = [command[2] for command in commands if command[0] == "create"]
        if held:
            with self._lock:
                self._release(np.concatenate(held))

    # -- as a context manager ------------------------------------------------

    def __enter__(self) -> Commands:
        return self

    @critical
    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # A block that raised changes nothing: its commands are dropped.
        if kind is not None:
            self.drop()
        elif not self._owned:
            self.apply()

    def owned(self) -> Commands:
        """Mark this buffer as applied by its owner (``apply()``, ``drop()``),
        never at the end of a ``with`` block (a block that raises still
        drops it, with what was recorded before the block): how a
        :class:`~sparseset.Schedule` keeps a system's deferred commands
        for the end of its batch. Returns the buffer.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> from sparseset import World
        >>> w = World(); cmd = w.deferred().owned()
        >>> with cmd:
        ...     e = cmd.create(1)
        >>> len(w), len(cmd)
        (0, 1)
        >>> cmd.apply(); len(w)
        1
        """
        self._owned = True
        return self


__all__ = ["Commands", "Target"]
