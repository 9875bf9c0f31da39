"""Atomic calls: one lock per container, one per World, and lock-free reads.

Every public method of a container runs under its :class:`Guard`, a
reentrant lock with two counters, as every method of ``set`` and ``dict``
is atomic: a call sees and leaves the container whole, whatever other
threads do to it meanwhile. A World and its stores, views and groups share
one guard, so a structural change (create, destroy, add, remove) is atomic
across every store it touches. A call that takes other containers as
arguments (``a | b``, ``a.update(b)``, ``store.sort_as(other)``) holds their
guards too. A thread waits for a guard it does not hold only in one
global order (an operator or comparison of two sets may first take the
other's guard if it is free at once, and otherwise lets go and takes
both in that order), so two threads calling ``a.update(b)`` and ``b.update(a)``
cannot deadlock.

:func:`atomic` applies this to a class: it wraps every public method,
property and operator (inherited mixins included) in
:func:`exclusive`. Names it is told to leave alone are the scalar hot
paths, which guard themselves at a fraction of the cost:

- **Optimistic reads** (``x in s``, ``store.get(h)``, ``w.get(name, h)``):
  a seqlock. Every exclusive call raises ``writing`` on entry and, on exit,
  bumps ``version`` before lowering ``writing`` again. A reader notes
  ``version``, reads with no lock if nobody is writing, and keeps its
  answer only if ``version`` is unchanged and still nobody is writing;
  otherwise it reads again under the lock. (A scalar read is one compiled
  call on arrays that writers only replace whole or change inside one
  compiled call, so a read overlapping a writer's steps is memory-safe;
  its answer is discarded.)
- **Scalar writes** (``s.add(x)``, ``s.discard(x)``, ``s.remove(x)`` on a
  SparseSet): the lock alone. Each changes ``dense`` and the index (one
  compiled call, or on a flat index a few memoryview writes, none of
  which makes a member look absent or a non-member present except the id
  written), then publishes the new size: a one-id read in between answers
  as before the call or as after it, each a state that existed.

What keeps the optimistic reads sound is a rule for kernels: a kernel that
writes a container's arrays holds the GIL (it never runs ``nogil``); only
kernels that read may release it, and those run under the lock. A
lock-free reader therefore never runs beside a writing kernel, only
between a writer's steps, which the counters detect.

On a free-threaded CPython (3.13t, 3.14t; numba's support for it is
experimental) nothing makes a compiled call atomic, so there every guard is
born with ``writing`` at 1: optimistic readers always find a writer and
take the lock, and every call is atomic the plain way.

The same frames keep Ctrl-C out: a ``KeyboardInterrupt`` that comes while
an exclusive call (or a one-id write, marked :func:`.interrupts.critical`)
runs on the main thread waits until it has returned (:mod:`.interrupts`).

Twins (:mod:`sparseset.jit`) are not guarded: compiled code cannot take a
Python lock cheaply. A twin must not be used from two threads at once,
nor while Python code changes the same container.
"""

from __future__ import annotations

import _thread
import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from types import FunctionType
from typing import Any, ParamSpec, Self, SupportsIndex, TypeVar

import numpy as np

from .engine import INT64_END
from .interrupts import CRITICAL, critical

T = TypeVar("T", bound=type)
P = ParamSpec("P")
R = TypeVar("R")

#: Methods that construct, describe the class or route attributes: never
#: wrapped (an object under construction has nothing to guard yet).
NOT_WRAPPED = frozenset(
    {
        "__class_getitem__",
        "__delattr__",
        "__dir__",
        "__getattr__",
        "__getattribute__",
        "__init__",
        "__init_subclass__",
        "__new__",
        "__reduce_ex__",
        "__setattr__",
        "__setstate__",
        "__subclasshook__",
        "lock",
    }
)


def gil_enabled() -> bool:
    """Whether this interpreter runs with the GIL (always before 3.13).

    Examples
    --------
    >>> isinstance(gil_enabled(), bool)
    True
    """
    is_enabled = getattr(sys, "_is_gil_enabled", None)
    return True if is_enabled is None else bool(is_enabled())


#: ``writing`` of a new guard: 1 for good on an interpreter that ran
#: without a GIL when this module was imported (a GIL, once back on, stays
#: on; a guard born locked only costs its readers the lock).
BORN_WRITING = 0 if gil_enabled() else 1


class Guard(_thread.RLock):  # type: ignore[misc]  # final in typeshed only
    """A reentrant lock that carries the seqlock counters of optimistic
    readers: the guard is its own lock.

    One object, not a lock and a holder of it: every set made (a small
    set's ``a & b`` included) makes a guard, and making its objects is
    most of what making a small set costs.

    Attributes
    ----------
    lock : Guard
        The guard itself, held by every exclusive call (the name code that
        takes ``guard.lock`` reads).
    writing : int
        How many exclusive calls are under way (nested calls count each),
        plus one for good without a GIL, where no read may go unlocked.
    version : int
        Bumped at the end of every exclusive call.

    Examples
    --------
    >>> guard = Guard()
    >>> with guard.lock:
    ...     guard.writing, guard.lock is guard
    (0, True)
    """

    __slots__ = ("version", "writing")

    def __init__(self) -> None:
        self.writing = BORN_WRITING
        self.version = 0

    @property
    def lock(self) -> Guard:
        """The guard itself: the lock every exclusive call holds."""
        return self


class Guarded:
    """Base of the classes whose calls are atomic: each instance is born
    with its own :class:`Guard` (whatever the way it is made: a
    constructor, ``copy``, ``pickle``), which :func:`share_guard` can swap
    for another's.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> isinstance(SparseSet(), Guarded)
    True
    """

    __slots__ = ("_guard",)

    _guard: Guard

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        self = object.__new__(cls)
        self._guard = Guard()
        return self

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        # Protocols 0 and 1 would rebuild through object.__new__, skipping
        # the guard; protocol 2's reduction calls cls.__new__ in any protocol.
        return super().__reduce_ex__(max(int(protocol), 2))

    @property
    def lock(self) -> Guard:
        """The reentrant lock every call holds: hold it to make several
        calls one atomic step (a World's is shared by its stores, views and
        groups).

        O(1).

        Examples
        --------
        >>> from sparseset import SparseSet
        >>> s = SparseSet()
        >>> with s.lock:
        ...     if 3 not in s:
        ...         s.add(3)
        1
        """
        return self._guard


def share_guard(follower: Guarded, leader: Guarded) -> None:
    """Make ``follower``'s calls atomic together with ``leader``'s: a World's
    stores, views and groups share the World's guard, a map its store's.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> a, b = SparseSet(), SparseSet()
    >>> share_guard(b, a); guard_of(a) is guard_of(b)
    True
    """
    follower._guard = leader._guard


def guard_of(obj: Guarded) -> Guard:
    """The guard ``obj``'s calls run under.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> guard_of(SparseSet()).writing
    0
    """
    return obj._guard


def holds_lock_free(
    guard: Guard, engine: Any, x: object, key_of: Callable[[int], int] | None = None
) -> bool | None:
    """``x in`` a set or store (``engine``'s members), read with no lock:
    the answer for one id (a Python or numpy integer), or None where it
    must be read under the lock (a writer overlapped the read, or ``x`` is
    not one non-negative id). ``key_of`` maps the id to its key in the
    index first (a World store's handle to its entity index, -1 if dead).

    Examples
    --------
    >>> from sparseset.sets.engine import SetEngine
    >>> from sparseset.sets.index_kinds import KINDS
    >>> engine = SetEngine.new(KINDS["flat"], 8); engine.add([4])
    1
    >>> guard = Guard()
    >>> holds_lock_free(guard, engine, 4), holds_lock_free(guard, engine, "a")
    (True, None)
    """
    version = guard.version
    if type(x) is not int:
        if not isinstance(x, np.integer):
            return None
        x = int(x)
    if 0 <= x < INT64_END and not guard.writing:
        key = x if key_of is None else key_of(x)
        found: bool = key >= 0 and engine.state.contains_key(key)
        if guard.version == version and not guard.writing:
            return found
    return None


def foreign_guards(guard: Guard, values: Iterable[Any]) -> list[Guard]:
    """The guards of the guarded ``values`` other than ``guard``.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> a, b = SparseSet(), SparseSet()
    >>> foreign_guards(guard_of(a), [a, b, 3]) == [guard_of(b)]
    True
    """
    found: list[Guard] = []
    for value in values:
        if isinstance(value, Guarded):
            other = value._guard
            if other is not guard and other not in found:
                found.append(other)
    return found


def exclusive(method: Callable[P, R]) -> Callable[P, R]:
    """``method`` run under its object's guard, and under the guards of the
    guarded objects among its arguments, taken in one global order.

    Examples
    --------
    >>> class Box(Guarded):
    ...     @exclusive
    ...     def put(self, x):
    ...         return guard_of(self).writing
    >>> Box().put(1)
    1
    """

    if list(inspect.signature(method).parameters) == ["self"]:
        return exclusive_alone(method)  # type: ignore[return-value]

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        guard: Guard = args[0]._guard  # type: ignore[attr-defined]
        for value in args:
            if isinstance(value, Guarded) and value._guard is not guard:
                return holding(guard, method, args, kwargs)  # type: ignore[no-any-return]
        if kwargs:  # inline, not foreign_guards: a store's add and set pass columns
            for value in kwargs.values():
                if isinstance(value, Guarded) and value._guard is not guard:
                    return holding(guard, method, args, kwargs)  # type: ignore[no-any-return]
        # acquire/release rather than ``with``: half the cost per call.
        guard.acquire()
        guard.writing += 1
        try:
            return method(*args, **kwargs)
        finally:
            guard.version += 1
            guard.writing -= 1
            guard.release()

    call.__exclusive__ = True  # type: ignore[attr-defined]
    # Every exclusive call runs in this one code object (and those of
    # exclusive_alone and holding): Ctrl-C waits while one is on the stack.
    CRITICAL.add(call.__code__)  # type: ignore[attr-defined]
    return call


def exclusive_alone(method: Callable[[Any], R]) -> Callable[[Any], R]:
    """:func:`exclusive` for a method of ``self`` alone (a property, an
    operator such as ``__iter__``): no arguments to look through."""

    @functools.wraps(method)
    def call(self: Any) -> R:
        guard: Guard = self._guard
        guard.acquire()
        guard.writing += 1
        try:
            return method(self)
        finally:
            guard.version += 1
            guard.writing -= 1
            guard.release()

    call.__exclusive__ = True  # type: ignore[attr-defined]
    CRITICAL.add(call.__code__)  # type: ignore[attr-defined]
    return call


@critical
def holding(
    guard: Guard,
    method: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Call ``method`` holding ``guard`` and the guards of the guarded
    arguments, taken in the order of their ids so that threads taking the
    same guards cannot deadlock."""
    guards = sorted([guard, *foreign_guards(guard, (*args, *kwargs.values()))], key=id)
    taken: list[Guard] = []
    try:
        for each in guards:
            each.acquire()
            taken.append(each)
            each.writing += 1
        return method(*args, **kwargs)
    finally:
        for each in reversed(taken):
            each.version += 1
            each.writing -= 1
            each.release()


def is_exclusive(function: Any) -> bool:
    """Whether ``function`` was wrapped by :func:`exclusive`.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> is_exclusive(SparseSet.update), is_exclusive(SparseSet.__contains__)
    (True, False)
    """
    return bool(getattr(function, "__exclusive__", False))


def wrappable(cls: type, name: str) -> bool:
    """Whether :func:`atomic` wraps attribute ``name`` of ``cls``: public
    names and operators, not construction or attribute routing, nor what
    ``object`` itself provides."""
    if name in NOT_WRAPPED:
        return False
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return False
    value = inspect.getattr_static(cls, name)
    if value is inspect.getattr_static(object, name, None):
        return False
    return isinstance(value, (FunctionType, property))


def atomic(*, unlocked: Iterable[str] = ()) -> Callable[[T], T]:
    """Class decorator: every public method, property and operator of the
    class (inherited ones included) becomes :func:`exclusive`, except the
    ``unlocked`` names, which must guard themselves (see the module notes).

    Examples
    --------
    >>> @atomic(unlocked=("peek",))
    ... class Box(Guarded):
    ...     def put(self, x): ...
    ...     def peek(self): ...
    >>> is_exclusive(Box.put), is_exclusive(Box.peek)
    (True, False)
    """
    skipped = frozenset(unlocked)

    def decorate(cls: T) -> T:
        for name in dir(cls):
            if name in skipped or not wrappable(cls, name):
                continue
            value = inspect.getattr_static(cls, name)
            if isinstance(value, property):
                getter, setter, deleter = (
                    None if f is None or is_exclusive(f) else exclusive(f)
                    for f in (value.fget, value.fset, value.fdel)
                )
                setattr(
                    cls,
                    name,
                    property(
                        getter or value.fget,
                        setter or value.fset,
                        deleter or value.fdel,
                        value.__doc__,
                    ),
                )
            elif not is_exclusive(value):
                setattr(cls, name, exclusive(value))
        return cls

    return decorate


__all__ = [
    "BORN_WRITING",
    "Guard",
    "Guarded",
    "atomic",
    "exclusive",
    "foreign_guards",
    "gil_enabled",
    "guard_of",
    "holding",
    "holds_lock_free",
    "is_exclusive",
    "share_guard",
]
