"""The order of a schedule's systems: conflicts, batches, ambiguities.

Pure functions over what each system declares (:class:`Access`); nothing
here runs a system. The rules, in the order they apply:

1. ``after``/``before`` are edges between systems; a cycle among them is an
   error, and so is a name no system has.
2. Two systems *conflict* when one writes a component the other reads or
   writes, or either is structural. Each conflicting pair, taken in
   registration order, is ordered by registration unless the edges so far
   already order it the other way (so ``after``/``before`` win, and no
   registration edge ever closes a cycle).
3. Each system goes in the earliest batch after every system it must
   follow; a batch lists its systems in registration order.

A conflicting pair that only registration orders (no ``after``/``before``
path either way) is an *ambiguity*: Bevy reports these because the order a
user gets is then an accident of where the systems were registered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Access:
    """What one system declares: its name, the components it reads and
    writes (writing implies reading), its explicit order, and whether it
    changes the world's structure directly.

    Examples
    --------
    >>> a = Access("move", reads=frozenset({"vel"}), writes=frozenset({"pos"}))
    >>> b = Access("draw", reads=frozenset({"pos"}))
    >>> conflicts(a, b), conflicts(b, b)
    (True, False)
    """

    name: str
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    structural: bool = False


@dataclass(frozen=True)
class Plan:
    """The batches (positions of systems, in run order) and the ambiguous
    pairs (positions, each pair and the list in registration order)."""

    batches: tuple[tuple[int, ...], ...]
    ambiguities: tuple[tuple[int, int], ...]


def conflicts(a: Access, b: Access) -> bool:
    """Whether systems ``a`` and ``b`` must not run at the same time.

    Notes
    -----
    O(r + w) for the r reads and w writes the two declare.

    Examples
    --------
    >>> reads = Access("r", reads=frozenset({"pos"}))
    >>> conflicts(reads, Access("r2", reads=frozenset({"pos"})))
    False
    >>> conflicts(reads, Access("s", structural=True))
    True
    """
    if a.structural or b.structural:
        return True
    return bool(a.writes & (b.reads | b.writes) or b.writes & a.reads)


def plan(systems: Sequence[Access]) -> Plan:
    """Order ``systems`` (in registration order) into batches.

    Raises ``ValueError`` for an ``after``/``before`` name that no system
    has, or a cycle among ``after``/``before`` (naming it).

    Examples
    --------
    >>> s = [Access("a", writes=frozenset({"x"})), Access("b", reads=frozenset({"x"})),
    ...      Access("c", reads=frozenset({"y"}))]
    >>> plan(s)
    Plan(batches=((0, 2), (1,)), ambiguities=((0, 1),))
    >>> s = [Access("a"), Access("b", before=("a",)), Access("c", after=("a",))]
    >>> plan(s).batches
    ((1,), (0,), (2,))
    """
    count = len(systems)
    position = {system.name: k for k, system in enumerate(systems)}
    successors: list[list[int]] = [[] for _ in range(count)]
    for k, system in enumerate(systems):
        for other in system.after:
            successors[_known(position, other, system, "after")].append(k)
        for other in system.before:
            successors[k].append(_known(position, other, system, "before"))
    _reject_cycle(systems, successors)

    # reach[k]: a bit per system that k must run before (itself excluded).
    reach = [0] * count
    for k in reversed(_topological(successors)):
        for nxt in successors[k]:
            reach[k] |= (1 << nxt) | reach[nxt]
    declared = list(reach)  # the order after/before give, before registration's

    ambiguities = []
    for i in range(count):
        for j in range(i + 1, count):
            if not conflicts(systems[i], systems[j]):
                continue
            if not (declared[i] >> j & 1 or declared[j] >> i & 1):
                ambiguities.append((i, j))
            if reach[j] >> i & 1 or reach[i] >> j & 1:
                continue  # already ordered, by the edges or registration so far
            successors[i].append(j)
            gained = (1 << j) | reach[j]
            for k in range(count):
                if k == i or reach[k] >> i & 1:
                    reach[k] |= gained

    level = [0] * count
    for k in _topological(successors):
        for nxt in successors[k]:
            level[nxt] = max(level[nxt], level[k] + 1)
    batches = [[] for _ in range(max(level, default=-1) + 1)]  # type: list[list[int]]
    for k in range(count):
        batches[level[k]].append(k)
    return Plan(tuple(map(tuple, batches)), tuple(ambiguities))


def _known(position: dict[str, int], name: str, system: Access, role: str) -> int:
    """The position of the system called ``name``, named in ``system``'s
    ``role`` (``after`` or ``before``)."""
    try:
        return position[name]
    except KeyError:
        known = ", ".join(repr(n) for n in position)
        raise ValueError(
            f"system {system.name!r} has {role}={name!r}, but no system is called "
            f"{name!r} (systems: {known})"
        ) from None


def _topological(successors: list[list[int]]) -> list[int]:
    """The positions in an order where each comes before its successors
    (Kahn's algorithm, lowest position first: deterministic)."""
    count = len(successors)
    incoming = [0] * count
    for nexts in successors:
        for nxt in nexts:
            incoming[nxt] += 1
    ready = [k for k in range(count) if not incoming[k]]
    order = []
    while ready:
        ready.sort(reverse=True)
        k = ready.pop()
        order.append(k)
        for nxt in successors[k]:
            incoming[nxt] -= 1
            if not incoming[nxt]:
                ready.append(nxt)
    return order


def _reject_cycle(systems: Sequence[Access], successors: list[list[int]]) -> None:
    """Raise ``ValueError`` naming a cycle of ``after``/``before``, if any."""
    state = [0] * len(systems)  # 0 unseen, 1 on the path, 2 done
    path: list[int] = []

    def visit(k: int) -> list[int] | None:
        state[k] = 1
        path.append(k)
        for nxt in successors[k]:
            if state[nxt] == 1:
                return [*path[path.index(nxt) :], nxt]
            if state[nxt] == 0:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        state[k] = 2
        return None

    for k in range(len(systems)):
        if state[k] == 0:
            cycle = visit(k)
            if cycle is not None:
                names = " -> ".join(repr(systems[c].name) for c in cycle)
                raise ValueError(
                    f"the systems' after/before order has a cycle: {names} "
                    "(each must run before the next)"
                )


__all__ = ["Access", "Plan", "conflicts", "plan"]
