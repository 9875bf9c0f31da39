"""What the models share: their integer parameters' checks, the table
from an agent's handle to its row, the grid twin their steps run on, and
the shuffled order of their activations.

Examples
--------
>>> import numpy as np
>>> positive_ints(n=3, width=10)
(3, 10)
>>> rows_by_handle(np.array([5, 2])).tolist()
[-1, -1, 1, -1, -1, 0]
>>> order = np.empty(5, np.int64); shuffle_order(order, 7); sorted(order.tolist())
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jit.grid import GridTwin
from ..kernels.array_types import typed_njit
from ..kernels.options import NO_NRT


def positive_ints(**values: object) -> tuple[int, ...]:
    """Each value as an int, in the order given, if it is an integer of at
    least 1.

    Raises
    ------
    TypeError
        If a value is not an integer (a bool included), naming it.
    ValueError
        If a value is below 1, naming it.
    """
    checked = []
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
        checked.append(int(value))
    return tuple(checked)


def rows_by_handle(handles: NDArray[np.int64]) -> NDArray[np.int64]:
    """A table from each handle to its position in ``handles``, -1 for the
    handles not there; as long as the largest handle. O(h + max)."""
    rows = np.full(int(handles.max(initial=0)) + 1, -1, np.int64)
    rows[handles] = np.arange(handles.shape[0])
    return rows


#: splitmix64's increment, and the low 32 bits of a word.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW = np.uint64(0xFFFFFFFF)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@typed_njit(inline="always", **NO_NRT)
def splitmix(z: Any) -> Any:
    """splitmix64's output for the counter ``z`` (uint64): a model's
    draws advance ``z`` by :data:`GOLDEN` and mix it.

    Examples
    --------
    >>> int(splitmix(np.uint64(GOLDEN)))
    16294208416658607535
    """
    x = (z ^ (z >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@typed_njit(**NO_NRT)
def off_grid(x: Any, y: Any, width: Any, height: Any) -> Any:
    """Whether ``(x, y)`` is not a cell of a ``width x height`` lattice
    (integer coordinates, each in range): a position a lattice model
    refuses.

    Examples
    --------
    >>> off_grid(2.0, 3.0, 4, 4), off_grid(2.5, 3.0, 4, 4), off_grid(4.0, 0.0, 4, 4)
    (False, True, True)
    """
    return not (0.0 <= x < width and 0.0 <= y < height) or (
        x != math.floor(x) or y != math.floor(y)
    )


@typed_njit(**NO_NRT)
def shuffle_order(order: Any, seed: Any, fill: Any = True) -> None:
    """Fill ``order`` with a uniformly random permutation of ``0..n-1``
    (n < 2**32), a function of ``seed`` alone (with ``fill=False``: shuffle
    the permutation ``order`` holds, as random): a Fisher-Yates shuffle
    drawing from splitmix64, two 32-bit draws a word (high half first),
    each index in range by Lemire's multiply-and-reject (no bias). O(n).

    numpy's ``Generator.permutation`` costs several times as much (an
    activation order is drawn every step of a model, for every agent).
    """
    n = order.shape[0]
    if fill:
        for i in range(n):
            order[i] = i
    z = np.uint64(seed)
    word = np.uint64(0)
    half = False  # the low half of the last word is still to be used
    for i in range(n - 1, 0, -1):
        bound = np.uint64(i + 1)
        while True:
            if half:
                r = word & LOW
            else:
                z += GOLDEN
                word = splitmix(z)
                r = word >> np.uint64(32)
            half = not half
            m = r * bound
            low = m & LOW
            # Rejecting the low words below 2**32 mod bound leaves every
            # index equally likely; the modulo is paid only on the rare
            # draws that may need it.
            if low >= bound or low >= (LOW + np.uint64(1) - bound) % bound:
                break
        j = np.int64(m >> np.uint64(32))
        t = order[i]
        order[i] = order[j]
        order[j] = t


def activation_order(rng: np.random.Generator, n: int) -> NDArray[np.int64]:
    """A shuffled order of ``n`` agents (rows ``0..n-1``) for one step, seeded
    by one draw of ``rng``: :func:`shuffle_order`. O(n).

    Examples
    --------
    >>> sorted(activation_order(np.random.default_rng(1), 4).tolist())
    [0, 1, 2, 3]
    """
    order = np.empty(n, np.int64)
    shuffle_order(order, int(rng.integers(0, 2**63 - 1)))
    return order


#: A handle's entity index: its low 32 bits (``index | generation << 32``).
INDEX_BITS = np.int64(0xFFFFFFFF)


@typed_njit(**NO_NRT)
def fill_slots(tw: Any, row_of_index: Any, slot_of: Any, row_at: Any) -> None:
    """``row_at[s]``: the row of the agent in grid slot ``s``, from
    ``row_of_index`` (entity index to row; a World grid's twin holds
    entity keys); ``slot_of[a]``: the slot of row ``a``. One pass over the
    slots in order: no id look-up."""
    for s in range(tw.meta[2]):
        a = row_of_index[tw.dense[s]]
        row_at[s] = a
        slot_of[a] = s


class StepState:
    """What a model's steps keep from one to the next: the tables between
    the agents' rows and their grid slots (made again only when the agents
    or the twin change), and the grid's twin (taken again only when it is
    stale).

    A twin stays live while the grid changes only through it: the moves
    of a compiled step. Taking a new one every step would rebuild the
    cell table whenever many agents moved (``Grid.jit``), a sort of every
    agent where the step itself is a few reads and writes each; and the
    slots, stable while the twin is live, spare each move and each
    neighbour an id look-up.

    Attributes
    ----------
    row_of_index : ndarray of int64
        Entity index (a handle's low 32 bits) to row (-1: none).
    slot_of : ndarray of int64
        Row to grid slot.
    row_at : ndarray of int64
        Grid slot to row (-1: none).

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("pos", "f8", shape=(2,), track=True)
    >>> e = w.create(3); w.destroy(e[0]); e = w.create(2)  # index 0 reused
    1
    >>> w.add("pos", e, pos=[[0, 0], [1, 1]])
    2
    >>> state = StepState(w.grid("pos")); tw = state.twin(w["pos"].ids)
    >>> tw.dense[state.slot_of].tolist() == (e & INDEX_BITS).tolist()  # keys
    True
    >>> state.row_at[state.slot_of].tolist()
    [0, 1]
    >>> state.twin(w["pos"].ids) is tw
    True
    """

    __slots__ = ("grid", "handles", "row_at", "row_of_index", "slot_of", "tw")

    def __init__(self, grid: Any) -> None:
        self.grid = grid
        self.handles = np.empty(0, np.int64)
        self.row_of_index = np.empty(0, np.int64)
        self.slot_of = np.empty(0, np.int64)
        self.row_at = np.empty(0, np.int64)
        self.tw: GridTwin | None = None

    def twin(self, handles: NDArray[np.int64], build: bool = False) -> GridTwin:
        """The grid's twin, caught up with the world (the last step's while
        it is live), with the tables current for the agents ``handles``
        (rows of the components). ``build``: take a fresh twin, which
        rebuilds the cell table (members in cell order, every one at
        home) if many moved since the last build.

        O(c) for c changes made outside the steps; O(n) more when the
        agents changed or a new twin was needed (after a build).

        Raises
        ------
        RuntimeError
            If the grid and the component hold different numbers of
            agents.
        """
        grid = self.grid.grid  # the catch-up with the world
        renew = not np.array_equal(handles, self.handles)
        if renew:
            self.handles = handles.copy()
            self.row_of_index = rows_by_handle(handles & INDEX_BITS)
        tw = self.tw
        if build or tw is None or tw.meta[1] != tw.version:
            fresh = grid.jit
            renew = renew or tw is None or fresh.version != tw.version
            tw = self.tw = fresh
        if renew:
            if tw.meta[2] != handles.shape[0]:
                raise RuntimeError(
                    f"the grid holds {tw.meta[2]} agents, the component "
                    f"{handles.shape[0]}"
                )
            self.slot_of = np.empty(handles.shape[0], np.int64)
            self.row_at = np.empty(handles.shape[0], np.int64)
            fill_slots(tw, self.row_of_index, self.slot_of, self.row_at)
        return tw
