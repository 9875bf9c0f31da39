"""Schedule: systems with declared access, run batch after batch, each batch
in parallel.

A system is a function ``fn(world, **kwargs)`` and what it declares: the
components it reads and writes, the systems it must run after or before,
and whether it is structural (creates, destroys, adds or removes components
directly). :mod:`.order` turns the declarations into batches of systems that
may run at the same time; :meth:`Schedule.run` runs the batches one after
another, the systems of a batch on the calling thread and the library's
helper threads (:func:`sparseset.sets.pool.helpers`). Systems that spend
their time in ``@njit(nogil=True)`` code run truly in parallel.

Two arguments are the schedule's to give: a system that takes ``commands``
gets a :class:`~sparseset.world.commands.Commands` buffer, applied when its
batch ends (the batch's buffers in registration order), and the system's
own ``with world.deferred()`` blocks record into the same buffer; one that
takes ``changes`` gets a :class:`~sparseset.schedule.Changes`: a reader per
tracked component it declares, answering what changed since the system's
own previous run.
"""

from __future__ import annotations

import inspect
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..sets.interrupts import call_outside, critical
from ..sets.pool import helpers
from ..world.commands import Commands
from ..world.tracking import Reader
from . import order
from .order import Access

#: The arguments the schedule itself gives to the systems that take them.
INJECTED = ("commands", "changes")
#: A batch whose systems took less than this (seconds, all together) the
#: last time runs on the calling thread alone: a handoff to another thread
#: would cost more than the systems.
INLINE_SECONDS = 50e-6


class Scheduled(Protocol):
    """The world as a schedule sees it."""

    @property
    def components(self) -> tuple[str, ...]: ...

    def __getitem__(self, name: str) -> Any: ...

    def deferred(self) -> Commands: ...

    def deferring_into(self, buffer: Commands) -> AbstractContextManager[Commands]: ...

    def reader(self, name: str, *, include_present: bool = False) -> Reader: ...


@dataclass(frozen=True)
class System:
    """One registered system: its function, its declarations and the
    keyword arguments it accepts.

    Examples
    --------
    >>> def drag(world, dt, *, factor=0.9): ...
    >>> s = System.of(drag, Access("drag", frozenset({"vel"}), frozenset({"vel"})))
    >>> s.accepts, s.requires, s.takes_any
    (('dt', 'factor'), ('dt',), False)
    """

    fn: Callable[..., Any]
    access: Access
    #: The keyword arguments the function names, and those with no default.
    accepts: tuple[str, ...]
    requires: tuple[str, ...]
    #: Whether it takes ``**kwargs`` (then every run argument is given).
    takes_any: bool

    @property
    def name(self) -> str:
        """The system's name.

        O(1).
        """
        return self.access.name

    @classmethod
    def of(cls, fn: Callable[..., Any], access: Access) -> System:
        """Read ``fn``'s signature: the world first, then keyword arguments.

        Raises
        ------
        TypeError
            If the signature cannot be read, ``fn`` takes no positional
            argument for the world, or it has positional-only parameters after
            the world (the schedule passes everything else by keyword).

        Notes
        -----
        O(p) for p parameters of ``fn``.
        """
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"system {access.name!r}: cannot read the signature of {fn!r} "
                f"({error}); a system is a function fn(world, **kwargs)"
            ) from None
        params = list(signature.parameters.values())
        positional = (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.VAR_POSITIONAL,
        )
        if not params or params[0].kind not in (
            *positional,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            raise TypeError(
                f"system {access.name!r} takes no positional argument: a system is "
                "called fn(world, **kwargs), the world first"
            )
        rest = params[1:] if params[0].kind != inspect.Parameter.VAR_POSITIONAL else []
        named = [
            p
            for p in rest
            if p.kind
            in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        ]
        stray = [p.name for p in rest if p.kind == inspect.Parameter.POSITIONAL_ONLY]
        if stray:
            raise TypeError(
                f"system {access.name!r}: {stray} are positional-only, but the "
                "schedule passes everything after the world by keyword"
            )
        return cls(
            fn,
            access,
            tuple(p.name for p in named),
            tuple(p.name for p in named if p.default is inspect.Parameter.empty),
            any(p.kind == inspect.Parameter.VAR_KEYWORD for p in rest),
        )

    def arguments(self, given: dict[str, Any]) -> dict[str, Any]:
        """The run's keyword arguments this system accepts.

        Notes
        -----
        O(a + p) for the a keyword arguments of the run and the p the system
        accepts.
        """
        if self.takes_any:
            return dict(given)
        return {name: given[name] for name in self.accepts if name in given}


class Changes(Mapping[str, Reader]):
    """What changed since one system's previous run: a reader per tracked
    component the system reads or writes, committed each time the system
    returns without raising.

    On the system's first run every entity that has the component counts as
    added and changed (the system has seen none of them). ``changes[name]``
    of a component the system did not declare, or that is not tracked,
    raises ``KeyError`` saying which.

    Examples
    --------
    >>> from sparseset import World, Schedule
    >>> w = World(); w.register("pos", "f8", track=True); e = w.create(3)
    >>> w.add("pos", e)
    3
    >>> seen = []
    >>> sch = Schedule()
    >>> @sch.system(reads=("pos",))
    ... def regrid(world, changes):
    ...     seen.append(sorted(changes["pos"].changed().tolist()))
    >>> sch.run(w); w.touch("pos", e[1]); sch.run(w); sch.run(w); seen
    [[0, 1, 2], [1], []]
    """

    __slots__ = ("_declared", "_readers", "_system")

    def __init__(self, system: str, declared: frozenset[str]) -> None:
        self._system = system
        self._declared = declared
        self._readers: dict[str, Reader] = {}

    def open(self, world: Scheduled) -> None:
        """Make readers for the declared tracked components the world has
        and this has none for yet (registered since the last run).

        Notes
        -----
        O(c) for c declared components, each new reader O(1) to make (a
        first answer then holds the present members).
        """
        for name in sorted(self._declared - self._readers.keys()):
            if name in world.components and world[name].tracked:
                self._readers[name] = world.reader(name, include_present=True)

    def commit(self) -> None:
        """The system has seen everything so far.

        Notes
        -----
        O(r) for r readers, each commit O(1) plus its pruning of removal
        records.
        """
        for reader in self._readers.values():
            reader.commit()

    def close(self) -> None:
        """Stop reading (the world's removal records stop waiting).

        Notes
        -----
        O(r) for r readers.
        """
        for reader in self._readers.values():
            reader.close()

    def __getitem__(self, name: str) -> Reader:
        try:
            return self._readers[name]
        except KeyError:
            if name in self._declared:
                why = "is not tracked (register it with track=True) or not registered"
            else:
                why = "is not one the system reads or writes"
            raise KeyError(
                f"no changes of {name!r} for system {self._system!r}: the "
                f"component {why}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._readers)

    def __len__(self) -> int:
        return len(self._readers)

    def __repr__(self) -> str:
        return f"<sparseset Changes of system {self._system!r}: {list(self._readers)}>"


class Schedule:
    """Systems with declared access, run in batches of non-conflicting systems.

    Two systems conflict when one writes a component the other reads or
    writes, or either is ``structural``. Conflicting systems run in
    registration order unless ``after``/``before`` say otherwise; each
    system goes in the earliest batch after every system it must follow,
    and a batch's systems run in parallel. A run leaves the world as
    calling the systems one by one in that order would, with each batch's
    deferred commands applied when the batch ends.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import World, Schedule
    >>> w = World(); w.register("pos", "f8"); w.register("vel", "f8")
    >>> e = w.create(3); w.add("pos", e); w.add("vel", e, vel=[1.0, 2.0, 3.0])
    3
    3
    >>> sch = Schedule()
    >>> @sch.system(reads=("vel",), writes=("pos",))
    ... def move(world, dt):  # both stores hold e in the same order
    ...     world["pos"]["pos"][:] += world["vel"]["vel"] * dt
    >>> @sch.system(writes=("vel",), after=("move",))
    ... def drag(world, dt):
    ...     world["vel"]["vel"][:] *= 0.5
    >>> sch.batches
    [['move'], ['drag']]
    >>> sch.run(w, dt=0.5); w.get("pos", e)["pos"].tolist()
    [0.5, 1.0, 1.5]
    """

    def __init__(self) -> None:
        self._systems: list[System] = []
        self._plan: order.Plan | None = None
        self._seconds: dict[str, float] = {}
        # Per world: each system's Changes (made on first need).
        self._changes: weakref.WeakKeyDictionary[Any, dict[str, Changes]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    # -- building -----------------------------------------------------------

    def add(
        self,
        fn: Callable[..., Any],
        reads: Iterable[str] | str = (),
        writes: Iterable[str] | str = (),
        after: Iterable[str] | str = (),
        before: Iterable[str] | str = (),
        name: str | None = None,
        structural: bool = False,
    ) -> str:
        """Add system ``fn``, called ``fn(world, **kwargs)``; returns its name.

        Parameters
        ----------
        fn : callable
            Takes the world first, then the run's keyword arguments it names
            (all of them if it takes ``**kwargs``), plus ``commands`` (a
            deferred-command buffer applied when its batch ends) and
            ``changes`` (:class:`~sparseset.schedule.Changes`) if it names
            them.
        reads, writes : str or iterable of str
            The components it reads, and writes (writing implies reading).
        after, before : str or iterable of str
            Names of systems it must run after, or before (resolved when the
            batches are computed: a later system may be named).
        name : str, optional
            Defaults to ``fn.__name__``; names are unique.
        structural : bool, optional
            It creates, destroys, adds or removes components directly (not
            through ``commands``): it conflicts with every other system.

        Raises
        ------
        ValueError
            If the system has no name, its name is taken, or a name repeats in ``reads``
            or ``writes``.
        TypeError
            If ``fn`` is not callable, or ``reads``, ``writes``, ``after`` or ``before``
            is not a name or names.

        Notes
        -----
        O(s) for the s systems already in the schedule (the plan is rebuilt on the next
        run).

        Examples
        --------
        >>> from sparseset import Schedule
        >>> sch = Schedule()
        >>> sch.add(lambda world: None, reads="pos", name="show")
        'show'
        """
        label = name if name is not None else getattr(fn, "__name__", None)
        if not isinstance(label, str) or not label:
            raise ValueError(f"system {fn!r} has no name: pass name=")
        if any(system.name == label for system in self._systems):
            raise ValueError(
                f"a system called {label!r} is already in the schedule: pass name= "
                "to tell them apart"
            )
        if not callable(fn):
            raise TypeError(f"system {label!r}: {fn!r} is not callable")
        read = _names(reads, label, "reads")
        written = _names(writes, label, "writes")
        access = Access(
            label,
            reads=frozenset(read) | frozenset(written),
            writes=frozenset(written),
            after=_names(after, label, "after"),
            before=_names(before, label, "before"),
            structural=bool(structural),
        )
        system = System.of(fn, access)
        with self._lock:
            self._systems.append(system)
            self._plan = None
        return label

    def system(
        self,
        reads: Iterable[str] | str = (),
        writes: Iterable[str] | str = (),
        after: Iterable[str] | str = (),
        before: Iterable[str] | str = (),
        name: str | None = None,
        structural: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """:meth:`add` as a decorator; the function is returned unchanged.

        Raises
        ------
        ValueError
            As :meth:`add`, when the decorated function is registered.
        TypeError
            As :meth:`add`.

        Notes
        -----
        As :meth:`add`.

        O(s) for the s systems already in the schedule, as :meth:`add`.

        Examples
        --------
        >>> from sparseset import Schedule
        >>> sch = Schedule()
        >>> @sch.system(reads=("vel",), writes=("pos",))
        ... def move(world): ...
        >>> sch.names
        ['move']
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add(fn, reads, writes, after, before, name, structural)
            return fn

        return register

    # -- the order ----------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The systems' names, in registration order.

        O(s) for s systems.
        """
        return [system.name for system in self._systems]

    def __len__(self) -> int:
        return len(self._systems)

    def _planned(self) -> tuple[list[System], order.Plan]:
        with self._lock:
            systems = list(self._systems)
            if self._plan is None:
                self._plan = order.plan([s.access for s in systems])
            return systems, self._plan

    @property
    def batches(self) -> list[list[str]]:
        """The batches, in run order: lists of system names, each in
        registration order. Raises ``ValueError`` for an unknown name in
        ``after``/``before`` or a cycle.

        O(s**2) for s systems when the plan is rebuilt (after a change); O(s)
        afterwards.

        Raises
        ------
        ValueError
            If an ``after`` or ``before`` names no system, or the order asked
            for has a cycle.

        Examples
        --------
        >>> from sparseset import Schedule
        >>> sch = Schedule()
        >>> for name in ("a", "b", "c"):
        ...     sch.add(lambda world: None, reads="pos", name=name)
        'a'
        'b'
        'c'
        >>> sch.add(lambda world: None, writes="pos", name="w")
        'w'
        >>> sch.batches
        [['a', 'b', 'c'], ['w']]
        """
        systems, planned = self._planned()
        return [[systems[k].name for k in batch] for batch in planned.batches]

    def ambiguities(self) -> list[tuple[str, str]]:
        """Conflicting pairs that only registration orders (no ``after`` or
        ``before`` path between them), each pair and the list in
        registration order.

        Raises
        ------
        ValueError
            If an ``after`` or ``before`` names no system, or they form a cycle.

        Notes
        -----
        O(s**2) for s systems: every pair is compared.

        Examples
        --------
        >>> from sparseset import Schedule
        >>> sch = Schedule()
        >>> sch.add(lambda world: None, writes="pos", name="a")
        'a'
        >>> sch.add(lambda world: None, reads="pos", name="b")
        'b'
        >>> sch.add(lambda world: None, reads="pos", name="c", after="a")
        'c'
        >>> sch.ambiguities()
        [('a', 'b')]
        """
        systems, planned = self._planned()
        return [(systems[i].name, systems[j].name) for i, j in planned.ambiguities]

    def __repr__(self) -> str:
        return f"<sparseset Schedule: {len(self._systems)} systems>"

    # -- running ------------------------------------------------------------

    def run(self, world: Scheduled, threads: int | None = None, **kwargs: Any) -> None:
        """Run every system once, batch after batch.

        Parameters
        ----------
        world : World
            Passed first to every system.
        threads : int, optional
            Threads a batch runs on, the calling one included: default the
            cores this process may use; 1 runs every system on the caller,
            in order.
        **kwargs
            Given to each system that names them (or takes ``**kwargs``).

        A system that raises stops the run after its batch (the batch's
        other systems finish): its exception propagates with a note naming
        the system, and no deferred command of that batch is applied.
        Before anything runs, a system that needs an argument the run was
        not given raises ``TypeError``.

        Raises
        ------
        ValueError
            If ``threads`` is not a positive integer, a run argument is one the schedule
            gives (``commands``, ``changes``), an ``after`` or ``before`` names no
            system, or they form a cycle.
        TypeError
            If a system needs a run argument that was not given; nothing runs.
        Exception
            Whatever a system raises, after its batch ends, with a note naming the
            system; that batch's deferred commands are dropped.

        Notes
        -----
        The systems' own costs, batch by batch; planning is O(s**2) for s systems, and
        done again only after the schedule changes.

        Examples
        --------
        >>> from sparseset import World, Schedule
        >>> w = World(); w.register("hp", "i4"); e = w.create(3)
        >>> w.add("hp", e, hp=[5, 0, 2])
        3
        >>> sch = Schedule()
        >>> @sch.system(writes=("hp",))
        ... def burn(world, damage):
        ...     world["hp"]["hp"][:] -= damage
        >>> @sch.system(reads=("hp",), after=("burn",))
        ... def reap(world, commands):
        ...     store = world["hp"]
        ...     commands.destroy(store.ids[store["hp"] <= 0])
        >>> sch.run(w, damage=1); w.get("hp", w.entities)["hp"].tolist()
        [4, 1]
        """
        count = used_threads(threads)
        for reserved in INJECTED:
            if reserved in kwargs:
                raise ValueError(
                    f"{reserved!r} is the schedule's to give (to the systems that "
                    "take it), not a run argument"
                )
        systems, planned = self._planned()
        for system in systems:
            missing = [
                name
                for name in system.requires
                if name not in kwargs and name not in INJECTED
            ]
            if missing:
                raise TypeError(
                    f"system {system.name!r} needs {', '.join(map(repr, missing))}, "
                    "which run() was not given; nothing ran"
                )
        for batch in planned.batches:
            self._run_batch(world, [systems[k] for k in batch], count, kwargs)

    def _changes_of(self, world: Scheduled, system: System) -> Changes:
        with self._lock:
            per_world = self._changes.setdefault(world, {})
            changes = per_world.get(system.name)
            if changes is None:
                access = system.access
                changes = per_world[system.name] = Changes(system.name, access.reads)
        changes.open(world)
        return changes

    @critical  # Ctrl-C waits for the batch's end, but not inside a system
    def _run_batch(
        self,
        world: Scheduled,
        batch: list[System],
        threads: int,
        given: dict[str, Any],
    ) -> None:
        calls: list[tuple[System, dict[str, Any], Changes | None]] = []
        buffers: list[Commands] = []
        for system in batch:
            arguments = system.arguments(given)
            changes = None
            # Every system has a buffer: its own ``world.deferred()`` blocks
            # record into it too, applied when the batch ends.
            buffer = world.deferred()
            buffers.append(buffer)
            if "commands" in system.accepts:
                arguments["commands"] = buffer
            if "changes" in system.accepts:
                changes = arguments["changes"] = self._changes_of(world, system)
            calls.append((system, arguments, changes))
        errors: list[BaseException | None] = [None] * len(calls)

        def call(k: int) -> None:
            system, arguments, changes = calls[k]
            began = time.perf_counter()
            try:
                with world.deferring_into(buffers[k]):
                    call_outside(system.fn, world, **arguments)
            except BaseException as error:  # re-raised below, after the batch
                errors[k] = error
            else:
                if changes is not None:
                    changes.commit()
            self._seconds[system.name] = time.perf_counter() - began

        last = sum(self._seconds.get(system.name, 1.0) for system in batch)
        if threads <= 1 or len(calls) == 1 or last < INLINE_SECONDS:
            for k in range(len(calls)):
                call(k)
        else:
            _share(len(calls), min(threads, len(calls)), call)

        failed = [k for k, error in enumerate(errors) if error is not None]
        if failed:
            for buffer in buffers:
                buffer.drop()
            first = errors[failed[0]]
            assert first is not None
            first.add_note(f"in system {batch[failed[0]].name!r} of the schedule")
            if len(failed) > 1:
                others = ", ".join(repr(batch[k].name) for k in failed[1:])
                first.add_note(f"systems {others} of the same batch raised too")
            first.add_note("no deferred command of the batch was applied")
            raise first
        for k, buffer in enumerate(buffers):
            try:
                buffer.apply()
            except Exception:
                for rest in buffers[k + 1 :]:
                    rest.drop()
                raise


def _share(count: int, threads: int, call: Callable[[int], None]) -> None:
    """Run ``call(k)`` for every ``k < count`` on the calling thread and
    ``threads - 1`` helpers, each claiming the next ``k`` when free: a
    helper the OS does not run claims nothing, and the caller never waits
    for a call no thread has begun. ``call`` must not raise."""
    claim = threading.Lock()
    done = threading.Event()
    claimed = finished = 0

    def work() -> None:
        nonlocal claimed, finished
        while True:
            with claim:
                k = claimed
                claimed += 1
            if k >= count:
                return
            call(k)
            with claim:
                finished += 1
                if finished == count:
                    done.set()

    pool = helpers(threads - 1)
    for _ in range(threads - 1):
        pool.submit(work)
    work()
    done.wait()


def used_threads(threads: int | None) -> int:
    """The threads a run with ``threads=`` uses: ``threads`` checked, or
    the cores this process may use for None.

    Examples
    --------
    >>> used_threads(3), used_threads(None) >= 1
    (3, True)
    """
    if threads is None:
        return _cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads={threads!r}: expected a positive int, or None")
    return threads


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def _names(value: Iterable[str] | str, system: str, role: str) -> tuple[str, ...]:
    """A name or names, checked: strings, each once."""
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"system {system!r}: {role} holds {name!r}, which is not a name (str)"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"system {system!r}: {role} names one twice: {names!r}")
    return names


__all__ = [
    "INJECTED",
    "INLINE_SECONDS",
    "Changes",
    "Schedule",
    "Scheduled",
    "System",
    "used_threads",
]
