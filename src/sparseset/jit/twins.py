"""Building the shared states: a container's twin, a SetArray's state.

``s.jit`` (and ``store.jit``, ``world[name].jit``) hands out a :class:`Twin`
holding the very arrays the container owns, so a user's ``@njit`` system can
look ids up, add and remove them one by one, walk a store's rows in place
and, on a set, checkpoint and roll back. From then on the container keeps
its state *in* the twin: whatever either side does, including growth that
reallocates the arrays, the other sees. A :class:`~sparseset.SetArray`
keeps its state in a :class:`SetArrayState` from the start.

Both are values of the one type :class:`~.types.TwinType`, with their own
fields (see :mod:`.types`); :mod:`.methods` has what ``@njit`` code can
call on them.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .proxy import SetArrayState, Twin
from .types import (
    BITS_FIELDS,
    COLUMN_PREFIX,
    ENTITY_FIELDS,
    REMOVAL_FIELDS,
    SET_ARRAY_FIELDS,
    TWIN_FIELDS,
    TwinType,
    build,
)

#: The struct types made so far, by their fields' names and the
#: fingerprints of their values (see :func:`_fingerprint`).
_STATE_TYPES: dict[tuple[Any, ...], TwinType] = {}


def _fingerprint(value: Any) -> Any:
    """What numba's type of ``value`` depends on, where that is cheap to
    say (an array, an int64), else None.

    Typing every field and making the struct type took four fifths of
    making a small SetArray.

    Examples
    --------
    >>> _fingerprint(np.int64(3)), _fingerprint(np.zeros((2, 2)).T)[2]
    (<class 'numpy.int64'>, 'F')
    """
    if type(value) is np.ndarray:
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return value.dtype, value.ndim, layout, flags.writeable, flags.aligned
    if type(value) is np.int64:
        return np.int64
    return None


def _built(names: list[str] | tuple[str, ...], values: list[Any]) -> Any:
    """A new struct whose fields ``names`` hold ``values`` (no copies)."""
    prints = tuple(map(_fingerprint, values))
    key = None if None in prints else (tuple(names), prints)
    state_type = None if key is None else _STATE_TYPES.get(key)
    if state_type is None:
        fields = [(n, numba.typeof(v)) for n, v in zip(names, values, strict=True)]
        # numba's StructRef.__init__ is unannotated.
        state_type = TwinType(fields)  # type: ignore[no-untyped-call]
        if key is not None:
            _STATE_TYPES[key] = state_type
    return build(state_type, tuple(values))


def make_twin(
    state: Any,
    columns: dict[str, Any],
    entities: tuple[Any, ...] | None = None,
    removal_log: bool = False,
    member_bits: tuple[np.ndarray, int, int] | None = None,
) -> Twin:
    """A twin holding ``state``'s arrays (no copy), counters and checkpoint
    stack, and its columns ``_col_<name>`` for each name of ``columns``;
    with ``entities`` (a world's generations, with liveness), one that takes
    handles; with ``removal_log`` too, one whose ``remove`` logs the
    handles it removes (a tracked component's); with ``member_bits``
    (``(bitmap, n, epoch)``: the members as a bitmap, valid at that ``n``
    and ``epoch``), a set's twin that keeps it in step with its adds.

    Notes
    -----
    O(c) for c columns: the twin shares the arrays, nothing is copied.

    Examples
    --------
    >>> from sparseset.sets.engine import SetEngine
    >>> from sparseset.sets.index_kinds import KINDS
    >>> engine = SetEngine.new(KINDS["flat"], 8); engine.add([4, 2])
    2
    >>> twin = make_twin(engine.state, {})
    >>> twin.size, np.shares_memory(twin.dense, engine.state.dense)
    (2, True)
    """
    names = list(TWIN_FIELDS)
    values = [
        state.sparse,
        state.dense,
        np.int64(state.n),
        np.int64(state.epoch),
        state.marks,
        np.int64(state.depth),
        np.int64(state.stamp),
        np.int64(state.owner),
    ]
    if entities is not None:
        names += ENTITY_FIELDS
        values += list(entities)
        if removal_log:
            names += REMOVAL_FIELDS
            values += [np.empty(16, np.int64), np.int64(0)]
    for name in columns:
        names.append(COLUMN_PREFIX + name)
        values.append(getattr(state, COLUMN_PREFIX + name))
    if member_bits is not None:
        bits, n, epoch = member_bits
        names += BITS_FIELDS
        values += [bits, np.int64(n), np.int64(epoch)]
    twin: Twin = _built(names, values)
    return twin


def make_set_array_state(
    dense: np.ndarray,
    sparse: np.ndarray,
    sizes: np.ndarray,
    trail: np.ndarray,
    marks: np.ndarray,
    owner: int,
) -> SetArrayState:
    """A SetArray's state over these arrays (no copies): the trail empty,
    no checkpoint taken, ``owner`` the number its tokens carry.

    ``dense`` and ``sparse`` hold one set per row; ``sizes`` one size per
    set; ``trail`` room for every removal; ``marks`` the checkpoint stack
    (see :mod:`sparseset.kernels.marks`).

    Notes
    -----
    O(1): the state shares the arrays, nothing is copied.

    Examples
    --------
    >>> from sparseset.kernels.marks import empty_marks
    >>> rows = np.zeros((2, 3), np.int32)
    >>> state = make_set_array_state(
    ...     rows, rows.astype(np.uint32), np.zeros(2, np.int64),
    ...     np.empty(6, np.int32), empty_marks(), owner=7)
    >>> state.owner, state.trail_len, state.size(0)
    (7, 0, 0)
    """
    zero = np.int64(0)
    values = [dense, sparse, sizes, trail, zero, marks, zero, zero, zero]
    values.append(np.int64(owner))
    state: SetArrayState = _built(SET_ARRAY_FIELDS, values)
    return state


__all__ = ["make_set_array_state", "make_twin"]
