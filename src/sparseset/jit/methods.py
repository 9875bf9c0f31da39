"""The compiled methods of the shared states, for ``@njit`` code.

One ``@overload_method`` per method name on :class:`~.types.TwinType`;
each picks its implementation by the state's kind (:func:`~.types.kind_of`):

- every twin: ``contains(i)``, ``index(i)``, ``add(i)`` (True if new;
  zeroed rows; grows), ``remove(i)`` (False if absent); a store's twin
  also ``twin["name"]`` (a string literal), the members' rows of a column,
  whatever its name (``twin.name`` reads the same where the twin has no
  member of that name);
- a set's twin: ``checkpoint()``, ``rollback(token)``, ``keep_only(ids)``,
  ``discard(ids)`` and ``pop()``, with the Python methods' semantics;
- a World store's twin: handles instead of ids, checked against the
  world's generations (``contains`` False, ``index`` -1, ``remove`` False
  for a dead handle, ``add`` raises ``ValueError``), and ``handle(k)``;
- a SetArray's state: ``contains(k, v)``, ``remove(k, v)``,
  ``assign(k, v)``, ``size(k)``, ``values(k)``, ``checkpoint()`` and
  ``rollback(token)`` (see :class:`sparseset.SetArray`).

Checkpoints are one kind of token on every state: ``(owner, serial,
stamp)`` over the marks stack of :mod:`sparseset.kernels.marks`.

Every method but a SetArray's ``assign`` and ``size`` (``add``,
``remove``, ``contains``, ``index``, ``touch``, ``handle``, a set's
``checkpoint``, ``rollback``, ``discard``, ``keep_only`` and ``pop``, a
SetArray's ``contains``, ``remove``, ``values``, ``checkpoint`` and
``rollback``) leaves no reference counting in a caller's loop, as the
same kernels on plain arrays do. Each is
inlined into the caller's code (a call would take a reference to the state
around it), and its body is a function compiled without NRT
(:func:`find_key`, :func:`add_in_place`, :func:`remove_in_place`, ...),
called so that an error it could report leaves the caller as a
``raise`` there would (:func:`call_rarely`, :func:`nrt_free_call`): numba's
pruning of reference counts forgives a missing release on a raising path
only, and an ordinary call's error path would keep an atomic increment and
decrement on every iteration. An error with a constant message (a
negative id in ``discard``, an empty set's ``pop``, a dead token) is
raised by the body itself, which needs no NRT for it; a rare path that
allocates (growth, a full removal log) is called the
same way where the common path answers -1 (:func:`common_or_rare`).

A set's twin over a flat index keeps a member bitmap in step
(:data:`~.types.BITS_FIELDS`): while it is current, ``contains`` and
``add`` of a member read one bit (:func:`contains_in_step`,
:func:`add_in_step`).

A SetArray's methods never raise at all (see :mod:`sparseset.kernels.set_rows`):
a set number outside the array reads as an empty set, and ``rollback``
returns whether the token was live.

The overloads stay unannotated: numba requires an overload and its
implementation to have equal signatures, annotations included, and the one
takes numba types where the other takes values.
"""

from __future__ import annotations

import operator
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic, overload, overload_method, register_jitable

from ..kernels import (
    claim,
    find,
    grown_length,
    keep_only,
    live_index,
    reindex,
    swap_remove,
    unindex,
)
from ..kernels.algebra import mark_members, unmark_members
from ..kernels.array_types import Bool, Int, IntArray, typed_njit
from ..kernels.entities import handle_of
from ..kernels.index.kinds import accepts, grow, in_range, row_limit
from ..kernels.marks import grown_marks, marked_count, put_mark
from ..kernels.options import NO_NRT
from ..kernels.set_rows import roll_back, row_contains, row_remove, row_size
from .types import (
    BITS_FIELDS,
    COLUMN_PREFIX,
    REMOVAL_FIELDS,
    Kind,
    TwinType,
    column_arrays,
    column_names,
    column_rows,
    keeps_bits,
    kind_of,
    replace_columns,
    unknown_column,
)

# -- columns by name: twin["name"] -----------------------------------------


@overload(operator.getitem, prefer_literal=True)
def _column_by_name(twin, name):  # type: ignore[no-untyped-def]
    # A literal name only: it picks the column's type at compile time.
    if isinstance(twin, TwinType) and isinstance(name, types.StringLiteral):
        if name.literal_value not in column_names(twin):
            raise errors.TypingError(unknown_column(twin, name.literal_value))
        return lambda twin, name: column_rows(twin, name)  # type: ignore[call-arg]
    return None


# -- helpers on ids and columns, in Python and compiled ---------------------


def key_of(twin: Any, i: int) -> int:
    """The key of ``i`` in ``twin``'s index: ``i`` itself for a set's or a
    store's twin; for a World store's twin, handle ``i``'s entity index, or
    -1 if it is dead (then no method touches a row).

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("hp", "i4"); e = w.create(2); w.destroy(e[0])
    1
    >>> key_of(w["hp"].jit, int(e[1])), key_of(w["hp"].jit, int(e[0]))
    (1, -1)
    """
    if kind_of(numba.typeof(twin)) is Kind.WORLD_STORE:
        return int(live_index(twin.generations, twin.generations.shape[0], i))
    return int(i)


@typed_njit(**NO_NRT)
def live_key(twin: Any, i: Int) -> int:
    """A World store twin's key of handle ``i`` (see :func:`key_of`)."""
    # An int64, a Python int to the callers.
    return live_index(twin.generations, twin.generations.shape[0], i)  # type: ignore[return-value]


@overload(key_of, inline="always")
def _key_of_compiled(twin, i):  # type: ignore[no-untyped-def]
    if kind_of(twin) is Kind.WORLD_STORE:
        return lambda twin, i: nrt_free_call(live_key, (twin, i))  # type: ignore[call-arg]
    return lambda twin, i: np.int64(i)


def zero_rows(columns: tuple[np.ndarray, ...], k: int) -> None:
    """Zero row ``k`` of every column: numbers as 0, any other row (text,
    datetime, record) through its bytes, as the store zero-fills it
    (numba assigns ``0`` only to numeric rows).

    Examples
    --------
    >>> columns = (np.ones(3), np.array(["ab", "cd"]))
    >>> zero_rows(columns, 1); columns[0].tolist(), columns[1].tolist()
    ([1.0, 0.0, 1.0], ['ab', ''])
    """
    for column in columns:
        column[k : k + 1].view(np.uint8)[...] = 0


# Column by column: the columns of a store differ in type, so the tuple is
# walked by recursion on its tail, one specialisation per length.
@overload(zero_rows)
def _zero_rows_compiled(columns, k):  # type: ignore[no-untyped-def]
    if len(columns) == 0:
        return lambda columns, k: None
    if isinstance(columns[0].dtype, types.Number | types.Boolean):

        def impl(columns, k):  # type: ignore[no-untyped-def]
            columns[0][k] = 0
            zero_rows(columns[1:], k)

        return impl

    def zero_bytes(columns, k):  # type: ignore[no-untyped-def]
        columns[0][k : k + 1].view(np.uint8)[...] = 0
        zero_rows(columns[1:], k)

    return zero_bytes


def move_rows(columns: tuple[np.ndarray, ...], hole: int, last: int) -> None:
    """Copy row ``last`` of every column into row ``hole`` (what a
    swap-and-pop removal does to the rows).

    Examples
    --------
    >>> columns = (np.arange(3), np.arange(3.0))
    >>> move_rows(columns, 0, 2); columns[0].tolist(), columns[1].tolist()
    ([2, 1, 2], [2.0, 1.0, 2.0])
    """
    for column in columns:
        column[hole] = column[last]


@overload(move_rows)
def _move_rows_compiled(columns, hole, last):  # type: ignore[no-untyped-def]
    if len(columns) == 0:
        return lambda columns, hole, last: None
    first = columns[0]
    if first.ndim == 1 and isinstance(first.dtype, types.Number | types.Boolean):

        def impl(columns, hole, last):  # type: ignore[no-untyped-def]
            columns[0][hole] = columns[0][last]
            move_rows(columns[1:], hole, last)

        return impl

    def move_bytes(columns, hole, last):  # type: ignore[no-untyped-def]
        copy_row(columns[0], hole, last)  # type: ignore[call-arg]
        move_rows(columns[1:], hole, last)

    return move_bytes


@intrinsic
def copy_row(typingctx: Any, column: Any, hole: Any, last: Any) -> Any:
    """Copy row ``last`` of a C-contiguous ``column`` onto row ``hole``, as
    bytes, for rows numba copies only through a temporary array (more
    than one dimension, text, records), which code without NRT cannot
    allocate. Nothing happens unless both rows are in the column."""
    if not isinstance(column, types.Array) or column.layout != "C":
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        array = context.make_array(column)(context, builder, value=args[0])
        intp = context.get_value_type(types.intp)
        to = context.cast(builder, args[1], sig.args[1], types.intp)
        source = context.cast(builder, args[2], sig.args[2], types.intp)
        shape = cgutils.unpack_tuple(builder, array.shape, column.ndim)
        strides = cgutils.unpack_tuple(builder, array.strides, column.ndim)
        rows = shape[0]
        inside = builder.and_(
            builder.icmp_unsigned("<", to, rows),
            builder.icmp_unsigned("<", source, rows),
        )
        with builder.if_then(inside):
            data = builder.bitcast(array.data, cgutils.voidptr_t)
            row_bytes = strides[0]
            target = builder.gep(data, [builder.mul(to, row_bytes)])
            origin = builder.gep(data, [builder.mul(source, row_bytes)])
            cgutils.raw_memmove(builder, target, origin, intp(1), row_bytes)
        return context.get_dummy_value()

    return types.none(column, hole, last), codegen


@register_jitable
def grown_rows(column: np.ndarray, rows: Int) -> np.ndarray:
    """A copy of ``column`` with ``rows`` rows, zeros past the old ones.

    Examples
    --------
    >>> grown_rows(np.ones((1, 2)), 2).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    grown = np.zeros((rows, *column.shape[1:]), column.dtype)
    grown[: column.shape[0]] = column
    return grown


def grown_columns(columns: tuple[np.ndarray, ...], rows: int) -> tuple[np.ndarray, ...]:
    """Every column grown to ``rows`` rows (see :func:`grown_rows`).

    Examples
    --------
    >>> [c.shape for c in grown_columns((np.ones(1), np.ones((1, 3))), 4)]
    [(4,), (4, 3)]
    """
    return tuple(grown_rows(column, rows) for column in columns)


@overload(grown_columns)
def _grown_columns_compiled(columns, rows):  # type: ignore[no-untyped-def]
    if len(columns) == 0:
        return lambda columns, rows: ()

    def impl(columns, rows):  # type: ignore[no-untyped-def]
        return (grown_rows(columns[0], rows), *grown_columns(columns[1:], rows))

    return impl


# -- checkpoints: one token, (owner, serial, stamp), on every state --------


@register_jitable(inline="always")
def owned_serial(state: Any, token: tuple[Int, Int, Int]) -> Int:
    """The token's serial if ``state`` issued it, else -1 (which no
    checkpoint has): a token of another container is never misread."""
    serial = token[1]
    if token[0] != state.owner:
        serial = -1
    return serial


# -- a twin's methods ---------------------------------------------------------


@typed_njit(**NO_NRT)
def find_key(twin: Any, key: Int) -> int:
    """The position of ``key`` in the twin, or -1."""
    return find(twin.sparse, twin.dense, twin.n, key)


@overload_method(TwinType, "index", inline="always")
def _index(self, i):  # type: ignore[no-untyped-def]
    if kind_of(self) is Kind.SET_ARRAY:
        return None
    return lambda self, i: nrt_free_call(find_key, (self, key_of(self, i)))  # type: ignore[call-arg]


@overload_method(TwinType, "add", inline="always")
def _add(self, i):  # type: ignore[no-untyped-def]
    if kind_of(self) is Kind.SET_ARRAY:
        return None
    if keeps_bits(self):
        return lambda self, i: _add_key_in_step(self, i, key_of(self, i)) > 0
    return lambda self, i: _add_key(self, i, key_of(self, i)) > 0


def common_or_rare(common: Any, rare: Any, inline: bool = False) -> Any:
    """An intrinsic ``(twin, i, key)``: ``common(twin, key)``, a dispatcher
    compiled without NRT, and where that answers -1, ``rare(twin, i)``.

    Each is called through :func:`call_rarely`: with every call's error
    path a raise, numba's pruning pairs the caller's reference to the twin
    across the whole method before LLVM inlines anything (an ordinary
    call's error path in a loop of several methods joins their references
    into one pair it can no longer follow). The branch is here rather than
    in a method's code, as numba's inliner warns of a variable assigned
    on two paths.
    """

    def common_or_rare(typingctx: Any, twin: Any, i: Any, key: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            twin_value, i_value, key_value = args
            first = call_rarely(
                context,
                builder,
                common,
                types.int64(twin, key),
                (twin_value, key_value),
                inline=inline,
            )
            result = cgutils.alloca_once_value(builder, first)
            with cgutils.if_unlikely(
                builder, builder.icmp_signed("<", first, first.type(0))
            ):
                out = call_rarely(
                    context, builder, rare, types.int64(twin, i), (twin_value, i_value)
                )
                builder.store(out, result)
            return builder.load(result)

        return types.int64(twin, i, key), codegen

    return intrinsic(common_or_rare)


def call_rarely(
    context: Any,
    builder: Any,
    function: Any,
    signature: Any,
    args: Any,
    inline: bool = False,
) -> Any:
    """Call ``function`` (a dispatcher, compiled as it says, or a Python
    function, compiled here with NRT), an error it reports leaving the
    caller as a ``raise`` statement there would.

    numba returns a callee's error from the caller unmarked, and its
    reference-count pruning forgives a missing release only on a path
    that raises (a store to ``excinfo`` marked ``numba_exception_output``),
    so a reference taken before such a call and released after it would
    stay in the caller, atomic increments on every loop iteration. The
    error path is marked as a raise: numba releases nothing on either.
    """
    compiled: Any
    if isinstance(function, Dispatcher):
        compiled = function.get_compile_result(signature)
        context.add_linking_libs([compiled.library])
    else:
        compiled = context.compile_subroutine(builder, function, signature)
    status, out = context.call_internal_no_propagate(
        builder, compiled.fndesc, signature, args
    )
    if inline:
        always_inline(builder, compiled.fndesc.mangled_name)
    call_conv = context.call_conv
    with cgutils.if_unlikely(builder, status.is_error):
        in_try = call_conv.check_try_status(builder).in_try
        excinfo = call_conv._get_excinfo_argument(builder.function)
        store = builder.store(status.excinfoptr, excinfo)
        marker = builder.module.add_metadata([ir.IntType(1)(1)])
        store.set_metadata("numba_exception_output", marker)
        with builder.if_then(builder.not_(in_try)):
            builder.ret(status.code)
    return out


def always_inline(builder: Any, name: str) -> None:
    """Mark the newest call of ``name`` in the builder's function
    ``alwaysinline``.

    LLVM inlines a small body on its own, but not one with a loop (a
    SetArray's rollback), and then the call's error status stays unknown:
    in a recursive caller (a backtracking search) numba's pruning leaves
    the reference it takes around the call, an atomic increment and
    decrement each time. Inlined, the NRT-free body is seen never to
    fail, and the pair goes.
    """
    for block in reversed(builder.function.blocks):
        for instruction in reversed(block.instructions):
            if (
                isinstance(instruction, ir.CallInstr)
                and getattr(instruction.callee, "name", None) == name
            ):
                instruction.attributes.add("alwaysinline")
                return


@intrinsic
def nrt_free_call(typingctx: Any, function: Any, args: Any) -> Any:
    """``function(*args)`` for a dispatcher compiled without NRT and a
    tuple ``args``, called through :func:`call_rarely`: the methods inlined
    into a caller call their bodies so, and their errors (bounds checks
    only) leave the caller as raises."""
    signature = typingctx.resolve_function_type(function, tuple(args), {})
    if signature is None:
        return None
    dispatcher = function.dispatcher

    def codegen(context: Any, builder: Any, sig: Any, values: Any) -> Any:
        unpacked = cgutils.unpack_tuple(builder, values[1], len(args))
        return call_rarely(
            context, builder, dispatcher, signature, unpacked, inline=True
        )

    return signature.return_type(function, args), codegen


@typed_njit(**NO_NRT)
def add_in_place(twin: Any, key: Int) -> int:
    """``add``'s common path, without reference counting: 1 if ``key`` is
    added at ``n`` (its rows zeroed), 0 if it is a member, -1 (nothing
    changed) if the index or the rows need room first, or ``key`` is bad."""
    n: int = twin.n
    p = -1
    if n < twin.dense.shape[0]:
        # -1 for an id the index cannot take yet (or ever: bad ids).
        p = claim(twin.sparse, twin.dense, n, key)
    if p < 0:
        return -1
    return added_at(twin, n, p)


@register_jitable(inline="always")
def added_at(twin: Any, n: int, p: int) -> int:
    """Finish an add that claimed position ``p`` with ``n`` members: 1
    (rows zeroed, ``n`` and ``epoch`` advanced) if ``p`` is the new one,
    else 0. An int64 either way, a Python int to the callers."""
    if p < n:
        return np.int64(0)  # type: ignore[return-value]
    zero_rows(column_arrays(twin), n)
    twin.n = n + 1
    twin.epoch += 1
    return np.int64(1)  # type: ignore[return-value]


def add_after_room(twin: Any, i: Int) -> int:
    """``add``'s rare path: room made (or ``ValueError`` for a bad id),
    then the add finished as :func:`add_in_place` does."""
    n = twin.n
    return added_at(twin, n, twin.make_room(i))


_add_key = common_or_rare(add_in_place, add_after_room)


# -- a set twin's member bitmap, kept in step ---------------------------------
#
# A plain set's twin over a flat index holds its members as a bitmap too
# (types.BITS_FIELDS), current while n and epoch are bits_n and bits_epoch.
# Each method here that changes the members keeps a current bitmap in step
# and tags it with the n and epoch it leaves; any other change moves n or
# epoch past the tags. Only a rollback (here or from Python) brings an n
# and epoch back, so a rollback of a stale bitmap tags it stale for good
# (bits_n -1): removals from there could reach its old tags with other
# members. A clear (from Python) makes it current again.


def bits_current(twin: Any) -> bool:
    """Whether ``twin`` keeps a member bitmap that is current (in compiled
    code, decided per twin type: see the overload).

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> bits_current(SparseSet().jit), bits_current(SparseSet(index="hash").jit)
    (True, False)
    """
    return bool(twin.current_bits() is not None)


@overload(bits_current, inline="always")
def _bits_current(twin):  # type: ignore[no-untyped-def]
    if keeps_bits(twin):
        return lambda twin: twin.bits_n == twin.n and twin.bits_epoch == twin.epoch
    return lambda twin: False


@register_jitable(inline="always")
def _bit_of(bits: np.ndarray, key: Int) -> tuple[np.uint64, np.uint64, Bool]:
    """``(word, bit)`` of ``key`` in ``bits``, and whether it is in range
    (never for a negative key)."""
    word = np.uint64(key) >> np.uint64(6)
    bit = np.uint64(1) << (np.uint64(key) & np.uint64(63))
    return word, bit, word < np.uint64(bits.shape[0])


@register_jitable(inline="always")
def _set_bits(
    bits: np.ndarray, dense: IntArray, start: Int, stop: Int, on: bool
) -> None:
    """Set (``on``) or clear the bits of ``dense[start:stop]``."""
    for k in range(start, stop):
        word, bit, _ = _bit_of(bits, dense[k])
        if on:
            bits[word] |= bit
        else:
            bits[word] &= ~bit


@typed_njit(**NO_NRT)
def contains_in_step(twin: Any, key: Int) -> Bool:
    """``contains`` on a twin that keeps a member bitmap: one bit while it
    is valid, else the index."""
    n = twin.n
    # The tags first: a stale bitmap costs a compare or two, not its loads.
    if bits_current(twin):
        bits: np.ndarray = twin.member_bits
        word, bit, inside = _bit_of(bits, key)
        if inside:
            held: np.uint64 = bits[word]
            return bool(held & bit != np.uint64(0))
    return find(twin.sparse, twin.dense, n, key) >= 0


@typed_njit(**NO_NRT)
def add_in_step(twin: Any, key: Int) -> int:
    """``add``'s common path on a twin that keeps a member bitmap: while it
    is valid, a member is known by one bit, and a new id goes in without
    reading the index, the bitmap and its tags kept in step; otherwise
    :func:`add_in_place` (-1 where room must be made first)."""
    n = twin.n
    epoch = twin.epoch
    if bits_current(twin):
        bits = twin.member_bits
        word, bit, inside = _bit_of(bits, key)
        if inside:
            held = bits[word]
            if held & bit:
                return np.int64(0)  # type: ignore[return-value]
            sparse = twin.sparse
            dense = twin.dense
            if n < dense.shape[0] and np.uint64(key) < np.uint64(sparse.shape[0]):
                bits[word] = held | bit
                sparse[key] = n
                dense[n] = key
                twin.n = n + 1
                twin.epoch = epoch + 1
                twin.bits_n = n + 1
                twin.bits_epoch = epoch + 1
                return np.int64(1)  # type: ignore[return-value]
    return add_in_place(twin, key)


def add_after_room_in_step(twin: Any, i: Int) -> int:
    """``add``'s rare path on a twin that keeps a member bitmap: as
    :func:`add_after_room`, the bitmap grown with the index and kept in
    step if it was valid."""
    n = twin.n
    valid = bits_current(twin)
    added = added_at(twin, n, twin.make_room(i))
    if valid:
        bits = twin.member_bits
        words = (twin.sparse.shape[0] + 63) // 64
        if bits.shape[0] < words:
            grown = np.zeros(words, np.uint64)
            grown[: bits.shape[0]] = bits
            twin.member_bits = grown
            bits = grown
        # A plain set's twin: the id is its key.
        word, bit, _ = _bit_of(bits, i)
        bits[word] |= bit
        twin.bits_n = twin.n
        twin.bits_epoch = twin.epoch
    return added


_add_key_in_step = common_or_rare(add_in_step, add_after_room_in_step, inline=True)


def bits_removed(twin: Any, before: Int, current: bool) -> None:
    """Clear the bits of ``dense[n:before]``, just removed, and tag the
    bitmap, if ``twin`` keeps one and it was ``current`` before.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> twin = SparseSet.from_ids([1, 2]).jit
    >>> twin.n = 1; bits_removed(twin, 2, True); twin.current_bits().tolist()
    [2]
    """
    bits = getattr(twin, BITS_FIELDS[0], None)
    if current and bits is not None:
        n = twin.n
        unmark_members(bits, twin.dense[n:before], before - n)
        twin.tag_bits()


@overload(bits_removed, inline="always")
def _bits_removed(twin, before, current):  # type: ignore[no-untyped-def]
    if not keeps_bits(twin):
        return lambda twin, before, current: None

    def impl(twin, before, current):  # type: ignore[no-untyped-def]
        if current:
            _set_bits(twin.member_bits, twin.dense, twin.n, before, False)
            twin.bits_n = twin.n

    return impl


def bits_restored(twin: Any, before: Int, current: bool) -> None:
    """After a rollback from ``n = before``: set the bits of
    ``dense[before:n]``, restored, and tag the bitmap, if ``twin`` keeps
    one and it was ``current`` before; else tag it stale until a clear.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> twin = SparseSet.from_ids([1, 2]).jit
    >>> bits_restored(twin, 1, False); twin.current_bits() is None
    True
    """
    bits = getattr(twin, BITS_FIELDS[0], None)
    if bits is not None:
        n = twin.n
        if current:
            mark_members(bits, twin.dense[before:n], n - before)
        twin.tag_bits(current)


@overload(bits_restored, inline="always")
def _bits_restored(twin, before, current):  # type: ignore[no-untyped-def]
    if not keeps_bits(twin):
        return lambda twin, before, current: None

    def impl(twin, before, current):  # type: ignore[no-untyped-def]
        if current:
            _set_bits(twin.member_bits, twin.dense, before, twin.n, True)
            twin.bits_n = twin.n
        else:
            # Removals from here could reach the old tags with other
            # members: stale until a clear.
            twin.bits_n = -1

    return impl


@overload_method(TwinType, "make_room")
def _make_room(self, i):  # type: ignore[no-untyped-def]
    """``add``'s rare path: a bad id raises ``ValueError``; a member gives
    its position; otherwise the index and the rows grow as needed and the
    id is claimed at ``n`` (the caller finishes the add)."""
    kind = kind_of(self)
    if kind is Kind.SET_ARRAY:
        return None
    message = (
        "add takes live handles: this one is dead or was never created"
        if kind is Kind.WORLD_STORE
        else "id is negative or outside the index's range"
    )

    def impl(self, i):  # type: ignore[no-untyped-def]
        key = key_of(self, i)
        if key < 0 or not in_range(self.sparse, key):
            raise ValueError(message)
        p = find(self.sparse, self.dense, self.n, key)
        if p >= 0:
            return p
        # The index first: a flat index's size caps the rows dense may have.
        while not accepts(self.sparse, key):
            self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, key)
        if self.n == self.dense.shape[0]:
            limit = int(row_limit(self.sparse))
            rows = grown_length(self.dense.shape[0], self.n + 1, limit)
            old = self.dense
            dense = np.empty(rows, old.dtype)
            dense[: old.shape[0]] = old
            self.dense = dense
            replace_columns(self, grown_columns(column_arrays(self), rows))
        p = claim(self.sparse, self.dense, self.n, key)
        while p < 0:
            self.sparse = grow(self.sparse, self.dense, self.n, self.n + 1, key)
            p = claim(self.sparse, self.dense, self.n, key)
        return p

    return impl


@typed_njit(**NO_NRT)
def handle_at(twin: Any, k: Int) -> int:
    """A World store twin's handle of row ``k``, without reference counting."""
    # An int64, a Python int to the callers.
    return handle_of(twin.generations, twin.dense[k])  # type: ignore[return-value]


@overload_method(TwinType, "handle", inline="always")
def _handle(self, k):  # type: ignore[no-untyped-def]
    if kind_of(self) is not Kind.WORLD_STORE:
        return None
    return lambda self, k: nrt_free_call(handle_at, (self, k))  # type: ignore[call-arg]


# Backtracking methods are a set's: a store's removed rows are gone. Each
# is inlined as add is, its body compiled without NRT; their errors need
# no allocation (a constant message), so the body raises them itself.


@typed_njit(**NO_NRT)
def rollback_in_place(twin: Any, token: tuple[Int, Int, Int]) -> None:
    """``rollback`` without reference counting: the set back at
    ``token``, or ``ValueError`` (nothing changed) if it is not a live
    checkpoint of this set."""
    count = marked_count(
        twin.marks, twin.depth, twin.epoch, owned_serial(twin, token), token[2]
    )
    if count < 0:
        raise ValueError(
            "not a live checkpoint of this set: an add, clear, sort or growth "
            "since it was taken, or a rollback to an older one, invalidated it"
        )
    n = twin.n
    current = bits_current(twin)
    reindex(twin.sparse, twin.dense, n, count)
    twin.n = count
    if count != n:
        bits_restored(twin, n, current)
    twin.depth = token[1] + 1


@register_jitable
def _reject_negative(ids: IntArray) -> None:
    for k in range(ids.shape[0]):
        if ids[k] < 0:
            raise ValueError("ids must be non-negative")


@typed_njit(**NO_NRT)
def discard_in_place(twin: Any, ids: IntArray) -> int:
    """``discard`` without reference counting: the number of members
    removed, or ``ValueError`` (nothing changed) if an id is negative."""
    _reject_negative(ids)
    n = twin.n
    current = bits_current(twin)
    for k in range(ids.shape[0]):
        p = find(twin.sparse, twin.dense, twin.n, ids[k])
        if p >= 0:
            twin.n = swap_remove(twin.sparse, twin.dense, twin.n, p)
    bits_removed(twin, n, current)
    # An int64, a Python int to the callers.
    return n - twin.n  # type: ignore[no-any-return]


@typed_njit(**NO_NRT)
def keep_only_in_place(twin: Any, ids: IntArray) -> int:
    """``keep_only`` without reference counting: the number of members
    removed, or ``ValueError`` (nothing changed) if an id is negative."""
    _reject_negative(ids)
    n = twin.n
    current = bits_current(twin)
    twin.n = keep_only(twin.sparse, twin.dense, n, ids)
    bits_removed(twin, n, current)
    # An int64, a Python int to the callers.
    return n - twin.n  # type: ignore[no-any-return]


@typed_njit(**NO_NRT)
def pop_in_place(twin: Any) -> int:
    """``pop`` without reference counting: the last member, removed, or
    ``KeyError`` if the set is empty."""
    n = twin.n
    if n == 0:
        raise KeyError("pop from an empty set")
    current = bits_current(twin)
    twin.n = n - 1
    unindex(twin.sparse, twin.dense, n - 1, n)
    bits_removed(twin, n, current)
    # Of the set's own dtype, a Python int to the callers.
    return twin.dense[n - 1]  # type: ignore[no-any-return]


@overload_method(TwinType, "discard", inline="always")
def _discard(self, ids):  # type: ignore[no-untyped-def]
    if kind_of(self) is not Kind.SET:
        return None
    return lambda self, ids: nrt_free_call(discard_in_place, (self, ids))  # type: ignore[call-arg]


@overload_method(TwinType, "keep_only", inline="always")
def _keep_only(self, ids):  # type: ignore[no-untyped-def]
    if kind_of(self) is not Kind.SET:
        return None
    return lambda self, ids: nrt_free_call(keep_only_in_place, (self, ids))  # type: ignore[call-arg]


@overload_method(TwinType, "pop", inline="always")
def _pop(self):  # type: ignore[no-untyped-def]
    if kind_of(self) is not Kind.SET:
        return None
    return lambda self: nrt_free_call(pop_in_place, (self,))  # type: ignore[call-arg]


# -- a SetArray's methods -----------------------------------------------------
#
# On the state's arrays, through the NRT-free kernels of
# sparseset.kernels.set_rows; none of them raises.


@typed_njit(**NO_NRT)
def set_array_remove(st: Any, k: Int, v: Int) -> Bool:
    """Remove value ``v`` from set ``k``, trailing it; True if it was there."""
    removed = row_remove(st.sparse, st.dense, st.sizes, st.trail, st.trail_len, k, v)
    st.trail_len += removed
    return removed


@typed_njit(**NO_NRT)
def set_array_contains(st: Any, k: Int, v: Int) -> Bool:
    return row_contains(st.sparse, st.dense, st.sizes, k, v)


@register_jitable
def _values(st: Any, k: Int) -> np.ndarray:
    """The members of set ``k`` (a view; empty for a number that is no set)."""
    size = row_size(st.sizes, k)
    row: Int = 0
    if size > 0:
        row = k
    # Row 0 exists even in an empty SetArray (see SetArray.__init__).
    members: np.ndarray = st.dense[row, :size]
    return members


@register_jitable
def _assign(st: Any, k: Int, v: Int) -> Int:
    """Keep only ``v`` in set ``k`` (nothing, if it is absent); the number
    of values removed, each trailed."""
    removed: Int = 0
    # From the back, each an O(1) removal; ``v`` moves only if it is hit.
    for j in range(row_size(st.sizes, k) - 1, -1, -1):
        x = st.dense[k, j]
        if x != v:
            removed += set_array_remove(st, k, x)
    return removed


@typed_njit(**NO_NRT)
def set_array_rollback(st: Any, token: tuple[Int, Int, Int]) -> bool:
    """Undo every removal since checkpoint ``token``; False (nothing
    undone) if it is not a live checkpoint of this state."""
    st.trail_len, st.depth, live = roll_back(
        st.sizes,
        st.trail,
        st.trail_len,
        st.marks,
        st.depth,
        st.epoch,
        owned_serial(st, token),
        token[2],
    )
    return live


def _only_set_array(self: TwinType) -> bool:
    return kind_of(self) is Kind.SET_ARRAY


@overload_method(TwinType, "size")
def _size(self, k):  # type: ignore[no-untyped-def]
    # A twin's size is an attribute (see .types).
    if not _only_set_array(self):
        return None
    return lambda self, k: row_size(self.sizes, k)


@overload_method(TwinType, "values", inline="always")
def _ol_values(self, k):  # type: ignore[no-untyped-def]
    if not _only_set_array(self):
        return None
    return lambda self, k: _values(self, k)


@overload_method(TwinType, "assign")
def _ol_assign(self, k, v):  # type: ignore[no-untyped-def]
    if not _only_set_array(self):
        return None
    return lambda self, k, v: _assign(self, k, v)


# -- methods both kinds have, with their own arguments ------------------------
#
# numba resolves a method name to one overload per type class, so a name
# that twins and SetArray states share takes both kinds' arguments (a
# twin's ``i``, a SetArray's ``k, v``), and refuses the other kind's at
# compile time (numba's inliner takes no ``*args``). The bodies are
# functions compiled without NRT, called through nrt_free_call: inlined
# into the caller, they count no references there.


def _given(v: Any) -> bool:
    return v is not None and not isinstance(v, types.Omitted | types.NoneType)


@overload_method(TwinType, "contains", inline="always")
def _contains(self, i, v=None):  # type: ignore[no-untyped-def]
    if kind_of(self) is Kind.SET_ARRAY:
        if not _given(v):
            return None
        return lambda self, i, v=None: nrt_free_call(  # type: ignore[call-arg]
            set_array_contains, (self, i, v)
        )
    if _given(v):
        return None
    if keeps_bits(self):
        return lambda self, i, v=None: nrt_free_call(  # type: ignore[call-arg]
            contains_in_step, (self, key_of(self, i))
        )
    # find answers absent for any id the index never holds, negative
    # included (and key_of gives -1 for a dead handle).
    return lambda self, i, v=None: (
        nrt_free_call(find_key, (self, key_of(self, i))) >= 0  # type: ignore[call-arg]
    )


@overload_method(TwinType, "remove", inline="always")
def _remove(self, i, v=None):  # type: ignore[no-untyped-def]
    if kind_of(self) is Kind.SET_ARRAY:
        if not _given(v):
            return None
        return lambda self, i, v=None: nrt_free_call(  # type: ignore[call-arg]
            set_array_remove, (self, i, v)
        )
    if _given(v):
        return None
    if REMOVAL_FIELDS[0] in self.field_dict:
        # A tracked component: the handle is logged for the world's readers.
        return lambda self, i, v=None: _remove_logged(self, i, key_of(self, i)) > 0
    return lambda self, i, v=None: nrt_free_call(  # type: ignore[call-arg]
        remove_in_place, (self, key_of(self, i))
    )


@typed_njit(**NO_NRT)
def remove_in_place(twin: Any, key: Int) -> bool:
    """Remove ``key`` (swap-and-pop, rows moved), without reference
    counting; whether it was a member."""
    n = twin.n
    p = find(twin.sparse, twin.dense, n, key)
    if p >= 0:
        current = bits_current(twin)
        twin.n = swap_remove(twin.sparse, twin.dense, n, p)
        move_rows(column_arrays(twin), p, n - 1)
        bits_removed(twin, n, current)
    return p >= 0


@typed_njit(**NO_NRT)
def remove_logged_in_place(twin: Any, key: Int) -> int:
    """A tracked twin's remove, without reference counting: 1 if ``key``
    was a member (its handle logged), 0 if not, -1 (nothing changed) if
    the log is full."""
    n = twin.n
    p = find(twin.sparse, twin.dense, n, key)
    if p < 0:
        return 0
    count = twin.removed_count
    if count == twin.removed_handles.shape[0]:
        return -1
    twin.removed_handles[count] = handle_of(twin.generations, key)
    twin.removed_count = count + 1
    twin.n = swap_remove(twin.sparse, twin.dense, n, p)
    move_rows(column_arrays(twin), p, n - 1)
    return 1


def remove_after_log_room(twin: Any, i: Any) -> int:
    """A tracked twin's remove where the log is full: the log grown, then
    the remove done."""
    grow_log(twin)
    return remove_logged_in_place(twin, key_of(twin, i))


_remove_logged = common_or_rare(remove_logged_in_place, remove_after_log_room)


@register_jitable
def grow_log(twin: Any) -> None:
    """Double a tracked twin's removal log."""
    count = twin.removed_count
    grown = np.empty(max(2 * count, 1), np.int64)
    grown[:count] = twin.removed_handles[:count]
    twin.removed_handles = grown


@typed_njit(**NO_NRT)
def touch_in_place(twin: Any, key: Int) -> bool:
    """A tracked twin's ``touch`` of ``key``, without reference counting:
    its stamp set to 0; whether it is a member."""
    p = find(twin.sparse, twin.dense, twin.n, key)
    if p >= 0:
        twin._col__stamps[p, 1] = 0
    return p >= 0


@overload_method(TwinType, "touch", inline="always")
def _touch(self, i):  # type: ignore[no-untyped-def]
    """Declare the row of ``i`` written: a tracked component's readers see
    it in ``changed()`` (its stamp is set to 0, "written, not yet
    stamped", which the world stamps when a reader next asks). Whether
    ``i`` has the component; nothing is marked otherwise, and nothing at
    all on an untracked store."""
    if kind_of(self) is Kind.SET_ARRAY:
        return None
    if COLUMN_PREFIX + "_stamps" not in self.field_dict:
        return lambda self, i: self.contains(i)
    return lambda self, i: nrt_free_call(  # type: ignore[call-arg]
        touch_in_place, (self, key_of(self, i))
    )


@typed_njit(**NO_NRT)
def put_checkpoint(state: Any, count: Int) -> int:
    """``checkpoint``'s common path, without reference counting: push a
    checkpoint of ``count`` (a set's member count, a SetArray's trail
    length) onto ``state``'s marks and answer its stamp, or -1 (nothing
    changed) if the marks need room first."""
    depth = state.depth
    if depth == state.marks.shape[0]:
        return -1
    stamp = state.stamp
    state.depth = put_mark(state.marks, depth, count, state.epoch, stamp)
    state.stamp = stamp + 1
    # An int64, a Python int to the callers.
    return stamp  # type: ignore[no-any-return]


def checkpoint_after_room(state: Any, count: Int) -> int:
    """``checkpoint``'s rare path: the marks grown, then the push done."""
    state.marks = grown_marks(state.marks)
    return put_checkpoint(state, count)


_push_checkpoint = common_or_rare(put_checkpoint, checkpoint_after_room)


@register_jitable(inline="always")
def checkpoint_token(state: Any, stamp: Int) -> tuple[Int, Int, Int]:
    """The token of the checkpoint just pushed with ``stamp``: ``(owner,
    serial, stamp)``, its serial being the top row of the marks."""
    return (state.owner, state.depth - 1, stamp)


@overload_method(TwinType, "checkpoint", inline="always")
def _checkpoint(self):  # type: ignore[no-untyped-def]
    # Inlined, as add is: a call would take a reference to the state
    # around it on every search node.
    kind = kind_of(self)
    if kind is Kind.SET_ARRAY:
        return lambda self: checkpoint_token(
            self, _push_checkpoint(self, self.trail_len, self.trail_len)
        )
    if kind is Kind.SET:
        return lambda self: checkpoint_token(
            self, _push_checkpoint(self, self.n, self.n)
        )
    return None


@overload_method(TwinType, "rollback", inline="always")
def _rollback(self, token):  # type: ignore[no-untyped-def]
    kind = kind_of(self)
    if kind is Kind.SET_ARRAY:
        # A bool, not a raise: see the module docstring.
        return lambda self, token: nrt_free_call(  # type: ignore[call-arg]
            set_array_rollback, (self, token)
        )
    if kind is Kind.SET:
        return lambda self, token: nrt_free_call(  # type: ignore[call-arg]
            rollback_in_place, (self, token)
        )
    return None


__all__ = [
    "grow_log",
    "grown_columns",
    "grown_rows",
    "key_of",
    "move_rows",
    "zero_rows",
]
