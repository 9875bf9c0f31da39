"""Set algebra between two sparse sets, as one filtering kernel.

Union, intersection, difference and symmetric difference all reduce to
"append to an output set each id of one set whose membership in the other
is (or is not) wanted", so the loop exists once (:func:`filter_into`, and
:func:`filter_marked` for a bitmap of the probed set). :func:`combine`
runs a whole operation on two small sets in one call, where the cost of
starting a kernel is most of the work. Two large flat sets combine as
member bitmaps instead (:func:`mark_members`, :func:`combine_words`,
:func:`marked_ids`), 64 ids per word operation, as Roaring's bitmap
containers do;
:func:`marked_within` and :func:`marked_apart` compare them.
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.base import BaseContext
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import Signature
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from .element import find, push


@njit(cache=True)
def filter_into(
    ids, sparse, dense, n, keep_members, out_sparse, out_dense, out_n, start
):
    """Append to the out set each id of ``ids[start:]`` whose membership matches.

    ``ids`` must hold distinct ids the out index accepts (the members of
    another set), and none of them may already be in the out set. An id
    is kept when its membership in ``(sparse, dense, n)`` equals
    ``keep_members``. Returns ``(out_n, stop)`` as ``upsert`` does: ``stop``
    is -1 when done, else where the out index needs to grow first.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels import NO_POSITIONS, UPSERT_TUNING, upsert
    >>> sp = np.empty(32, np.uint32); de = np.empty(32, np.int32)
    >>> batch = np.array([3, 5, 12, 15, 18])
    >>> n, _ = upsert(sp, de, 0, batch, NO_POSITIONS, 0, *UPSERT_TUNING)
    >>> out_sp = np.empty(32, np.uint32); out_de = np.empty(5, np.int32)
    >>> a = np.array([1, 5, 10, 15, 20])
    >>> m, _ = filter_into(a, sp, de, n, True, out_sp, out_de, 0, 0)
    >>> out_de[:m].tolist()
    [5, 15]
    """
    for k in range(start, ids.shape[0]):
        x = ids[np.uint64(k)]
        if (find(sparse, dense, n, x) >= 0) == keep_members:
            pushed = push(out_sparse, out_dense, out_n, x)
            if pushed == out_n:
                return out_n, k
            out_n = pushed
    return out_n, -1


#: The operations of :func:`combine`: ``a & b``, ``a | b``, ``a - b``, ``a ^ b``.
AND, OR, SUB, XOR = 0, 1, 2, 3


@njit(cache=True)
def combine(op, a_sparse, a_dense, a_n, b_sparse, b_dense, b_n, out):
    """``a op b`` (one of :data:`AND`, :data:`OR`, :data:`SUB`, :data:`XOR`)
    written to ``out[:count]``; returns ``count``.

    ``out`` must have room for every member of the result (``a & b``: the
    smaller operand's size; ``a - b``: ``a``'s; ``|`` and ``^``: both).
    Each operand's members are distinct, so the result needs no index of
    its own to stay distinct: the caller builds it when first needed
    (:class:`~sparseset.sets.engine.PendingIndex`), and ``out`` is the
    one array a call needs. An intersection walks the smaller operand.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset.kernels.element import push
    >>> a_sp, b_sp = np.empty(16, np.uint32), np.empty(16, np.uint32)
    >>> a_de, b_de = np.empty(3, np.int32), np.empty(3, np.int32)
    >>> a_n = b_n = 0
    >>> for x in (1, 5, 9): a_n = push(a_sp, a_de, a_n, x)
    >>> for x in (5, 9, 12): b_n = push(b_sp, b_de, b_n, x)
    >>> out = np.empty(6, np.int32)
    >>> m = combine(XOR, a_sp, a_de, a_n, b_sp, b_de, b_n, out)
    >>> out[:m].tolist()
    [1, 12]
    """
    if op == AND and b_n < a_n:
        # Walk the smaller set: b & a has the same members.
        a_sparse, b_sparse = b_sparse, a_sparse
        a_dense, b_dense = b_dense, a_dense
        a_n, b_n = b_n, a_n
    out_n = 0
    for k in range(a_n):
        x = a_dense[np.uint64(k)]
        if op != OR and (find(b_sparse, b_dense, b_n, x) >= 0) != (op == AND):
            continue
        out[np.uint64(out_n)] = x
        out_n += 1
    if op in (OR, XOR):
        for k in range(b_n):
            x = b_dense[np.uint64(k)]
            if find(a_sparse, a_dense, a_n, x) < 0:
                out[np.uint64(out_n)] = x
                out_n += 1
    return out_n


@njit(cache=True)
def unmark_members(bits, dense, n):
    """Clear bit ``x`` of ``bits`` for each ``x`` of ``dense[:n]`` (ids no
    longer members), whose ids must all be below ``64 * len(bits)``.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.array([8 | 512, 64], np.uint64)
    >>> unmark_members(bits, np.array([3, 70]), 2); bits.tolist()
    [512, 0]
    """
    for k in range(n):
        x = np.uint64(dense[np.uint64(k)])
        bits[x >> np.uint64(6)] &= ~(np.uint64(1) << (x & np.uint64(63)))


@njit(cache=True)
def mark_members(bits, dense, n):
    """Set bit ``x`` of ``bits`` (uint64 words, zeroed) for each member ``x``
    of ``dense[:n]``, whose ids must all be below ``64 * len(bits)``.

    A bitmap of a flat set's members is 1/32 of its index: one that fits
    in L2 answers a membership probe with one cache hit, where the index
    takes two dependent misses (its slot, then dense).

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(2, np.uint64)
    >>> mark_members(bits, np.array([3, 70, 9]), 2); bits.tolist()
    [8, 64]
    """
    for k in range(n):
        x = np.uint64(dense[np.uint64(k)])
        bits[x >> np.uint64(6)] |= np.uint64(1) << (x & np.uint64(63))


@njit(cache=True)
def filter_marked(ids, bits, keep_members, out_sparse, out_dense, out_n, start):
    """:func:`filter_into` with membership read from a bitmap of the
    probed set (:func:`mark_members`) instead of its index and dense.

    Ids past the bitmap are not members. Returns ``(out_n, stop)`` as
    :func:`filter_into` does.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(1, np.uint64); mark_members(bits, np.array([5, 15]), 2)
    >>> out_sp = np.empty(128, np.uint32); out_de = np.empty(5, np.int32)
    >>> ids = np.array([1, 5, 10, 15, 99])
    >>> m, _ = filter_marked(ids, bits, True, out_sp, out_de, 0, 0)
    >>> out_de[:m].tolist()
    [5, 15]
    """
    words = np.uint64(bits.shape[0])
    for k in range(start, ids.shape[0]):
        x = ids[np.uint64(k)]
        u = np.uint64(x)
        w = u >> np.uint64(6)
        member = w < words and (bits[w] >> (u & np.uint64(63))) & np.uint64(1) != 0
        if member == keep_members:
            pushed = push(out_sparse, out_dense, out_n, x)
            if pushed == out_n:
                return out_n, k
            out_n = pushed
    return out_n, -1


@intrinsic
def popcount(
    typingctx: TypingContext, word: types.Integer
) -> tuple[Signature, Callable[..., Any]] | None:
    """The number of set bits of a uint64 (LLVM's ``ctpop``: one ``popcnt``
    where the CPU has it), in compiled code.

    Examples
    --------
    >>> import numpy as np
    >>> njit(lambda w: popcount(w))(np.uint64(0b1011))
    3
    """
    if word != types.uint64:
        return None

    def codegen(
        context: BaseContext, builder: Any, signature: Signature, args: Sequence[Any]
    ) -> Any:
        i64 = ir.IntType(64)
        ctpop = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64"
        )
        return builder.call(ctpop, args)

    return types.uint64(types.uint64), codegen


@njit(cache=True)
def combine_words(op, a_bits, b_bits, out_bits):
    """``a op b`` of two member bitmaps (:func:`mark_members`), a word at a
    time, into ``out_bits``; returns the result's member count.

    A word missing from the shorter bitmap counts as zero; ``out_bits``
    decides how many words are combined. This is why a bitmap wins set
    algebra: 64 ids per machine instruction.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.zeros(2, np.uint64), np.zeros(1, np.uint64)
    >>> mark_members(a, np.array([1, 5, 70]), 3); mark_members(b, np.array([5, 9]), 2)
    >>> out, ids = np.empty(2, np.uint64), np.empty(3 + 3, np.int32)
    >>> combine_words(XOR, a, b, out), ids[: marked_ids(out, ids)].tolist()
    (3, [1, 9, 70])
    """
    a_words, b_words = a_bits.shape[0], b_bits.shape[0]
    zero = np.uint64(0)
    count = np.uint64(0)
    for w in range(out_bits.shape[0]):
        x = a_bits[w] if w < a_words else zero
        y = b_bits[w] if w < b_words else zero
        if op == AND:
            z = x & y
        elif op == OR:
            z = x | y
        elif op == SUB:
            z = x & ~y
        else:
            z = x ^ y
        out_bits[w] = z
        count += popcount(z)  # type: ignore[call-arg, arg-type]
    return int(count)


@njit(cache=True)
def marked_ids(bits, out):
    """Fill ``out`` with the members of bitmap ``bits``, ascending; returns
    their count. ``out`` needs room for 3 more than the count: the members
    of a word are written four at a time (fewer branches to mispredict), so
    up to 3 slots past the last member are overwritten.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(2, np.uint64); mark_members(bits, np.array([70, 3]), 2)
    >>> out = np.empty(2 + 3, np.int32); out[:marked_ids(bits, out)].tolist()
    [3, 70]
    """
    zero = np.uint64(0)
    one = np.uint64(1)
    k = 0
    for w in range(bits.shape[0]):
        z = bits[w]
        if z == zero:
            continue
        base = w * 64
        count = int(popcount(z))  # type: ignore[call-arg]
        for i in range(k, k + count, 4):
            out[i] = base + int(trailing_zeros(z))
            z &= z - one
            out[i + 1] = base + int(trailing_zeros(z))
            z &= z - one
            out[i + 2] = base + int(trailing_zeros(z))
            z &= z - one
            out[i + 3] = base + int(trailing_zeros(z))
            z &= z - one
        k += count
    return k


@njit(cache=True)
def marked_within(a_bits, b_bits):
    """Whether every member of bitmap ``a_bits`` is one of ``b_bits``
    (``a <= b``), a word at a time.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.zeros(2, np.uint64), np.zeros(1, np.uint64)
    >>> mark_members(a, np.array([5]), 1); mark_members(b, np.array([5, 9]), 2)
    >>> marked_within(a, b), marked_within(b, a)
    (True, False)
    """
    b_words = b_bits.shape[0]
    for w in range(a_bits.shape[0]):
        y = b_bits[w] if w < b_words else np.uint64(0)
        if a_bits[w] & ~y != np.uint64(0):
            return False
    return True


@njit(cache=True)
def marked_apart(a_bits, b_bits):
    """Whether bitmaps ``a_bits`` and ``b_bits`` share no member.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.zeros(1, np.uint64), np.zeros(1, np.uint64)
    >>> mark_members(a, np.array([5]), 1); mark_members(b, np.array([9]), 1)
    >>> marked_apart(a, b)
    True
    """
    for w in range(min(a_bits.shape[0], b_bits.shape[0])):
        if a_bits[w] & b_bits[w] != np.uint64(0):
            return False
    return True


@njit(cache=True, nogil=True)
def marked_contains(bits, ids, out):
    """``out[k]``: whether ``ids[k]`` is a member of bitmap ``bits`` (ids past
    it are not). Returns True if some id may be negative, as
    :func:`~sparseset.kernels.batch.find_all` does: the sign bits of all
    ids are OR-ed together, and the caller looks for the culprit then.

    One probe of a bitmap that is 1/32 of the flat index (and 1/8 of a
    bool mask over the same ids) where the index takes two dependent
    misses. It only reads, so it releases the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.zeros(2, np.uint64); mark_members(bits, np.array([3, 70]), 2)
    >>> out = np.empty(4, np.bool_)
    >>> marked_contains(bits, np.array([70, 4, 3, 10**9]), out), out.tolist()
    (False, [True, False, True, False])
    """
    words = np.uint64(bits.shape[0])
    signs = np.int64(0)
    for k in range(ids.shape[0]):
        x = ids[k]
        signs |= np.int64(x)
        u = np.uint64(x)
        w = u >> np.uint64(6)
        out[k] = w < words and (bits[w] >> (u & np.uint64(63))) & np.uint64(1) != 0
    return signs < 0
