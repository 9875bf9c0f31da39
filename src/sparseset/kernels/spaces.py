"""Grid kernels: members bucketed into cells, and who is near whom.

A grid keeps, beside a set's ``dense``, one row per slot: the position
(``pos``, ``(capacity, dims)`` float64) and, once a member has strayed
(below), a link (``nxt``, uint32). :func:`sort_cells` counting-sorts the
members by bucket into ``dense`` and ``pos`` themselves, so a bucket is
the slot range ``start[b]:start[b + 1]``: no order array and no second
copy of the coordinates, and neighbouring cells sit close in memory. A
member is *home* while the bucket of its position is the one whose range
holds its slot. A member that moves to another bucket after the build
(:func:`move`) stays in its slot and joins its new bucket's *stray list*
(``head[b]``, then ``nxt``); its ``nxt`` is :data:`HOME` while it is
home. Every scan takes a range's members at home, then the stray list;
with no stray (the grid's count of them is 0) every slot of a range is
home and ``nxt`` is never read, so a grid none of whose members strayed
holds none.

Cells are ``floor(x / cell)`` per axis. The cell table is *dense* (a
bucket per cell of a window, the members' bounding box at the build;
cells outside it are clamped to its edge, which keeps every neighbour
search complete, clamping being 1-Lipschitz) or *hashed* (a power-of-two
table; cells that collide share a bucket, and scans that must see each
bucket once sort and deduplicate). ``geo`` is ``[cell, width0, width1,
width2]`` (0: not periodic) and ``win`` the table's layout
(:data:`W_MODE` and the rest).
"""

import math

import numpy as np
from numba import njit

from .element import find
from .entities import GENERATION_MASK, INDEX_BITS
from .options import NO_NRT
from .prefetch import prefetch

#: ``nxt`` of a member in its own bucket's slot range.
HOME = np.uint32(0xFFFFFFFF)
#: The end of a stray list (and an empty ``head``).
END = np.uint32(0xFFFFFFFE)
#: ``nxt`` of a slot of a bucket's range that no member holds any more
#: (a twin's removal): never "home".
GONE = np.uint32(0xFFFFFFFD)
#: Cell coordinates are clamped to +-LIMIT (floats past int64 otherwise).
LIMIT = float(2**40)
#: ``win`` layout: mode (0 dense, 1 hashed), hash mask, window origin per
#: axis, window extent per axis, torus cells per axis (0: not periodic).
#: ``W_PAD``: the empty cells a dense window keeps around its members on
#: every side, so that the buckets within that many cells of a member's
#: are its own plus fixed offsets (see :func:`pairs`).
W_MODE, W_MASK, W_LO, W_N, W_TORUS, W_PAD = 0, 1, 2, 5, 8, 11
WIN_LENGTH = 12
#: Metrics by number.
EUCLIDEAN, CHEBYSHEV, MANHATTAN = 0, 1, 2


@njit(**NO_NRT)
def true_cell(x, d, geo, win):
    """The cell coordinate of ``x`` on axis ``d``, clamped to +-LIMIT and
    into a torus' cells, not into the window."""
    c = math.floor(x / geo[0])
    if c < -LIMIT:
        c = -LIMIT
    elif c > LIMIT:
        c = LIMIT
    ci = np.int64(c)
    tn = win[W_TORUS + d]
    if tn > 0:
        ci = min(max(ci, np.int64(0)), tn - 1)
    return ci


@njit(**NO_NRT)
def table_cell(c, d, win):
    """A true cell coordinate as the table sees it (clamped to the window,
    inside its padding)."""
    if win[W_MODE] == 0:
        lo = win[W_LO + d] + win[W_PAD]
        c = min(max(c, lo), win[W_LO + d] + win[W_N + d] - 1 - win[W_PAD])
    return c


@njit(inline="always", **NO_NRT)
def bucket_of(c0, c1, c2, win):
    """The bucket of table cell ``(c0, c1, c2)``."""
    if win[W_MODE] == 0:
        return ((c0 - win[W_LO]) * win[W_N + 1] + (c1 - win[W_LO + 1])) * win[
            W_N + 2
        ] + (c2 - win[W_LO + 2])
    h = np.uint64(c0) * np.uint64(0x9E3779B97F4A7C15)
    h ^= np.uint64(c1) * np.uint64(0xC2B2AE3D27D4EB4F)
    h ^= np.uint64(c2) * np.uint64(0x165667B19E3779F9)
    h ^= h >> np.uint64(31)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(win[W_MASK]))


@njit(inline="always", **NO_NRT)
def cell_of_point(x0, x1, x2, dims, geo, win):
    """The table cell of a point: three coordinates (0 past ``dims``)."""
    c0 = table_cell(true_cell(x0, 0, geo, win), 0, win)
    c1 = np.int64(0)
    c2 = np.int64(0)
    if dims > 1:
        c1 = table_cell(true_cell(x1, 1, geo, win), 1, win)
    if dims > 2:
        c2 = table_cell(true_cell(x2, 2, geo, win), 2, win)
    return c0, c1, c2


@njit(inline="always", **NO_NRT)
def bucket_of_slot(pos, s, dims, geo, win):
    """The bucket of the member in slot ``s``."""
    x1 = pos[s, 1] if dims > 1 else 0.0
    x2 = pos[s, 2] if dims > 2 else 0.0
    c0, c1, c2 = cell_of_point(pos[s, 0], x1, x2, dims, geo, win)
    return bucket_of(c0, c1, c2, win)


@njit(**NO_NRT)
def axis_range(c, d, k, win):
    """``(first, count, wrap)`` of the table cells within ``k`` of ``c`` on
    axis ``d``: cells ``first + t`` for ``t < count``, modulo ``wrap``
    when it is not 0; never one cell twice."""
    tn = win[W_TORUS + d]
    if tn > 0:
        if 2 * k + 1 >= tn:
            return np.int64(0), tn, np.int64(0)
        return c - k, 2 * k + 1, tn
    if win[W_MODE] == 0:
        lo = win[W_LO + d]
        first = max(c - k, lo)
        last = min(c + k, lo + win[W_N + d] - 1)
        return first, last - first + 1, np.int64(0)
    return c - k, 2 * k + 1, np.int64(0)


@njit(**NO_NRT)
def neighbour_buckets(c0, c1, c2, dims, reach, win, out):
    """Write the distinct buckets of the cells within ``reach[d]`` cells of
    ``(c0, c1, c2)`` into ``out``; return how many. A hashed table whose
    whole is no bigger than the list answers every bucket."""
    f0, n0, w0 = axis_range(c0, 0, reach[0], win)
    f1, n1, w1 = np.int64(0), np.int64(1), np.int64(0)
    f2, n2, w2 = np.int64(0), np.int64(1), np.int64(0)
    if dims > 1:
        f1, n1, w1 = axis_range(c1, 1, reach[1], win)
    if dims > 2:
        f2, n2, w2 = axis_range(c2, 2, reach[2], win)
    hashed = win[W_MODE] != 0
    if hashed and n0 * n1 * n2 >= win[W_MASK] + 1:
        for b in range(win[W_MASK] + 1):
            out[b] = b
        return win[W_MASK] + 1
    m = 0
    for t0 in range(n0):
        v0 = f0 + t0
        if w0 > 0:
            v0 %= w0
        for t1 in range(n1):
            v1 = f1 + t1
            if w1 > 0:
                v1 %= w1
            for t2 in range(n2):
                v2 = f2 + t2
                if w2 > 0:
                    v2 %= w2
                out[m] = bucket_of(v0, v1, v2, win)
                m += 1
    if hashed and m > 1:
        _shell_sort(out, m)
        kept = 1
        for j in range(1, m):
            if out[j] != out[kept - 1]:
                out[kept] = out[j]
                kept += 1
        m = kept
    return m


@njit(**NO_NRT)
def _shell_sort(out, m):
    """Sort ``out[:m]`` in place (no allocation: NRT-free)."""
    gap = 1
    while gap < m // 3:
        gap = 3 * gap + 1
    while gap > 0:
        for i in range(gap, m):
            v = out[i]
            j = i
            while j >= gap and out[j - gap] > v:
                out[j] = out[j - gap]
                j -= gap
            out[j] = v
        gap //= 3


@njit(**NO_NRT)
def close(pos, q, x0, x1, x2, dims, geo, metric, rr):
    """Whether slot ``q`` lies within the radius (``rr``: r squared for the
    euclidean metric, r otherwise) of the point."""
    e0 = abs(pos[q, 0] - x0)
    if geo[1] > 0.0 and e0 > 0.5 * geo[1]:
        e0 = geo[1] - e0
    e1 = 0.0
    e2 = 0.0
    if dims > 1:
        e1 = abs(pos[q, 1] - x1)
        if geo[2] > 0.0 and e1 > 0.5 * geo[2]:
            e1 = geo[2] - e1
    if dims > 2:
        e2 = abs(pos[q, 2] - x2)
        if geo[3] > 0.0 and e2 > 0.5 * geo[3]:
            e2 = geo[3] - e2
    if metric == EUCLIDEAN:
        return e0 * e0 + e1 * e1 + e2 * e2 <= rr
    if metric == CHEBYSHEV:
        return max(e0, max(e1, e2)) <= rr
    return e0 + e1 + e2 <= rr


@njit(**NO_NRT)
def bounds(pos, n, dims, geo, win, lo, hi):
    """The smallest and largest true cell of the members, per axis."""
    big = np.int64(2**62)
    lo0, lo1, lo2 = big, big, big
    hi0, hi1, hi2 = -big, -big, -big
    # Locals, not lo[d] and hi[d]: a loop carrying them through memory
    # waits on a store for every coordinate.
    for s in range(n):
        c = true_cell(pos[s, 0], 0, geo, win)
        lo0 = min(lo0, c)
        hi0 = max(hi0, c)
        if dims > 1:
            c = true_cell(pos[s, 1], 1, geo, win)
            lo1 = min(lo1, c)
            hi1 = max(hi1, c)
        if dims > 2:
            c = true_cell(pos[s, 2], 2, geo, win)
            lo2 = min(lo2, c)
            hi2 = max(hi2, c)
    lo[0], lo[1], lo[2] = lo0, lo1, lo2
    hi[0], hi[1], hi[2] = hi0, hi1, hi2
    for d in range(dims, 3):
        lo[d] = big
        hi[d] = -big


@njit(inline="always", **NO_NRT)
def _window_cell(x, cell, first, last):
    """:func:`true_cell` then :func:`table_cell` on a dense table, whose
    window cells ``[first, last]`` hold a torus' too: one clamp does both."""
    c = math.floor(x / cell)
    if c < -LIMIT:
        c = -LIMIT
    elif c > LIMIT:
        c = LIMIT
    return min(max(np.int64(c), first), last)


@njit(**NO_NRT)
def buckets_of(pos, n, dims, geo, win, cells):
    """``cells[s]``: the bucket of ``pos[s]`` (as :func:`bucket_of_slot`)
    for ``s < n``, the layout read once."""
    if win[W_MODE] != 0:
        for s in range(n):
            cells[s] = bucket_of_slot(pos, s, dims, geo, win)
        return
    cell = geo[0]
    pad = win[W_PAD]
    f0 = win[W_LO] + pad
    l0 = win[W_LO] + win[W_N] - 1 - pad
    f1 = win[W_LO + 1] + pad
    l1 = win[W_LO + 1] + win[W_N + 1] - 1 - pad
    f2 = win[W_LO + 2] + pad
    l2 = win[W_LO + 2] + win[W_N + 2] - 1 - pad
    o0, o1, o2 = win[W_LO], win[W_LO + 1], win[W_LO + 2]
    n1, n2 = win[W_N + 1], win[W_N + 2]
    for s in range(n):
        c0 = _window_cell(pos[s, 0], cell, f0, l0)
        c1 = o1
        c2 = o2
        if dims > 1:
            c1 = _window_cell(pos[s, 1], cell, f1, l1)
        if dims > 2:
            c2 = _window_cell(pos[s, 2], cell, f2, l2)
        cells[s] = ((c0 - o0) * n1 + (c1 - o1)) * n2 + (c2 - o2)


@njit(**NO_NRT)
def sort_cells(
    src_ids, src_pos, n, dense, pos, nxt, start, head, cells, dims, geo, win,
    check, home_from, order,
):  # fmt: skip
    """Counting-sort ``n`` members, ``src_ids[s]`` at ``src_pos[s]``, by
    bucket into ``dense[:n]`` and ``pos[:n]``: ``start`` gets each bucket's
    first slot, every member is home and every stray list empty. The
    index is left alone (the caller re-points it, or knows it stale); the
    sources must not be the destinations. ``cells`` (``n`` rows) is
    scratch room, for each source's bucket.

    With ``check``, first look whether every slot already holds the id and
    the position it would get (a table built from these same sources):
    then nothing is written and the answer is True. Else False. ``nxt``
    (empty: not held) says "home" from ``home_from`` on; before it, it
    does already. ``order`` (empty: not wanted) gets each source's slot,
    ``order[s]``.

    One pass to count, one to place: what a hand-written cell list
    costs, with no order array."""
    nb = start.shape[0] - 1
    start[:] = 0
    buckets_of(src_pos, n, dims, geo, win, cells)
    for s in range(n):
        start[cells[s] + 1] += 1
    for b in range(nb):
        start[b + 1] += start[b]
        head[b] = start[b]  # each bucket's next free slot, for now
    if check and _holds_sorted(
        src_ids, src_pos, n, dense, pos, cells, head, dims, order
    ):
        head[:] = END
        return True
    ordered = order.shape[0] > 0
    for s in range(n):
        b = cells[s]
        t = head[b]
        head[b] = t + 1
        dense[t] = src_ids[s]
        for d in range(dims):
            pos[t, d] = src_pos[s, d]
        if ordered:
            order[s] = t
    if nxt.shape[0] > 0:
        nxt[home_from:n] = HOME
    head[:] = END
    return False


@njit(**NO_NRT)
def _holds_sorted(src_ids, src_pos, n, dense, pos, cells, head, dims, order):
    """Whether the slots :func:`sort_cells` would write already hold what it
    would write there (``cells[s]``: source ``s``'s bucket; ``head[b]``:
    bucket ``b``'s first slot, put back as found; writing only ``order``,
    each source's slot, if not empty); stops at the first difference."""
    same = True
    stop = n
    ordered = order.shape[0] > 0
    for s in range(n):
        b = cells[s]
        t = head[b]
        head[b] = t + 1
        if ordered:
            order[s] = t
        if dense[t] != src_ids[s]:
            same = False
        for d in range(dims):
            if pos[t, d] != src_pos[s, d]:
                same = False
        if not same:
            stop = s + 1
            break
    for s in range(stop):  # back to each bucket's first slot
        head[cells[s]] -= 1
    return same


@njit(**NO_NRT)
def same_sorted(
    src_ids, src_pos, n, dense, pos, start, head, cells, dims, geo, win, order
):  # fmt: skip
    """Whether a table built with no stray since (every stray list empty:
    ``head`` is all :data:`END`) is what :func:`sort_cells` of these
    sources would build with the same layout: every slot holds the id and
    the position it would get. ``head`` and ``cells`` (``n`` rows) are
    scratch, ``head`` all END again after; ``order`` (empty: not wanted)
    gets each source's slot as far as the walk went. Stops at the first
    difference."""
    nb = start.shape[0] - 1
    for b in range(nb):
        head[b] = start[b]
    buckets_of(src_pos, n, dims, geo, win, cells)
    same = True
    # Each source's slot is a load of its bucket's cursor, scattered, and
    # then its row, scattered too: the cursors of sources far ahead and
    # the rows of those nearer are asked for early, so that the misses
    # overlap rather than follow one another.
    last = n - 1
    ordered = order.shape[0] > 0
    for s in range(n):
        if s + 16 <= last:
            prefetch(head, cells[s + 16])
        if s + 8 <= last:
            ahead = head[cells[s + 8]]
            prefetch(dense, ahead)
            prefetch(pos, ahead * dims)
        b = cells[s]
        t = head[b]
        if t >= start[b + 1] or dense[t] != src_ids[s]:
            same = False
            break
        head[b] = t + 1
        if ordered:
            order[s] = t
        for d in range(dims):
            if pos[t, d] != src_pos[s, d]:
                same = False
        if not same:
            break
    head[:] = END
    return same


@njit(**NO_NRT)
def same_rows(dense, pos, ids, values, n, dims, order):
    """Whether every ``ids[s]`` is in slot ``order[s]`` (``s`` itself when
    ``order`` is empty) at ``values[s]``; stops at the first difference."""
    ordered = order.shape[0] > 0
    for s in range(n):
        t = np.int64(order[s]) if ordered else s
        if t >= n or dense[t] != ids[s]:
            return False
        for d in range(dims):
            if pos[t, d] != values[s, d]:
                return False
    return True


@njit(inline="always", **NO_NRT)
def is_home(start, s, b):
    """Whether slot ``s`` is in bucket ``b``'s slot range."""
    return start[b] <= s < start[b + 1]


@njit(inline="always", **NO_NRT)
def move_one(pos, nxt, start, head, s, x0, x1, x2, dims, geo, win):
    """Move slot ``s`` to ``(x0, x1, x2)`` and re-bucket it (the table
    not stale); the change in the number of strays.

    A member is in the bucket of its position: at home, the one whose
    slot range holds it, else in that bucket's stray list, which is where
    it is looked for to leave it. A member at home stays so while its new
    bucket's range holds its slot, which asks for no bucket but the new."""
    home = nxt[s] == HOME
    old = np.int64(-1)
    if not home:
        old = bucket_of_slot(pos, s, dims, geo, win)
    pos[s, 0] = x0
    if dims > 1:
        pos[s, 1] = x1
    if dims > 2:
        pos[s, 2] = x2
    b = bucket_of_slot(pos, s, dims, geo, win)
    return _rebucket(nxt, start, head, s, b, old, home)


@njit(inline="always", **NO_NRT)
def _rebucket(nxt, start, head, s, b, old, home):
    """Slot ``s``, moved into bucket ``b`` from bucket ``old`` (home if
    ``home``, else a stray there): its lists put right; the change in the
    number of strays."""
    if home:
        if is_home(start, s, b):
            return 0
        nxt[s] = head[b]
        head[b] = s
        return 1
    if b == old:
        return 0
    prev = END  # leave the old bucket's stray list
    t = head[old]
    while t != s:
        prev = t
        t = nxt[t]
    if prev == END:
        head[old] = nxt[s]
    else:
        nxt[prev] = nxt[s]
    if is_home(start, s, b):
        nxt[s] = HOME
        return -1
    nxt[s] = head[b]
    head[b] = s
    return 0


@njit(**NO_NRT)
def move(pos, nxt, start, head, slots, values, cells, dims, geo, win):
    """Move slot ``slots[i]`` to ``values[i]`` in order (the last move
    wins), re-bucketing each; the change in the number of strays.
    ``cells`` (a row a move) is scratch, for the new buckets."""
    k = slots.shape[0]
    # The new buckets in one pass (no loads but the values'), so that the
    # loop can ask early for what a move a few ahead reads.
    buckets_of(values, k, dims, geo, win, cells)
    delta = 0
    last = k - 1
    for i in range(k):
        # Movers are scattered over the slots and their buckets over the
        # table, each a few cache misses: those of a move a few ahead load
        # while this one runs.
        ahead = min(i + 8, last)
        s = slots[ahead]
        prefetch(pos, s * dims)
        prefetch(nxt, s)
        prefetch(start, cells[ahead])
        prefetch(head, cells[ahead])
        s = slots[i]
        home = nxt[s] == HOME
        old = np.int64(-1)
        if not home:
            old = bucket_of_slot(pos, s, dims, geo, win)
        for d in range(dims):
            pos[s, d] = values[i, d]
        delta += _rebucket(nxt, start, head, s, np.int64(cells[i]), old, home)
    return delta


@njit(**NO_NRT)
def differs(sparse, dense, n, pos, ids, values, dims, out):
    """``out[i]``: 0 where ``ids[i]`` is a member at ``values[i]``, 1 where
    it is a member elsewhere, 2 where it is absent."""
    for i in range(ids.shape[0]):
        s = find(sparse, dense, n, ids[i])
        if s < 0:
            out[i] = 2
            continue
        out[i] = 0
        for d in range(dims):
            if pos[s, d] != values[i, d]:
                out[i] = 1


@njit(**NO_NRT)
def scatter(pos, slots, values, dims):
    """``pos[slots[i]] = values[i]`` in order."""
    for i in range(slots.shape[0]):
        s = slots[i]
        for d in range(dims):
            pos[s, d] = values[i, d]


@njit(inline="always", **NO_NRT)
def answer(dense, gens, s):
    """The id of slot ``s`` as a query answers it: ``dense[s]``, or, with
    ``gens`` not empty (a World's generation table, the ids entity keys),
    the current handle ``key | generation << 32`` of key ``dense[s]``:
    read where it is written, so that a grid of keys answers handles with
    no second pass over the answer. A key past the table (no World grid
    holds one) answers as it is: the table is read unchecked otherwise."""
    key = np.int64(dense[s])
    if np.uint64(key) >= np.uint64(gens.shape[0]):
        return key
    generation = np.int64(gens[np.uint64(key)] & np.uint32(GENERATION_MASK))
    return key | (generation << np.int64(INDEX_BITS))


@njit(inline="always", **NO_NRT)
def _emit(dense, gens, me, q, out_a, out_b, m):
    """Write hit ``m``: slot ``q``'s id, or the pair of slots ``me`` and ``q``."""
    if me < 0:
        out_a[m] = answer(dense, gens, q)
    else:
        i = answer(dense, gens, me)
        j = answer(dense, gens, q)
        out_a[m] = min(i, j)
        out_b[m] = max(i, j)


@njit(inline="always", **NO_NRT)
def _scan_range(
    dense, gens, pos, nxt, strays, first, last, x0, x1, x2, dims, geo, metric,
    rr, me, out_a, out_b, m, write,
):  # fmt: skip
    """Test slots ``first:last`` (those at home) against the point; count
    (and write) the hits. ``me`` < 0: a query point (``out_a`` gets the
    ids); else pairs of slot ``me`` with each hit, smaller id first."""
    if not strays and metric == EUCLIDEAN and geo[1] == 0.0:
        # The common case, its loop free of every loop-invariant branch.
        if dims == 2:
            for q in range(first, last):
                e0 = pos[q, 0] - x0
                e1 = pos[q, 1] - x1
                if e0 * e0 + e1 * e1 <= rr:
                    if write:
                        _emit(dense, gens, me, q, out_a, out_b, m)
                    m += 1
            return m
        if dims == 3:
            for q in range(first, last):
                e0 = pos[q, 0] - x0
                e1 = pos[q, 1] - x1
                e2 = pos[q, 2] - x2
                if e0 * e0 + e1 * e1 + e2 * e2 <= rr:
                    if write:
                        _emit(dense, gens, me, q, out_a, out_b, m)
                    m += 1
            return m
    for q in range(first, last):
        if strays and nxt[q] != HOME:
            continue
        if close(pos, q, x0, x1, x2, dims, geo, metric, rr):
            if write:
                _emit(dense, gens, me, q, out_a, out_b, m)
            m += 1
    return m


@njit(inline="always", **NO_NRT)
def _scan_strays(
    dense, gens, pos, nxt, q, x0, x1, x2, dims, geo, metric, rr, me, out_a, out_b,
    m, write,
):  # fmt: skip
    """:func:`_scan_range` over a stray list from ``q`` on."""
    while q != END:
        if close(pos, q, x0, x1, x2, dims, geo, metric, rr):
            if write:
                _emit(dense, gens, me, q, out_a, out_b, m)
            m += 1
        q = nxt[q]
    return m


@njit(inline="always", **NO_NRT)
def _scan_bucket(
    dense, gens, pos, nxt, start, head, d, strays, x0, x1, x2, dims, geo,
    metric, rr, me, out_a, out_b, m, write,
):  # fmt: skip
    """Every member of bucket ``d`` against the point."""
    m = _scan_range(
        dense, gens, pos, nxt, strays, start[d], start[d + 1], x0, x1, x2, dims,
        geo, metric, rr, me, out_a, out_b, m, write,
    )  # fmt: skip
    if strays:
        m = _scan_strays(
            dense, gens, pos, nxt, head[d], x0, x1, x2, dims, geo, metric, rr, me,
            out_a, out_b, m, write,
        )  # fmt: skip
    return m


@njit(**NO_NRT)
def _decode(b, win):
    """The table cell of bucket ``b`` of a dense table."""
    n2 = win[W_N + 2]
    n1 = win[W_N + 1]
    c2 = b % n2 + win[W_LO + 2]
    c1 = (b // n2) % n1 + win[W_LO + 1]
    c0 = b // (n1 * n2) + win[W_LO]
    return c0, c1, c2


@njit(**NO_NRT)
def _above(b, count, scratch):
    """Keep the buckets of ``scratch[:count]`` numbered above ``b``, in
    place; how many."""
    up = 0
    for j in range(count):
        if scratch[j] > b:
            scratch[up] = scratch[j]
            up += 1
    return up


@njit(**NO_NRT)
def pairs(
    dense, gens, pos, nxt, start, head, strays, dims, geo, win, reach,
    metric, rr, scratch, steps, out_a, out_b, write,
):  # fmt: skip
    """Every unordered pair of members within the radius once; counts them,
    and writes them (smaller id in ``out_a``) when ``write``.

    Bucket by bucket, each member against the members after it in its own
    bucket and every member of the neighbouring buckets numbered above
    its own: a pair is met from the lower bucket only. A dense table's
    bucket is one cell, whose neighbours are listed once (where the
    window's padding covers the reach, ``steps`` holds 0 and then the
    positive bucket offsets of the neighbourhood: they are ``b + steps``);
    a hashed one's members are listed per cell.

    A bucket's members at home and its strays go through one loop, and
    the rest of its own bucket and each neighbour through another: each
    scan is inlined once, as every inlined copy is typed and optimised
    anew."""
    nb = start.shape[0] - 1
    hashed = win[W_MODE] != 0
    fast = steps.shape[0] > 0
    m = 0
    up = 0
    if fast:
        up = steps.shape[0] - 1
    for b in range(nb):
        s0 = start[b]
        s1 = start[b + 1]
        h = head[b] if strays else END
        if s0 == s1 and h == END:
            continue
        if fast:
            for j in range(up):
                scratch[j] = b + steps[j + 1]
        elif not hashed:
            c0, c1, c2 = _decode(b, win)
            count = neighbour_buckets(c0, c1, c2, dims, reach, win, scratch)
            up = _above(b, count, scratch)
        q = s0
        t = h
        while True:
            # The members at home (each against the rest of the range and
            # every stray), then the strays (each against those after it).
            if q < s1:
                p = q
                q += 1
                if strays and nxt[p] != HOME:
                    continue
                lo = q
                sq = h
            elif t != END:
                p = t
                t = nxt[t]
                lo = s1
                sq = t
            else:
                break
            if hashed:
                up = _point_neighbours(pos, p, b, dims, geo, win, reach, scratch)
            x0 = pos[p, 0]
            x1 = pos[p, 1] if dims > 1 else 0.0
            x2 = pos[p, 2] if dims > 2 else 0.0
            hi = s1
            for j in range(-1, up):
                if j >= 0:
                    d = scratch[j]
                    lo = start[d]
                    hi = start[d + 1]
                    sq = head[d] if strays else END
                m = _scan_range(
                    dense, gens, pos, nxt, strays, lo, hi, x0, x1, x2, dims, geo,
                    metric, rr, p, out_a, out_b, m, write,
                )  # fmt: skip
                if strays:
                    m = _scan_strays(
                        dense, gens, pos, nxt, sq, x0, x1, x2, dims, geo, metric,
                        rr, p, out_a, out_b, m, write,
                    )  # fmt: skip
    return m


@njit(inline="always", **NO_NRT)
def _pair_out(dense, gens, p, q, out_a, out_b, m):
    """Write pair ``m`` (slots ``p`` and ``q``, smaller id first); False
    if the buffers are full."""
    if m >= out_a.shape[0]:
        return False
    i = answer(dense, gens, p)
    j = answer(dense, gens, q)
    out_a[m] = min(i, j)
    out_b[m] = max(i, j)
    return True


@njit(**NO_NRT)
def pairs_plain(dense, gens, pos, start, steps, dims, rr, out_a, out_b, first):
    """:func:`pairs` where it is simplest and most used: a dense table
    without strays whose padding covers the reach, euclidean distances, no
    torus, 2 or 3 axes. One pass, from bucket ``first`` on, writing as long
    as the buffers hold: returns ``(pairs written, bucket to resume at)``,
    the bucket -1 when done; a bucket the buffers could not hold is left
    out whole, for the caller to resume at with bigger ones."""
    nb = start.shape[0] - 1
    up = steps.shape[0]
    m = 0
    for b in range(first, nb):
        done = m
        s0 = start[b]
        s1 = start[b + 1]
        for p in range(s0, s1):
            x0 = pos[p, 0]
            x1 = pos[p, 1]
            if dims == 2:
                for q in range(p + 1, s1):
                    e0 = pos[q, 0] - x0
                    e1 = pos[q, 1] - x1
                    if e0 * e0 + e1 * e1 <= rr:
                        if not _pair_out(dense, gens, p, q, out_a, out_b, m):
                            return done, b
                        m += 1
                for j in range(1, up):
                    d = b + steps[j]
                    for q in range(start[d], start[d + 1]):
                        e0 = pos[q, 0] - x0
                        e1 = pos[q, 1] - x1
                        if e0 * e0 + e1 * e1 <= rr:
                            if not _pair_out(dense, gens, p, q, out_a, out_b, m):
                                return done, b
                            m += 1
            else:
                x2 = pos[p, 2]
                for q in range(p + 1, s1):
                    e0 = pos[q, 0] - x0
                    e1 = pos[q, 1] - x1
                    e2 = pos[q, 2] - x2
                    if e0 * e0 + e1 * e1 + e2 * e2 <= rr:
                        if not _pair_out(dense, gens, p, q, out_a, out_b, m):
                            return done, b
                        m += 1
                for j in range(1, up):
                    d = b + steps[j]
                    for q in range(start[d], start[d + 1]):
                        e0 = pos[q, 0] - x0
                        e1 = pos[q, 1] - x1
                        e2 = pos[q, 2] - x2
                        if e0 * e0 + e1 * e1 + e2 * e2 <= rr:
                            if not _pair_out(dense, gens, p, q, out_a, out_b, m):
                                return done, b
                            m += 1
    return m, -1


@njit(**NO_NRT)
def within_plain(dense, gens, pos, start, steps, dims, geo, win, rr, points, offsets,
                 found, write):  # fmt: skip
    """:func:`within` where :func:`pairs_plain` applies: one tight loop."""
    for i in range(points.shape[0]):
        x0 = points[i, 0]
        x1 = points[i, 1]
        x2 = points[i, 2] if dims > 2 else 0.0
        c0, c1, c2 = cell_of_point(x0, x1, x2, dims, geo, win)
        b = bucket_of(c0, c1, c2, win)
        m = offsets[i] if write else 0
        for j in range(steps.shape[0]):
            d = b + steps[j]
            if dims == 2:
                for q in range(start[d], start[d + 1]):
                    e0 = pos[q, 0] - x0
                    e1 = pos[q, 1] - x1
                    if e0 * e0 + e1 * e1 <= rr:
                        if write:
                            found[m] = answer(dense, gens, q)
                        m += 1
            else:
                for q in range(start[d], start[d + 1]):
                    e0 = pos[q, 0] - x0
                    e1 = pos[q, 1] - x1
                    e2 = pos[q, 2] - x2
                    if e0 * e0 + e1 * e1 + e2 * e2 <= rr:
                        if write:
                            found[m] = answer(dense, gens, q)
                        m += 1
        if not write:
            offsets[i + 1] = m


@njit(**NO_NRT)
def _point_neighbours(pos, p, b, dims, geo, win, reach, scratch):
    """The buckets above ``b`` around slot ``p``'s cell, into ``scratch``."""
    x1 = pos[p, 1] if dims > 1 else 0.0
    x2 = pos[p, 2] if dims > 2 else 0.0
    c0, c1, c2 = cell_of_point(pos[p, 0], x1, x2, dims, geo, win)
    count = neighbour_buckets(c0, c1, c2, dims, reach, win, scratch)
    return _above(b, count, scratch)


@njit(**NO_NRT)
def within(
    dense, gens, pos, nxt, start, head, strays, dims, geo, win, reach,
    metric, rr, scratch, steps, points, offsets, found, write,
):  # fmt: skip
    """The members within the radius of each point: with ``write`` False,
    ``offsets[i + 1]`` gets point i's count; with it, ``found`` gets the
    ids at ``offsets[i]:offsets[i + 1]``. ``steps``, when not empty, are
    the bucket offsets of the neighbourhood (see :func:`pairs`)."""
    none = found[:0]
    fast = steps.shape[0] > 0
    count = steps.shape[0]
    b = 0
    for i in range(points.shape[0]):
        x0 = points[i, 0]
        x1 = points[i, 1] if dims > 1 else 0.0
        x2 = points[i, 2] if dims > 2 else 0.0
        c0, c1, c2 = cell_of_point(x0, x1, x2, dims, geo, win)
        if fast:
            b = bucket_of(c0, c1, c2, win)
        else:
            count = neighbour_buckets(c0, c1, c2, dims, reach, win, scratch)
        m = offsets[i] if write else 0
        for j in range(count):
            d = b + steps[j] if fast else scratch[j]
            m = _scan_bucket(
                dense, gens, pos, nxt, start, head, d, strays, x0, x1, x2, dims,
                geo, metric, rr, -1, found, none, m, write,
            )  # fmt: skip
        if not write:
            offsets[i + 1] = m


@njit(inline="always", **NO_NRT)
def _exact_bucket(c, dims, win):
    """Whether the bucket of true cell ``c`` holds that cell alone (a
    dense table's cell inside its window's clamped edges, or on a torus):
    then its members at home are exactly the cell's."""
    if win[W_MODE] != 0:
        return False
    for d in range(dims):
        if win[W_TORUS + d] > 0:
            continue
        first = win[W_LO + d] + win[W_PAD]
        last = win[W_LO + d] + win[W_N + d] - 1 - win[W_PAD]
        if not first < c[d] < last:
            return False
    return True


@njit(**NO_NRT)
def at(dense, gens, pos, nxt, start, head, strays, dims, geo, win, cells, c,
       offsets, found, write):  # fmt: skip
    """The members whose true cell is ``cells[i]``, as :func:`within`
    (``c``: scratch for three coordinates)."""
    for i in range(cells.shape[0]):
        for d in range(dims):
            v = cells[i, d]
            tn = win[W_TORUS + d]
            if tn > 0:
                v %= tn
            c[d] = v
        b = bucket_of(
            table_cell(c[0], 0, win),
            table_cell(c[1], 1, win) if dims > 1 else 0,
            table_cell(c[2], 2, win) if dims > 2 else 0,
            win,
        )
        m = offsets[i] if write else 0
        q = start[b]
        s1 = start[b + 1]
        if not strays and _exact_bucket(c, dims, win):
            if write:
                for t in range(q, s1):
                    found[m] = answer(dense, gens, t)
                    m += 1
            else:
                offsets[i + 1] = s1 - q
            continue
        stray = head[b] if strays else END
        while True:
            if q < s1:
                s = q
                q += 1
                if strays and nxt[s] != HOME:
                    continue
            elif stray != END:
                s = stray
                stray = nxt[stray]
            else:
                break
            same = True
            for d in range(dims):
                if true_cell(pos[s, d], d, geo, win) != c[d]:
                    same = False
            if same:
                if write:
                    found[m] = answer(dense, gens, s)
                m += 1
        if not write:
            offsets[i + 1] = m


@njit(**NO_NRT)
def wrap(values, geo, dims):
    """Wrap coordinates into ``[0, width)`` on periodic axes, in place."""
    for i in range(values.shape[0]):
        for d in range(dims):
            w = geo[1 + d]
            if w > 0.0:
                v = values[i, d] % w
                if v >= w:  # a tiny negative rounds up to the width
                    v = 0.0
                values[i, d] = v


__all__ = [
    "END",
    "HOME",
    "WIN_LENGTH",
    "at",
    "bounds",
    "is_home",
    "move",
    "move_one",
    "pairs",
    "same_rows",
    "same_sorted",
    "scatter",
    "sort_cells",
    "within",
    "wrap",
]
