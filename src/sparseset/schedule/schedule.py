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

A batch's systems and the kernels they call compete for the same cores:
a big lookup shares its spans over numba's thread count, and so does a
``prange`` loop. So each batch chooses who gets the run's threads
(:data:`MODES`: the systems side by side, the kernels, both, or neither)
by what each way cost the last times it ran (:class:`Choice`), and a
run's ``threads`` caps them all: ``threads=1`` runs everything, kernels
included, on the calling thread. A run on N threads thereby costs what
the fastest way costs on this machine now, plus a rare re-trial of the
others (the load on the cores changes).

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
import statistics
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numba

from ..sets.interrupts import call_outside, critical, numba_threads, set_numba_threads
from ..sets.pool import helpers, share_out, shared
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

#: The ways a batch can use a run's threads, which :class:`Choice` picks
#: from by what each cost the last times: ``"systems"``, the batch's systems
#: side by side, each one's kernels on its own thread; ``"both"``, side by
#: side, and a big lookup's spans claimed by whichever thread is free;
#: ``"kernels"``, the systems one after another on the caller, each big
#: lookup shared over the threads; ``"one"``, everything on the caller.
MODES = ("systems", "both", "kernels", "one")
#: A way that lost waits this many runs of its batch before it is tried
#: again, twice as long after each loss, up to :data:`RETRY_MAX`: the
#: cores' load changes (another process starts or stops), so losers are
#: re-measured, rarely enough to cost little.
RETRY_RUNS = 8
RETRY_MAX = 128
#: And long enough that re-trying a way costs the batch at most this share
#: of its time, on average: a way that cost twice the best waits 50 runs.
RETRY_SHARE = 0.02
#: Each way is tried this many times before the cheapest is kept, and a
#: way's cost is the median of its last SAMPLES runs.
FIRST_TRIALS = 3
SAMPLES = 5
#: The way a batch keeps changes only for one that cost this share less:
#: ways within the noise of each other do not take turns.
SWITCH_MARGIN = 0.05


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


@dataclass
class Choice:
    """How one batch uses a run's threads: each way's (:data:`MODES`) recent
    costs, and when each losing way is tried again.

    :meth:`pick` answers the way to run next: first each way
    :data:`FIRST_TRIALS` times, in turn, then the cheapest, except that a
    losing way is tried again after :data:`RETRY_RUNS` runs (twice as long
    after each loss, and long enough that its re-trials cost
    :data:`RETRY_SHARE` of the batch's time; at most :data:`RETRY_MAX`). A
    way's cost is the median of its last :data:`SAMPLES` runs: a run that
    another process interrupted does not condemn a way, and a lucky run
    does not crown one (on busy cores the threaded ways vary most). So a
    batch settles on what is fastest on this machine, and follows when the
    load changes.

    Examples
    --------
    >>> c = Choice(("kernels", "one"))
    >>> for cost in (2.0, 1.0, 2.5, 1.5, 2.2, 1.2):
    ...     c.record(c.pick(), cost)
    >>> c.seconds, c.best
    ({'kernels': 2.2, 'one': 1.2}, 'one')
    >>> [c.pick() for _ in range(3)]
    ['one', 'one', 'one']
    """

    modes: tuple[str, ...]
    #: Each way's last :data:`SAMPLES` costs (seconds), oldest first.
    samples: dict[str, list[float]] = field(default_factory=dict)
    #: Runs of the batch since each way last ran, and how many a loser
    #: waits from its last run (:data:`RETRY_RUNS` unless it lost in a row).
    idle: dict[str, int] = field(default_factory=dict)
    wait: dict[str, int] = field(default_factory=dict)
    #: The way the batch keeps (run when no loser is due a re-trial).
    kept: str = ""

    @property
    def seconds(self) -> dict[str, float]:
        """Each measured way's cost: the median of its recent runs.

        O(m) for m ways.
        """
        return {
            m: statistics.median(self.samples[m])
            for m in self.modes
            if m in self.samples
        }

    @property
    def best(self) -> str:
        """The way the batch keeps: the one that cost least, unless the way
        kept so far cost at most :data:`SWITCH_MARGIN` more (the first way
        before any is measured).

        O(1).
        """
        return self.kept or self.modes[0]

    def pick(self) -> str:
        """The way to run the batch this time.

        O(m) for m ways.
        """
        tried = [len(self.samples.get(m, ())) for m in self.modes]
        if min(tried) < FIRST_TRIALS:
            return self.modes[tried.index(min(tried))]
        best = self.best
        for mode in self.modes:
            if mode != best and self.idle[mode] >= self.wait.get(mode, RETRY_RUNS):
                return mode
        return best

    def record(self, mode: str, seconds: float) -> None:
        """The batch ran ``mode`` and took ``seconds``.

        O(m) for m ways.
        """
        if mode not in self.modes:  # not one of this batch's ways
            return
        kept = self.samples.setdefault(mode, [])
        kept.append(seconds)
        del kept[:-SAMPLES]
        for other in self.modes:
            self.idle[other] = self.idle.get(other, 0) + 1
        self.idle[mode] = 0
        costs = self.seconds
        cheapest = min(costs, key=costs.__getitem__)
        if self.kept not in costs or (
            costs[cheapest] < (1.0 - SWITCH_MARGIN) * costs[self.kept]
        ):
            self.kept = cheapest
        best = self.kept
        if best == mode:
            self.wait.pop(mode, None)
        else:
            # Each loss in a row doubles the wait before the next trial,
            # and a big loss waits long enough to cost little.
            doubled = 2 * self.wait.get(mode, RETRY_RUNS // 2)
            excess = costs[mode] / max(costs[best], 1e-9) - 1.0
            wait = max(doubled, int(excess / RETRY_SHARE))
            self.wait[mode] = min(wait, RETRY_MAX)


@contextmanager
def kernel_threads(count: int) -> Iterator[None]:
    """While the block runs, this thread's big lookups (and its ``prange``
    loops) use at most ``count`` threads: numba's thread count, which the
    library's lookups follow, is per thread.

    Examples
    --------
    >>> with kernel_threads(1):
    ...     numba.get_num_threads()
    1
    """
    before = numba_threads()
    most: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    count = max(1, min(count, most))
    if count == before:
        yield
        return
    set_numba_threads(count)
    try:
        yield
    finally:
        set_numba_threads(before)


def in_spans(count: int, work: Callable[[int, int], object]) -> None:
    """Run ``work(start, stop)`` over spans covering ``range(count)``, on
    the threads this caller's kernels may use: a system's own loop shared
    as the library shares a big lookup.

    A batch of at least :data:`~sparseset.config.PARALLEL_THRESHOLD` rows
    is cut into spans that the calling thread and the library's helper
    threads claim one at a time (:func:`sparseset.sets.pool.share_out`);
    a smaller one runs as one call, ``work(0, count)``, on the caller. How
    many threads is numba's thread count for this thread, which a
    :class:`~sparseset.Schedule` sets per batch
    (:attr:`~sparseset.Schedule.modes`): the run's
    threads when the batch's kernels get the cores, one when its systems
    run side by side or everything runs on the caller. So a system that
    cuts its loop with ``in_spans`` is as fast on one thread as the plain
    loop, and shares it when the schedule finds that pays.

    ``work`` must release the GIL to gain from the threads (call a kernel
    compiled with ``@njit(nogil=True)``), must touch only its span's rows,
    and should not raise: the first error a span raised is re-raised here,
    after every span has run.

    Parameters
    ----------
    count : int
        Rows to cover.
    work : callable
        ``work(start, stop)`` does rows ``start`` to ``stop - 1``; what it
        returns is ignored.

    Raises
    ------
    ValueError
        If ``count`` is negative.

    Notes
    -----
    O(count) work in all, as the serial loop, over the threads that take
    part, plus a few microseconds a span; a thread the OS does not run
    claims no span, so on busy cores the caller does the work itself
    (and the library stops sharing for a while when it waits on a late
    thread).

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit(nogil=True)
    ... def double(x):
    ...     for k in range(x.shape[0]):
    ...         x[k] *= 2.0
    >>> x = np.ones(300_000)
    >>> in_spans(x.shape[0], lambda start, stop: double(x[start:stop]))
    >>> float(x.sum())
    600000.0
    """
    if count < 0:
        raise ValueError(f"count={count!r}: expected a count of rows, >= 0")

    def span(start: int, stop: int) -> bool:
        work(start, stop)
        return False

    if shared(count):
        share_out(count, span)
    elif count:
        work(0, count)


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
        # Per world: the systems whose declared components it was found to
        # have (a world never loses a component, so they stay checked).
        self._checked: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        # Per batch (its systems' names) and thread count: how it runs best;
        # and the way each batch ran last.
        self._choices: dict[tuple[tuple[str, ...], int], Choice] = {}
        self._ran: dict[tuple[str, ...], str] = {}

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
            Each must be a component of the world the schedule runs on:
            :meth:`run` raises ``ValueError`` naming any that is not (a typo
            would otherwise drop the order it should make).
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
            Threads a batch runs on, the calling one included, its systems'
            big lookups and ``prange`` loops included: default the cores
            this process may use; 1 runs everything on the caller, the
            systems in order. With more, each batch runs the way that cost
            least the last times (see :attr:`modes` and the ways in
            ``sparseset.schedule.schedule.MODES``).
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
            system, they form a cycle, or a system ``reads`` or ``writes`` a component
            the world does not have (checked once per world and system, before
            anything runs; the message names each).
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
        self._check_components(world, systems)
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
        # The run's threads cap its kernels' too (one thread: the caller's).
        with kernel_threads(count):
            for batch in planned.batches:
                self._run_batch(world, [systems[k] for k in batch], count, kwargs)

    def _check_components(self, world: Scheduled, systems: list[System]) -> None:
        """Raise ``ValueError`` naming every component a system declares
        that ``world`` does not have (a typo would otherwise drop the order
        it should make); each system is checked once per world."""
        if self._checked.get(world, 0) >= len(systems):
            return
        have = set(world.components)
        unknown = [
            f"system {system.name!r} {role} {name!r}"
            for system in systems
            for role, names in (
                ("writes", system.access.writes),
                ("reads", system.access.reads - system.access.writes),
            )
            for name in sorted(names - have)
        ]
        if unknown:
            raise ValueError(
                f"{'; '.join(unknown)}, but the world has no such component "
                f"(its components: {list(world.components)}); register it first, "
                "or fix the name; nothing ran"
            )
        self._checked[world] = len(systems)

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
        choice = None
        if threads <= 1 or last < INLINE_SECONDS:
            mode = "one"
        else:
            choice = self._choice_of(batch, threads)
            mode = choice.pick()
        self._ran[tuple(system.name for system in batch)] = mode
        # A batch too small to share runs on the caller as the run's cap
        # has it: changing numba's thread count costs more than it.
        cap = 1 if choice is not None and mode in ("one", "systems") else threads
        began = time.perf_counter()
        try:
            with kernel_threads(cap):
                if mode in ("one", "kernels"):
                    for k in range(len(calls)):
                        call(k)
                else:
                    # The longest first (by their last run): the batch then
                    # ends about when its longest system does, not when it
                    # started last.
                    order = sorted(
                        range(len(calls)),
                        key=lambda k: -self._seconds.get(batch[k].name, 0.0),
                    )
                    _share(
                        len(calls),
                        min(threads, len(calls)),
                        lambda k: call(order[k]),
                        cap,
                    )
                if mode != "systems":
                    self._end_batch(batch, buffers, errors)
            if mode == "systems":  # the buffers' batches may share lookups
                self._end_batch(batch, buffers, errors)
        finally:
            # A system that kept its buffer gets an error, not a command
            # that is never applied.
            for buffer in buffers:
                buffer.close()
        if choice is not None:
            choice.record(mode, time.perf_counter() - began)

    def _choice_of(self, batch: list[System], threads: int) -> Choice:
        key = (tuple(system.name for system in batch), threads)
        with self._lock:
            choice = self._choices.get(key)
            if choice is None:
                # One system has nothing to run beside it; on one core (or
                # numba's one thread) a lookup's spans have no other core.
                most: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
                spans = min(threads, cores(), most) > 1
                modes: tuple[str, ...] = MODES if spans else ("systems", "one")
                if len(batch) == 1:
                    modes = ("kernels", "one") if spans else ("one",)
                choice = self._choices[key] = Choice(modes)
            return choice

    @property
    def modes(self) -> list[str]:
        """How each batch ran last time, in run order: one of
        the ways in ``sparseset.schedule.schedule.MODES`` (``""`` before its
        first run), the way of using the threads the batch has settled on or
        is trying again.

        Raises
        ------
        ValueError
            As :attr:`batches`.

        Notes
        -----
        O(s) for s systems, once the batches are planned.

        Examples
        --------
        >>> from sparseset import Schedule, World
        >>> sch = Schedule(); sch.add(lambda world: None, name="a")
        'a'
        >>> sch.modes
        ['']
        >>> sch.run(World(), threads=1); sch.modes
        ['one']
        """
        return [self._ran.get(tuple(names), "") for names in self.batches]

    @staticmethod
    def _end_batch(
        batch: list[System],
        buffers: list[Commands],
        errors: list[BaseException | None],
    ) -> None:
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


def _share(count: int, threads: int, call: Callable[[int], None], kernels: int) -> None:
    """Run ``call(k)`` for every ``k < count`` on the calling thread and
    ``threads - 1`` helpers, each claiming the next ``k`` when free: a
    helper the OS does not run claims nothing, and the caller never waits
    for a call no thread has begun. ``call`` must not raise. A helper's
    calls share their big lookups over at most ``kernels`` threads
    (:func:`kernel_threads`), as the caller's do."""
    if threads <= 1:
        for k in range(count):
            call(k)
        return
    claim = threading.Lock()
    done = threading.Event()
    claimed = finished = 0

    def helper() -> None:
        with kernel_threads(kernels):
            work()

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
        pool.submit(helper)
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
        return cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads={threads!r}: expected a positive int, or None")
    return threads


def cores() -> int:
    """The cores this process may run on.

    Examples
    --------
    >>> cores() >= 1
    True
    """
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
    "FIRST_TRIALS",
    "INJECTED",
    "INLINE_SECONDS",
    "MODES",
    "RETRY_MAX",
    "RETRY_RUNS",
    "RETRY_SHARE",
    "SAMPLES",
    "SWITCH_MARGIN",
    "Changes",
    "Choice",
    "Schedule",
    "Scheduled",
    "System",
    "cores",
    "in_spans",
    "kernel_threads",
    "used_threads",
]
