"""A Grid's twin: its arrays as one named tuple, and the compiled calls on it.

``g.jit`` hands ``@njit`` code a :class:`GridTwin`: the grid's set (index,
``dense``, ``n``), positions and cell table, the very arrays the grid
holds (no copy). The functions below run inside ``@njit`` code without
allocating: :func:`.grid_within` and :func:`.grid_cell` write ids into a
buffer the caller owns, :func:`.grid_move`, :func:`.grid_place` and
:func:`.grid_remove` change one member and re-bucket it at once, so agents
activated one at a time see each other's moves. The number of members
lives in ``meta[2]``, shared with the grid. Any Python-side change that
rebuilds the table makes the twin *stale* (every call answers -1), and
``g.jit`` hands out a fresh one.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..kernels import spaces as sk
from ..kernels.array_types import typed_njit
from ..kernels.element import find, push, swap_remove
from ..kernels.options import NO_NRT


class GridTwin(NamedTuple):
    """A Grid's arrays, for ``@njit`` code (see ``sparseset.jit.grid``).

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(cell=1.0); g.place([1, 2], [[0, 0], [3, 3]])
    2
    >>> tw = g.jit; int(tw.meta[2]), tw.pos.shape[1]
    (2, 2)
    """

    sparse: Any
    dense: np.ndarray
    pos: np.ndarray
    nxt: np.ndarray
    start: np.ndarray
    head: np.ndarray
    geo: np.ndarray
    win: np.ndarray
    meta: np.ndarray
    version: int


#: Every function taking the twin is inlined into its caller (numba's
#: IR-level inlining) and runs without NRT. A twin passed to a compiled
#: call is ten arrays copied in and out, more than a move costs;
#: inlined, numba reads each field where it is used. Without NRT nothing
#: here raises or allocates, and a caller compiled without NRT
#: (``@njit(_nrt=False)``) pays no reference counting on the twin's
#: fields; under NRT every field read may increment and decrement its
#: array's count. The price is compile time in every caller: numba copies
#: an inlined body's IR once per call site, with every body inlined into
#: it, again. So the small helpers on scalars and the table's arrays
#: (here and in ``kernels.spaces``) are plain compiled functions, which
#: LLVM inlines by itself, compiled once per signature.
_TWIN: Any = {"inline": "always", **NO_NRT}
#: A ring's size and its cells' total differ by this share of the size
#: (sixteen units in the last place) when the cell tiles the ring but
#: not exactly in floating point.
_ROUNDING = 16 * np.finfo(np.float64).eps

#: The metric codes :func:`.grid_within` takes.
EUCLIDEAN, CHEBYSHEV, MANHATTAN = sk.EUCLIDEAN, sk.CHEBYSHEV, sk.MANHATTAN


@typed_njit(**_TWIN)
def _live(tw: Any) -> Any:
    return tw.meta[1] == tw.version


@typed_njit(**_TWIN)
def grid_position(tw: Any, x: Any, out: Any) -> Any:
    """Write member ``x``'s position into ``out``; 1, 0 if absent, -1 if
    the twin is stale.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Grid
    >>> g = Grid(); g.place(5, [1.0, 2.0]); out = np.empty(2)
    1
    >>> grid_position(g.jit, 5, out), out.tolist()
    (1, [1.0, 2.0])
    """
    if not _live(tw):
        return -1
    s = find(tw.sparse, tw.dense, tw.meta[2], x)
    if s < 0:
        return 0
    for d in range(tw.pos.shape[1]):
        out[d] = tw.pos[s, d]
    return 1


@typed_njit(**_TWIN)
def grid_move(tw: Any, x: Any, x0: Any, x1: Any = 0.0, x2: Any = 0.0) -> Any:
    """Move member ``x`` to ``(x0, x1, x2)`` (finite; wrapped on a torus)
    and re-bucket it now; 1, 0 if ``x`` is absent, -1 if the twin is stale.

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([1, 2], [[0, 0], [5, 5]])
    2
    >>> grid_move(g.jit, 2, 0.5, 0.0), g.pairs(1.0)[0].tolist()
    (1, [1])
    """
    if not _live(tw):
        return -1
    s = find(tw.sparse, tw.dense, tw.meta[2], x)
    if s < 0:
        return 0
    return grid_move_slot(tw, s, x0, x1, x2)


@typed_njit(**_TWIN)
def _unlink(tw: Any, s: Any, b: Any) -> Any:
    """Take slot ``s`` out of bucket ``b``'s stray list."""
    prev = sk.END
    t = tw.head[b]
    while t != s:
        prev = t
        t = tw.nxt[t]
    if prev == sk.END:
        tw.head[b] = tw.nxt[s]
    else:
        tw.nxt[prev] = tw.nxt[s]


@typed_njit(**_TWIN)
def _settle(tw: Any, s: Any, b: Any) -> Any:
    """Slot ``s``, in bucket ``b`` and in no list: home, or a stray of ``b``;
    the change in the number of strays."""
    if sk.is_home(tw.start, s, b):
        tw.nxt[s] = sk.HOME
        return 0
    tw.nxt[s] = tw.head[b]
    tw.head[b] = s
    return 1


@typed_njit(**_TWIN)
def _bucket_now(tw: Any, s: Any) -> Any:
    """The bucket slot ``s`` is in (its position's), taking it out of a
    stray list."""
    b = sk.bucket_of_slot(tw.pos, s, tw.pos.shape[1], tw.geo, tw.win)
    if tw.nxt[s] == sk.HOME:
        return b
    _unlink(tw, s, b)
    tw.meta[0] -= 1
    return b


@typed_njit(**_TWIN)
def grid_place(tw: Any, x: Any, x0: Any, x1: Any = 0.0, x2: Any = 0.0) -> Any:
    """Put ``x`` (a valid id) at ``(x0, x1, x2)``: move it if a member, else
    add it. 1 if ``x`` is new, 0 if it moved, -1 if the twin is stale, -2
    if the grid has no room for another member (place it from Python,
    which grows the grid).

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(); g.place(1, [0.0, 0.0]); g.discard(1); tw = g.jit
    1
    1
    >>> grid_place(tw, 7, 0.5, 0.5), grid_place(tw, 7, 0.2, 0.2), g.ids.tolist()
    (1, 0, [7])
    """
    if not _live(tw):
        return -1
    n = tw.meta[2]
    if find(tw.sparse, tw.dense, n, x) >= 0:
        return 0 if grid_move(tw, x, x0, x1, x2) == 1 else -1
    if n >= tw.pos.shape[0] or n >= tw.dense.shape[0]:
        return -2
    if push(tw.sparse, tw.dense, n, x) == n:
        return -2
    dims = tw.pos.shape[1]
    tw.pos[n, 0] = _wrapped(x0, tw.geo[1])
    if dims > 1:
        tw.pos[n, 1] = _wrapped(x1, tw.geo[2])
    if dims > 2:
        tw.pos[n, 2] = _wrapped(x2, tw.geo[3])
    b = sk.bucket_of_slot(tw.pos, n, dims, tw.geo, tw.win)
    tw.meta[0] += _settle(tw, n, b)
    tw.meta[2] = n + 1
    return 1


@typed_njit(**_TWIN)
def grid_remove(tw: Any, x: Any) -> Any:
    """Remove member ``x``: 1, 0 if absent, -1 if the twin is stale. The
    last member moves into its slot (as every removal of a set).

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([1, 2, 3], [[0, 0], [0.5, 0], [9, 9]])
    3
    >>> grid_remove(g.jit, 1), sorted(g.ids.tolist()), g.pairs(1.0)[0].size
    (1, [2, 3], 0)
    """
    if not _live(tw):
        return -1
    n = tw.meta[2]
    p = find(tw.sparse, tw.dense, n, x)
    if p < 0:
        return 0
    last = n - 1
    _bucket_now(tw, p)
    moved = np.int64(-1)
    if p != last:
        moved = _bucket_now(tw, last)
    swap_remove(tw.sparse, tw.dense, n, p)
    if p != last:
        for d in range(tw.pos.shape[1]):
            tw.pos[p, d] = tw.pos[last, d]
        tw.meta[0] += _settle(tw, p, moved)
    if last < tw.start[tw.start.shape[0] - 1]:
        tw.nxt[last] = sk.GONE  # a range's slot with no member: skipped
        tw.meta[0] += 1  # scans must check their ranges from now on
    tw.meta[2] = last
    return 1


@typed_njit(**NO_NRT)
def _wrapped(x: Any, width: Any) -> Any:
    if width > 0.0:
        x = x % width
        if x >= width:
            x = 0.0
    return x


@typed_njit(**NO_NRT)
def _cell_at(f: Any, w: Any, u: Any) -> Any:
    """Coordinate ``f + u`` of an axis range, wrapped when ``w`` is not 0."""
    v = f + u
    if w > 0:
        v %= w
    return v


@typed_njit(**NO_NRT)
def _seen(ranges: Any, t0: Any, t1: Any, t2: Any, b: Any, win: Any) -> Any:
    """Whether a cell enumerated before ``(t0, t1, t2)`` has bucket ``b``
    (a hashed table's buckets may repeat)."""
    (f0, n0, w0), (f1, n1, w1), (f2, n2, w2) = ranges
    for u0 in range(n0):
        for u1 in range(n1):
            for u2 in range(n2):
                if u0 == t0 and u1 == t1 and u2 == t2:
                    return False
                v = sk.bucket_of(
                    _cell_at(f0, w0, u0), _cell_at(f1, w1, u1),
                    _cell_at(f2, w2, u2), win,
                )  # fmt: skip
                if v == b:
                    return True
    return False


@typed_njit(**NO_NRT)
def _range(c: Any, d: Any, r: Any, dims: Any, geo: Any, win: Any) -> Any:
    """Axis ``d``'s ``(first, count, wrap)`` of cells within ``r`` of cell
    ``c`` (one cell, 0, past ``dims``)."""
    if d >= dims:
        return np.int64(0), np.int64(1), np.int64(0)
    k = np.int64(math.ceil(r / geo[0]))
    tn = win[sk.W_TORUS + d]
    if tn > 0:
        # The ring's last cell is narrower than the rest by ``short``: k
        # cells that take it in reach ``short`` less than k cells, and one
        # more is needed where that falls short of r. A ``short`` within
        # rounding of the ring's size (a cell that tiles it, but not
        # exactly in floating point) is none: distances across the wrap
        # are no more exact than that.
        short = tn * geo[0] - geo[1 + d]
        if short > _ROUNDING * geo[1 + d] and k * geo[0] - short < r:
            k += 1
    return sk.axis_range(c, d, min(k, np.int64(2**40)), win)


@typed_njit(**_TWIN)
def _scan_run(
    tw: Any, b: Any, count: Any, x0: Any, x1: Any, x2: Any, metric: Any,
    rr: Any, out: Any, m: Any, slots: Any,
) -> Any:  # fmt: skip
    """The members of the ``count`` consecutive buckets from ``b`` within
    reach of the point, into ``out`` from ``m`` on (their slots if
    ``slots``, else their ids); the new ``m``. The buckets' slot ranges
    are one range; with no stray and no emptied slot (right after a
    build) every slot of it is a member at home."""
    dims = tw.pos.shape[1]
    clean = tw.meta[0] == 0
    n = tw.meta[2]
    for q in range(tw.start[b], tw.start[b + count]):
        if (clean or (q < n and tw.nxt[q] == sk.HOME)) and sk.close(
            tw.pos, q, x0, x1, x2, dims, tw.geo, metric, rr
        ):
            if m < out.shape[0]:
                out[m] = q if slots else tw.dense[q]
            m += 1
    if not clean:
        for d in range(b, b + count):
            q = tw.head[d]
            while q != sk.END:
                if sk.close(tw.pos, q, x0, x1, x2, dims, tw.geo, metric, rr):
                    if m < out.shape[0]:
                        out[m] = q if slots else tw.dense[q]
                    m += 1
                q = tw.nxt[q]
    return m


@typed_njit(**_TWIN)
def _within(
    tw: Any, x0: Any, x1: Any, x2: Any, r: Any, metric: Any, out: Any, slots: Any
) -> Any:
    """:func:`.grid_within`, answering slots if ``slots``."""
    if not _live(tw):
        return -1
    dims = tw.pos.shape[1]
    geo = tw.geo
    win = tw.win
    x0 = _wrapped(x0, geo[1])
    x1 = _wrapped(x1, geo[2]) if dims > 1 else 0.0
    x2 = _wrapped(x2, geo[3]) if dims > 2 else 0.0
    c0, c1, c2 = sk.cell_of_point(x0, x1, x2, dims, geo, win)
    ranges = (
        _range(c0, 0, r, dims, geo, win),
        _range(c1, 1, r, dims, geo, win),
        _range(c2, 2, r, dims, geo, win),
    )
    (f0, n0, w0), (f1, n1, w1), (f2, n2, w2) = ranges
    rr = r * r if metric == EUCLIDEAN else r
    hashed = win[sk.W_MODE] != 0
    m = 0
    if not hashed and dims == 2:
        # A dense table numbers the cells of a column consecutively: the
        # column's cells in reach are one run of buckets, two where it
        # wraps, each scanned as one range of slots.
        for t0 in range(n0):
            v0 = _cell_at(f0, w0, t0)
            u = f1 % w1 if w1 > 0 else f1
            first = min(n1, w1 - u) if w1 > 0 else n1
            b = sk.bucket_of(v0, u, f2, win)
            m = _scan_run(tw, b, first, x0, x1, x2, metric, rr, out, m, slots)
            if first < n1:
                b = sk.bucket_of(v0, np.int64(0), f2, win)
                m = _scan_run(tw, b, n1 - first, x0, x1, x2, metric, rr, out, m, slots)
        return m
    for t0 in range(n0):
        for t1 in range(n1):
            for t2 in range(n2):
                b = sk.bucket_of(
                    _cell_at(f0, w0, t0), _cell_at(f1, w1, t1),
                    _cell_at(f2, w2, t2), win,
                )  # fmt: skip
                if hashed and _seen(ranges, t0, t1, t2, b, win):
                    continue
                m = _scan_run(tw, b, 1, x0, x1, x2, metric, rr, out, m, slots)
    return m


@typed_njit(**_TWIN)
def grid_within(
    tw: Any, x0: Any, x1: Any, x2: Any, r: Any, metric: Any, out: Any
) -> Any:
    """The members within ``r`` of ``(x0, x1, x2)`` (unused axes: 0),
    written into ``out`` as far as it holds them; returns how many there
    are (-1 if the twin is stale). ``metric``: ``EUCLIDEAN``,
    ``CHEBYSHEV`` or ``MANHATTAN``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([1, 2, 3], [[0, 0], [0.5, 0], [4, 4]])
    3
    >>> out = np.empty(8, np.int64); k = grid_within(g.jit, 0.0, 0.0, 0.0, 1.0, 0, out)
    >>> sorted(out[:k].tolist())
    [1, 2]
    """
    return _within(tw, x0, x1, x2, r, metric, out, False)


@typed_njit(**_TWIN)
def grid_within_slots(
    tw: Any, x0: Any, x1: Any, x2: Any, r: Any, metric: Any, out: Any
) -> Any:
    """:func:`.grid_within`, answering the members' slots (see
    :func:`.grid_slot`) instead of their ids: ``tw.pos[s]`` is then the
    member's position and ``tw.dense[s]`` its id, with no look-up.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([1, 2, 3], [[0, 0], [0.5, 0], [4, 4]])
    3
    >>> tw = g.jit; out = np.empty(8, np.int64)
    >>> k = grid_within_slots(tw, 0.0, 0.0, 0.0, 1.0, 0, out)
    >>> sorted(tw.dense[out[:k]].tolist())
    [1, 2]
    """
    return _within(tw, x0, x1, x2, r, metric, out, True)


@typed_njit(**_TWIN)
def _cell(tw: Any, c0: Any, c1: Any, c2: Any, out: Any, slots: Any) -> Any:
    """:func:`.grid_cell`, answering slots if ``slots``."""
    if not _live(tw):
        return -1
    dims = tw.pos.shape[1]
    win = tw.win
    c0 = _cell_at(c0, win[sk.W_TORUS], 0)
    c1 = _cell_at(c1, win[sk.W_TORUS + 1], 0) if dims > 1 else np.int64(0)
    c2 = _cell_at(c2, win[sk.W_TORUS + 2], 0) if dims > 2 else np.int64(0)
    t0 = sk.table_cell(c0, 0, win)
    t1 = sk.table_cell(c1, 1, win) if dims > 1 else c1
    t2 = sk.table_cell(c2, 2, win) if dims > 2 else c2
    b = sk.bucket_of(t0, t1, t2, win)
    # A dense table's bucket holds one cell's members only, unless the
    # cell is on the window's edge (where those outside are clamped in):
    # then no member's cell need be checked.
    exact = (
        win[sk.W_MODE] == 0
        and _inside(t0, 0, win)
        and (dims < 2 or _inside(t1, 1, win))
        and (dims < 3 or _inside(t2, 2, win))
    )
    m = 0
    q = tw.start[b]
    stray = tw.head[b]
    while True:
        if q < tw.start[b + 1]:
            s = q
            q += 1
            if s >= tw.meta[2] or tw.nxt[s] != sk.HOME:
                continue
        elif stray != sk.END:
            s = stray
            stray = tw.nxt[stray]
        else:
            break
        same = exact or sk.true_cell(tw.pos[s, 0], 0, tw.geo, win) == c0
        if dims > 1 and not exact:
            same = same and sk.true_cell(tw.pos[s, 1], 1, tw.geo, win) == c1
        if dims > 2 and not exact:
            same = same and sk.true_cell(tw.pos[s, 2], 2, tw.geo, win) == c2
        if same:
            if m < out.shape[0]:
                out[m] = s if slots else tw.dense[s]
            m += 1
    return m


@typed_njit(**NO_NRT)
def _inside(t: Any, d: Any, win: Any) -> Any:
    """Whether table cell ``t`` of a dense table holds no clamped cell on
    axis ``d``: inside the window's edge, or on a ring (never clamped)."""
    if win[sk.W_TORUS + d] > 0:
        return True
    lo = win[sk.W_LO + d] + win[sk.W_PAD]
    hi = win[sk.W_LO + d] + win[sk.W_N + d] - 1 - win[sk.W_PAD]
    return lo < t < hi


@typed_njit(**_TWIN)
def grid_cell(tw: Any, c0: Any, c1: Any, c2: Any, out: Any) -> Any:
    """The members whose cell is ``(c0, c1, c2)`` (unused axes: 0; wrapped on
    a torus), written into ``out`` as far as it holds them; returns how
    many there are (-1 if the twin is stale).

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Grid
    >>> g = Grid(cell=2.0); g.place([1, 2], [[0.5, 0.5], [2.5, 0]])
    2
    >>> out = np.empty(4, np.int64); k = grid_cell(g.jit, 1, 0, 0, out)
    >>> out[:k].tolist()
    [2]
    """
    return _cell(tw, c0, c1, c2, out, False)


@typed_njit(**_TWIN)
def grid_cell_slots(tw: Any, c0: Any, c1: Any, c2: Any, out: Any) -> Any:
    """:func:`.grid_cell`, answering the members' slots (see
    :func:`.grid_slot`) instead of their ids.

    Examples
    --------
    >>> import numpy as np
    >>> from sparseset import Grid
    >>> g = Grid(cell=2.0); g.place([1, 2], [[0.5, 0.5], [2.5, 0]])
    2
    >>> tw = g.jit; out = np.empty(4, np.int64); k = grid_cell_slots(tw, 1, 0, 0, out)
    >>> tw.dense[out[:k]].tolist()
    [2]
    """
    return _cell(tw, c0, c1, c2, out, True)


@typed_njit(**_TWIN)
def grid_slot(tw: Any, x: Any) -> Any:
    """Member ``x``'s slot: the row of the twin's arrays that holds it
    (``tw.dense[s]`` is ``x``, ``tw.pos[s]`` its position); -1 if ``x``
    is absent or the twin is stale.

    A slot stays the member's while the twin is live, except that
    :func:`.grid_remove` moves the last member into the slot it empties
    (:func:`.grid_place` adds past the last). Code that keeps slots (a
    table from its agents to their slots, taken once per live twin) then
    moves and finds members without looking ids up:
    :func:`.grid_move_slot`, :func:`.grid_cell_slots`,
    :func:`.grid_within_slots`.

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([4, 9], [[0, 0], [3, 3]])
    2
    >>> tw = g.jit; s = grid_slot(tw, 9)
    >>> int(tw.dense[s]), tw.pos[s].tolist(), grid_slot(tw, 5)
    (9, [3.0, 3.0], -1)
    """
    if not _live(tw):
        return -1
    return find(tw.sparse, tw.dense, tw.meta[2], x)


@typed_njit(**_TWIN)
def grid_move_slot(tw: Any, s: Any, x0: Any, x1: Any = 0.0, x2: Any = 0.0) -> Any:
    """:func:`.grid_move` of the member in slot ``s`` (see :func:`.grid_slot`):
    1, 0 if no member holds slot ``s``, -1 if the twin is stale.

    Examples
    --------
    >>> from sparseset import Grid
    >>> g = Grid(); g.place([1, 2], [[0, 0], [5, 5]])
    2
    >>> tw = g.jit; grid_move_slot(tw, grid_slot(tw, 2), 0.5, 0.0)
    1
    >>> g.pairs(1.0)[0].tolist()
    [1]
    """
    if not _live(tw):
        return -1
    if s < 0 or s >= tw.meta[2]:
        return 0
    dims = tw.pos.shape[1]
    x0 = _wrapped(x0, tw.geo[1])
    if dims > 1:
        x1 = _wrapped(x1, tw.geo[2])
    if dims > 2:
        x2 = _wrapped(x2, tw.geo[3])
    tw.meta[0] += sk.move_one(
        tw.pos, tw.nxt, tw.start, tw.head, s, x0, x1, x2, dims, tw.geo, tw.win
    )
    return 1


__all__ = [
    "CHEBYSHEV",
    "EUCLIDEAN",
    "MANHATTAN",
    "GridTwin",
    "grid_cell",
    "grid_cell_slots",
    "grid_move",
    "grid_move_slot",
    "grid_place",
    "grid_position",
    "grid_remove",
    "grid_slot",
    "grid_within",
    "grid_within_slots",
]
