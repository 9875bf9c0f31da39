"""SetArray: many small sparse sets over one value range, with one trail.

A constraint solver keeps a domain per variable: K sets of values in
``[0, m)``, narrowed by removals as the search goes down and restored as it
backtracks. A :class:`SetArray` holds them as two ``(K, m)`` arrays, one
sparse set per row (row ``k``'s members are ``dense[k, :sizes[k]]``), and
records every removal in a single *trail* of set numbers. One
``checkpoint()`` then covers every set, and ``rollback`` undoes all
removals since in O(removed): a removal swapped the value just past its
set's members (swap-and-pop keeps its index slot pointing there), so undoing
it is growing that set's size by one, in reverse order.

The state is a :class:`~sparseset.jit.SetArrayState`, a value of the one
structref type the jit twins have (:mod:`sparseset.jit`): ``sa.jit`` hands
it to ``@njit`` code, where every operation runs per set, and functions
that take it cache. The batch methods are compiled loops over the state's
own methods, on the kernels of :mod:`sparseset.kernels.set_rows`.
Checkpoints are :class:`~sparseset.Checkpoint` tokens, as a set's.

In compiled code nothing raises, because a raise path there costs every
call its reference-count pruning (see :mod:`.kernels.set_rows`): a set
number outside ``[0, count)`` reads as an empty set (``contains`` False,
``remove`` False, ``size`` 0, ``values`` empty), and ``rollback`` returns
whether the token was live instead of raising. The Python methods raise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..jit import SetArrayState, make_set_array_state
from ..kernels.array_types import Int, IntArray
from ..kernels.marks import empty_marks
from ..kernels.set_rows import fill_rows
from .checkpoints import Checkpoint, is_token, next_owner
from .ids import as_ids
from .locking import Guarded, atomic

# -- compiled batches for the Python methods, on the state's own methods ----


@njit(cache=True)
def _remove_many(st: SetArrayState, sets: IntArray, values: IntArray) -> Int:
    removed: Int = 0
    for j in range(sets.shape[0]):
        removed += st.remove(sets[j], values[j])
    return removed


@njit(cache=True)
def _contains_many(
    st: SetArrayState, sets: IntArray, values: IntArray, out: np.ndarray
) -> None:
    for j in range(sets.shape[0]):
        out[j] = st.contains(sets[j], values[j])


@njit(cache=True)
def _checkpoint_state(st: SetArrayState) -> tuple[Int, Int, Int]:
    return st.checkpoint()


@njit(cache=True)
def _rollback_state(st: SetArrayState, token: tuple[int, int, int]) -> bool:
    return st.rollback(token)


@njit(cache=True)
def _refill(st: SetArrayState) -> None:
    """Every set back to the whole universe; the trail and checkpoints dropped."""
    fill_rows(st.sparse, st.dense, st.sizes)
    st.trail_len = 0
    st.depth = 0
    st.epoch += 1


@njit(cache=True)
def _trail_length(st: SetArrayState) -> Int:
    return st.trail_len


@atomic(unlocked=("__len__",))
class SetArray(Guarded):
    """``count`` sets of values in ``[0, universe)``, narrowed by removals
    and restored together by one checkpoint and rollback.

    Every set starts full (all of ``[0, universe)``), as a solver's domains
    do. Removals are swap-and-pop within a set and each is recorded in one
    trail shared by all sets, so ``rollback(token)`` undoes every removal
    since ``checkpoint()`` in O(removed), whichever sets they touched.
    Memory is 12 bytes per value of each set (``dense``, ``sparse`` and the
    trail, which never grows: a value is on it at most once per set).

    In ``@njit`` code, ``sa.jit`` offers per set: ``contains(k, v)``,
    ``remove(k, v)`` (trailed; False if absent), ``assign(k, v)`` (keep
    only ``v``; how many were removed), ``size(k)``, ``values(k)`` (the
    members, a view), and over all sets ``checkpoint()`` and
    ``rollback(token)``, which returns False (restoring nothing) for a
    token that is no longer live. A set number outside ``[0, count)`` reads
    as an empty set there. Functions that take it cache like any
    ``@njit(cache=True)`` function.

    Parameters
    ----------
    count : int
        How many sets.
    universe : int
        Values are in ``[0, universe)``.

    Examples
    --------
    >>> sa = SetArray(3, 4)
    >>> sa.remove([0, 0, 2], [1, 3, 0])
    3
    >>> token = sa.checkpoint(); sa.remove([1], [2])
    1
    >>> sa.sizes.tolist(), sorted(sa.members(0).tolist())
    ([2, 3, 3], [0, 2])
    >>> sa.rollback(token); sa.sizes.tolist()
    [2, 4, 3]
    """

    def __init__(self, count: int, universe: int) -> None:
        for name, value in (("count", count), ("universe", universe)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"{name} must be an integer, not {value!r}")
            if not 0 <= int(value) < 2**31:
                raise ValueError(f"{name} = {value} is outside [0, 2**31)")
        count, universe = int(count), int(universe)
        dtype = np.int32
        # One row even with no sets, so that compiled code can always
        # take an (empty) view of row 0.
        rows = max(count, 1)
        dense = np.empty((rows, universe), dtype)
        sparse = np.empty((rows, universe), np.uint32)
        sizes = np.zeros(count, np.int64)
        self._state = make_set_array_state(
            dense,
            sparse,
            sizes,
            # Never fills: a value is on it at most once per set.
            np.empty(count * universe, np.int32),
            empty_marks(),
            next_owner(),
        )
        self._dense, self._sparse, self._sizes = dense, sparse, sizes
        self._universe = universe
        _refill(self._state)

    @property
    def count(self) -> int:
        """How many sets.

        O(1).

        Examples
        --------
        >>> SetArray(5, 3).count
        5
        """
        return int(self._sizes.shape[0])

    @property
    def universe(self) -> int:
        """Values are in ``[0, universe)``.

        O(1).

        Examples
        --------
        >>> SetArray(5, 3).universe
        3
        """
        return self._universe

    @property
    def sizes(self) -> np.ndarray:
        """How many values each set holds (a read-only view).

        O(1): a view, no copy.

        Examples
        --------
        >>> SetArray(2, 3).sizes.tolist()
        [3, 3]
        """
        view = self._sizes[:]
        view.flags.writeable = False
        return view

    @property
    def jit(self) -> SetArrayState:
        """The state, for ``@njit`` code (the same object every time).

        O(1).

        Examples
        --------
        >>> from numba import njit
        >>> @njit
        ... def narrow(sa):
        ...     token = sa.checkpoint()
        ...     sa.remove(0, 1)
        ...     size = sa.size(0)
        ...     sa.rollback(token)
        ...     return size, sa.size(0)
        >>> narrow(SetArray(1, 3).jit)
        (2, 3)
        """
        return self._state

    def members(self, k: int) -> np.ndarray:
        """The values of set ``k``, in its dense order (a read-only view).

        Raises
        ------
        TypeError
            If ``k`` is not an integer.
        IndexError
            If ``k`` is outside ``[0, count)``.

        Notes
        -----
        O(1): a view of set ``k``'s members.

        Examples
        --------
        >>> sa = SetArray(2, 4); sa.remove([1], [0]); sa.members(1).tolist()
        1
        [3, 1, 2]
        """
        k = self._set_index(k)
        view = self._dense[k, : self._sizes[k]]
        view.flags.writeable = False
        return view

    def _set_index(self, k: Any) -> int:
        if isinstance(k, bool) or not isinstance(k, int | np.integer):
            raise TypeError(f"a set number must be an integer, not {k!r}")
        if not 0 <= int(k) < self.count:
            raise IndexError(f"set {k} is outside [0, {self.count})")
        return int(k)

    def _pairs(self, sets: Any, values: Any) -> tuple[np.ndarray, np.ndarray]:
        """``sets`` and ``values`` broadcast to two int64 arrays, validated."""
        sets_arr, _ = as_ids(sets)
        values_arr, _ = as_ids(values)
        try:
            sets_arr, values_arr = np.broadcast_arrays(sets_arr, values_arr)
        except ValueError:
            raise ValueError(
                f"sets ({sets_arr.shape[0]}) and values ({values_arr.shape[0]}) "
                "do not broadcast together"
            ) from None
        for name, arr, limit in (
            ("sets", sets_arr, self.count),
            ("values", values_arr, self._universe),
        ):
            bad = (arr < 0) | (arr >= limit)
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(f"{name}[{k}] = {arr[k]} is outside [0, {limit})")
        return sets_arr.astype(np.int64), values_arr.astype(np.int64)

    def contains(self, sets: Any, values: Any) -> np.ndarray:
        """Whether each value is in its set (``sets`` and ``values``
        broadcast together).

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If a set number is outside ``[0, count)``, a value outside ``[0,
            universe)``, or the two do not broadcast together; nothing changes.

        Notes
        -----
        O(k) for k pairs.

        Examples
        --------
        >>> sa = SetArray(2, 3); sa.remove(0, 2)
        1
        >>> sa.contains([0, 0, 1], 2).tolist()
        [False, False, True]
        """
        sets_arr, values_arr = self._pairs(sets, values)
        out = np.empty(sets_arr.shape[0], np.bool_)
        _contains_many(self._state, sets_arr, values_arr, out)
        return out

    def remove(self, sets: Any, values: Any) -> int:
        """Remove each value from its set, in order, recording each removal
        on the trail; values already absent are skipped. Returns how many
        were removed. The whole batch is validated first.

        Raises
        ------
        TypeError
            If an id is not an integer (a bool, a float, a string, None).
        ValueError
            If a set number is outside ``[0, count)``, a value outside ``[0,
            universe)``, or the two do not broadcast together; nothing changes.

        Notes
        -----
        O(k) for k pairs, each recorded on the trail.

        Examples
        --------
        >>> sa = SetArray(2, 3); sa.remove([0, 1, 0], [2, 2, 2])
        2
        """
        sets_arr, values_arr = self._pairs(sets, values)
        return int(_remove_many(self._state, sets_arr, values_arr))

    def checkpoint(self) -> Checkpoint:
        """Mark the current sets; ``rollback`` undoes every removal since.

        Tokens nest like a stack; one taken in ``@njit`` code (a plain
        tuple) works here too.

        Notes
        -----
        O(1).

        Examples
        --------
        >>> sa = SetArray(1, 3); t = sa.checkpoint(); sa.remove(0, [0, 1])
        2
        >>> sa.rollback(t); sa.sizes.tolist()
        [3]
        """
        owner, serial, stamp = _checkpoint_state(self._state)
        return Checkpoint(int(owner), int(serial), int(stamp))

    def rollback(self, token: Any) -> None:
        """Restore every value removed since ``token``, in O(removed).

        Newer tokens are dropped; ``token`` stays valid. Raises
        ``ValueError`` for a token that is not live.

        Raises
        ------
        ValueError
            If ``token`` is not a live checkpoint of this SetArray (another
            container's, or invalidated by a rollback past it or a refill).

        Examples
        --------
        >>> sa = SetArray(1, 2); t = sa.checkpoint(); sa.rollback(t); sa.rollback(t)
        """
        # A token of another container carries another owner: the compiled
        # rollback refuses it, restoring nothing.
        ok = is_token(token) and _rollback_state(
            self._state, (int(token[0]), int(token[1]), int(token[2]))
        )
        if not ok:
            raise ValueError(
                f"{token!r} is not a live checkpoint of this SetArray: a rollback "
                "to an older checkpoint or a refill since it was taken "
                "invalidated it"
            )

    def fill(self) -> None:
        """Every set back to all of ``[0, universe)``; the trail and every
        checkpoint are dropped.

        Notes
        -----
        O(count x universe): every set is rebuilt full.

        Examples
        --------
        >>> sa = SetArray(2, 3); sa.remove(0, 0); sa.fill(); sa.sizes.tolist()
        1
        [3, 3]
        """
        _refill(self._state)

    @property
    def trail_length(self) -> int:
        """Removals on the trail (what a rollback to the first checkpoint
        would undo).

        O(1).

        Examples
        --------
        >>> sa = SetArray(2, 3); sa.remove([0, 1], 1); sa.trail_length
        2
        2
        """
        return int(_trail_length(self._state))

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return (
            f"SetArray(count={self.count}, universe={self._universe}, "
            f"values={int(self._sizes.sum())})"
        )


__all__ = ["SetArray"]
