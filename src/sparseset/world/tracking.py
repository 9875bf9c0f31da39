"""Change tracking: which entities got, changed or lost a component, per reader.

A component registered with ``track=True`` stamps its rows from the world's
clock: ``_stamps[:, 0]`` when the entity got the component, ``_stamps[:, 1]``
when its row was last written through a declared write (an add, ``set``,
``add_at``, ``touch``). Both are uint16, in one column the rows carry (4
bytes per row), so every row move (swap-and-pop, a group's packing, a sort)
keeps them with their entity. A removal (``remove``, ``discard``,
``destroy``, ``clear``) appends the entities' handles to the component's
:class:`RemovalLog`.
Untracked components have none of it.

A :class:`Reader` remembers the clock at its last commit, ``since``; its
answers are the rows stamped, and the removals logged, after it. Committing
sets ``since`` to the clock and moves the clock on, so each event reaches
each reader exactly once: every later stamp is past every commit. A log
keeps its records until every open reader of the component has committed
past them (a reader that is closed or collected stops counting).

Writes through plain column views (``store[name][k] = ...``, a group's
arrays, a twin's columns) are not seen: declare them with ``touch``.

``@njit`` code changes a component through its twin, out of the world's
sight: a twin's ``add`` leaves the new row's stamps 0 and its ``touch``
sets the changed stamp to 0 ("written, not yet stamped"), and a tracked
component's twin logs the handles its ``remove`` takes. A reader settles
these (:meth:`EntityStore.settle`) before it answers or commits: the
stamps take the clock then, so each event still reaches each reader once.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

import numpy as np

from .. import kernels
from ..stores.component_store import STAMP_DTYPE

#: The clock runs to this, then every stamp is renumbered (see
#: :meth:`Tracker.rebase`): stamps are uint16, so a world renumbers once
#: every 65,534 commits, a pass over its tracked rows.
TICK_LIMIT = int(np.iinfo(STAMP_DTYPE).max) - 1

#: How many readers a world may hold open at once: a renumbering gives
#: each reader's two marks a value and the stamps between them another,
#: and all of them must fit below :data:`TICK_LIMIT`.
MAX_READERS = (TICK_LIMIT - 2) // 4


class Stamped(Protocol):
    """A tracked store as the tracker sees it."""

    @property
    def name(self) -> str: ...

    def rows_after(self, since: int, changed: bool) -> np.ndarray:
        """Positions of the members added (or, ``changed``, written) after
        clock ``since``."""
        ...

    def handles_at(self, rows: np.ndarray) -> np.ndarray:
        """The handles of the members at ``rows``."""
        ...

    def restamp(self, squeeze: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace every stamp ``t`` by ``squeeze(t)`` (the clock's rebase)."""
        ...

    def settle(self) -> None:
        """Stamp and log what ``@njit`` code did through the twin."""
        ...

    def contains(self, ids: Any) -> Any: ...


class RemovalLog:
    """The handles that lost a component, each batch with the clock of its
    removal (one clock per batch: a batch's records share it).

    Examples
    --------
    >>> log = RemovalLog(); log.append(np.array([7, 9]), 3)
    >>> log.append(np.array([4]), 5)
    >>> log.since(3).tolist(), log.prune(3), len(log)
    ([4], 2, 1)
    """

    __slots__ = ("count", "ends", "handles", "ticks")

    def __init__(self) -> None:
        self.handles = np.empty(0, np.int64)
        self.count = 0
        #: Each batch's end in ``handles`` and its clock, in clock order.
        self.ends: list[int] = []
        self.ticks: list[int] = []

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        """Bytes held by the records (and their spare room)."""
        return int(self.handles.nbytes) + 16 * len(self.ends)

    def append(self, handles: np.ndarray, tick: int) -> None:
        """Record ``handles`` as removed at ``tick``."""
        end = self.count + handles.shape[0]
        if end > self.handles.shape[0]:
            # Huge-page aligned: a batch of a million removals would
            # otherwise fault its new records in a 4 KiB page at a time.
            size = max(end, 2 * self.handles.shape[0], 16)
            grown = kernels.allocation.empty(size, np.int64)
            grown[: self.count] = self.handles[: self.count]
            self.handles = grown
        self.handles[self.count : end] = handles
        self.count = end
        if self.ticks and self.ticks[-1] == tick:
            self.ends[-1] = end
        else:
            self.ends.append(end)
            self.ticks.append(tick)

    def _first_after(self, tick: int) -> tuple[int, int]:
        """The first batch past ``tick`` and where its records start."""
        k = bisect.bisect_right(self.ticks, tick)
        return k, self.ends[k - 1] if k else 0

    def since(self, tick: int) -> np.ndarray:
        """The handles removed after ``tick``."""
        _, start = self._first_after(tick)
        return self.handles[start : self.count]

    def prune(self, tick: int) -> int:
        """Drop the records at or before ``tick``; how many."""
        k, gone = self._first_after(tick)
        if gone:
            kept = self.count - gone
            self.handles[:kept] = self.handles[gone : self.count]
            self.count = kept
            self.ends = [end - gone for end in self.ends[k:]]
            self.ticks = self.ticks[k:]
        return gone

    def rebase(self, squeeze: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace every batch's clock ``t`` by ``squeeze(t)``."""
        if self.ticks:
            squeezed = squeeze(np.array(self.ticks, np.int64)).tolist()
            # Batches squeezed to one clock merge: their order is kept.
            ends: list[int] = []
            ticks: list[int] = []
            for end, tick in zip(self.ends, squeezed, strict=True):
                if ticks and ticks[-1] == tick:
                    ends[-1] = end
                else:
                    ends.append(end)
                    ticks.append(tick)
            self.ends, self.ticks = ends, ticks


class Tracker:
    """A world's clock, and the readers and removal logs of its tracked
    components.

    Examples
    --------
    >>> tracker = Tracker(); tracker.tick
    1
    >>> tracker.advance(), tracker.tick
    (1, 2)
    """

    __slots__ = ("_logs", "_readers", "_stores", "tick")

    def __init__(self) -> None:
        #: The clock: stamps written now take this value.
        self.tick = 1
        self._logs: dict[str, RemovalLog] = {}
        self._readers: dict[str, weakref.WeakSet[Reader]] = {}
        self._stores: dict[str, Stamped] = {}

    def track(self, name: str, store: Stamped) -> None:
        """Track component ``name`` (its store stamps its rows itself)."""
        self._logs[name] = RemovalLog()
        self._readers[name] = weakref.WeakSet()
        self._stores[name] = store

    def log(self, name: str) -> RemovalLog:
        """Component ``name``'s removal records."""
        return self._logs[name]

    def removed(self, name: str, handles: np.ndarray) -> None:
        """Record that ``handles`` lost component ``name`` now (only while a
        reader of it is open: no reader, nothing to keep)."""
        if not handles.shape[0] or not self._readers[name]:
            return
        log = self._logs[name]
        if log.count + handles.shape[0] > log.handles.shape[0]:
            self.prune(name)  # before growing: readers may have gone
        log.append(handles, self.tick)

    def open(self, name: str, reader: Reader) -> int:
        """Register a new reader of ``name``; the ``since`` it starts from.

        Raises ``RuntimeError`` if :data:`MAX_READERS` are open already.
        """
        held = sum(len(readers) for readers in self._readers.values())
        if held >= MAX_READERS:
            raise RuntimeError(
                f"this world holds {held} open readers, the most it can: "
                "close those no system reads any more (reader.close())"
            )
        # The clock first: a renumbering it sets off reads every registered
        # reader's marks, which this one has not yet.
        now = self.advance()
        self._readers[name].add(reader)
        return now

    def advance(self) -> int:
        """The clock now, moved on so that every later stamp is past it."""
        if self.tick >= TICK_LIMIT:
            self.rebase()
        now = self.tick
        self.tick += 1
        return now

    def forget(self, name: str, reader: Reader) -> None:
        """``reader`` no longer counts for ``name``'s records."""
        self._readers[name].discard(reader)
        self.prune(name)

    def prune(self, name: str) -> None:
        """Drop the records every open reader of ``name`` has committed past."""
        readers = self._readers[name]
        log = self._logs[name]
        log.prune(min((r.removals_since for r in readers), default=self.tick))

    def rebase(self) -> None:
        """Renumber the clock, every stamp and every reader's ``since`` so
        that the clock never passes the stamps' type.

        Only how a stamp compares with each reader's ``since`` matters, so
        each value becomes its rank among them: the ``j``-th smallest
        ``since`` becomes ``2j``, and a stamp between the ``j``-th and the
        next becomes ``2j + 1``. The clock then restarts just past the
        largest, however long the world has run.
        """
        for store in self._stores.values():
            store.settle()  # a twin's "not yet stamped" 0 must not be renumbered
        readers = [r for group in self._readers.values() for r in group]
        marks = [r.since for r in readers] + [r.opened for r in readers]
        sinces = np.unique(np.array(marks, np.int64))

        def squeeze(ticks: np.ndarray) -> np.ndarray:
            below = np.searchsorted(sinces, ticks, side="left")
            equal = below < sinces.shape[0]
            equal[equal] = sinces[below[equal]] == ticks[equal]
            squeezed: np.ndarray = 2 * below + 1 + equal
            return squeezed

        for store in self._stores.values():
            store.restamp(squeeze)
        for log in self._logs.values():
            log.rebase(squeeze)
        for reader in readers:
            reader.since = 2 * int(np.searchsorted(sinces, reader.since)) + 2
            reader.opened = 2 * int(np.searchsorted(sinces, reader.opened)) + 2
        self.tick = 2 * sinces.shape[0] + 1


class Reader:
    """What happened to one component since this reader's last commit.

    Made by :meth:`World.reader <sparseset.World.reader>`. ``added()``,
    ``changed()`` and ``removed()`` answer int64 handles, no repeats, order
    not promised, for the events after the reader was made or last
    committed; :meth:`commit` moves it past everything it could see. A
    reader made with ``include_present=True`` also answers, until its first
    commit, every entity that has the component when it is made, as added
    and changed (what a system running for the first time has not seen).

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("pos", "f8", track=True); r = w.reader("pos")
    >>> e = w.create(3); w.add("pos", e, pos=0.0)
    3
    >>> r.added().tolist(), r.changed().tolist(), r.removed().tolist()
    ([0, 1, 2], [0, 1, 2], [])
    >>> r.commit(); w.remove("pos", e[0]); w.set("pos", e[1], pos=2.0)
    1
    >>> r.added().tolist(), r.changed().tolist(), r.removed().tolist()
    ([], [1], [0])
    """

    __slots__ = (
        "__weakref__",
        "_lock",
        "_store",
        "_tracker",
        "name",
        "opened",
        "since",
    )

    def __init__(
        self,
        tracker: Tracker,
        store: Stamped,
        lock: Any,
        include_present: bool = False,
    ) -> None:
        self._tracker: Tracker | None = tracker
        self._store = store
        self._lock = lock
        #: The component read.
        self.name = store.name
        with lock:
            store.settle()  # what a twin did before now is not this reader's
            #: The clock when the reader was made: no removal before is its.
            self.opened = tracker.open(self.name, self)
            #: The clock at the last commit: answers are the events after it
            #: (0, before every stamp, for a reader that includes the present).
            self.since = 0 if include_present else self.opened

    @property
    def removals_since(self) -> int:
        """The clock past which this reader still needs removal records.

        O(1).
        """
        return max(self.since, self.opened)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called.

        O(1).
        """
        return self._tracker is None

    def _open(self) -> Tracker:
        """The tracker, once what the twin did is stamped (else closed)."""
        if self._tracker is None:
            raise ValueError(f"this reader of {self.name!r} is closed")
        self._store.settle()
        return self._tracker

    def added(self) -> np.ndarray:
        """Entities that got the component since, and have it now.

        Raises
        ------
        ValueError
            If the reader is closed.

        Notes
        -----
        O(n) for the component's n members (their stamps are scanned).
        """
        with self._lock:
            self._open()
            return self._store.handles_at(self._store.rows_after(self.since, False))

    def changed(self) -> np.ndarray:
        """Entities written since (declared writes, replacements and
        additions), that have the component now; :meth:`added` is a subset.

        Raises
        ------
        ValueError
            If the reader is closed.

        Notes
        -----
        O(n) for the component's n members (their stamps are scanned).
        """
        with self._lock:
            self._open()
            return self._store.handles_at(self._store.rows_after(self.since, True))

    def removed(self) -> np.ndarray:
        """Entities that lost the component since, and do not have it now
        (a destroyed entity's handle too, even once its index is reused).

        Raises
        ------
        ValueError
            If the reader is closed.

        Notes
        -----
        O(r log r) for the r removals recorded since the last commit.
        """
        with self._lock:
            tracker = self._open()
            lost = np.unique(tracker.log(self.name).since(self.removals_since))
            return lost[~self._store.contains(lost)] if lost.shape[0] else lost

    def commit(self) -> None:
        """Later answers start from now: every event so far is read.

        Raises
        ------
        ValueError
            If the reader is closed.

        Notes
        -----
        O(1), plus pruning the removal records no reader needs any more.
        """
        with self._lock:
            tracker = self._open()
            self.since = tracker.advance()
            tracker.prune(self.name)

    def close(self) -> None:
        """Stop reading: the removal records stop waiting for this reader.

        Notes
        -----
        O(1). Closing twice is allowed.
        """
        with self._lock:
            tracker, self._tracker = self._tracker, None
            if tracker is not None:
                tracker.forget(self.name, self)

    def __enter__(self) -> Reader:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"since {self.since}"
        return f"<sparseset Reader of {self.name!r} ({state})>"


__all__ = ["MAX_READERS", "TICK_LIMIT", "Reader", "RemovalLog", "Stamped", "Tracker"]
