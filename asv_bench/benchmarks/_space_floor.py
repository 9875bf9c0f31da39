"""Bare numba cell lists: the floor for Grid's neighbour queries.

What a numba user writes by hand for uniform points in a box: a counting
sort of the points by cell into cell-ordered coordinates, then a scan of
the 3 x 3 cells around each point (``r`` no larger than the cell), once
to count and once to write. ``Grid / floor`` in the same run is what the
grid adds (ids, validation, its own cell table).

The names avoid asv's benchmark prefixes because asv imports every module.
"""

import numba
import numpy as np


@numba.njit(cache=True)
def floor_cells(pos, cell):
    """Cell-ordered coordinates and ids, each cell's first row, the side."""
    n = pos.shape[0]
    extent = 0.0
    for i in range(n):
        extent = max(extent, pos[i, 0], pos[i, 1])
    side = max(1, int(extent / cell) + 1)
    key = np.empty(n, np.int64)
    start = np.zeros(side * side + 1, np.int64)
    for i in range(n):
        cx = min(int(pos[i, 0] / cell), side - 1)
        cy = min(int(pos[i, 1] / cell), side - 1)
        key[i] = cx * side + cy
        start[key[i] + 1] += 1
    for c in range(side * side):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    xs = np.empty(n)
    ys = np.empty(n)
    ids = np.empty(n, np.int64)
    for i in range(n):
        t = fill[key[i]]
        fill[key[i]] = t + 1
        xs[t] = pos[i, 0]
        ys[t] = pos[i, 1]
        ids[t] = i
    return xs, ys, ids, start, side


@numba.njit(cache=True)
def _floor_scan(xs, ys, ids, start, side, cell, points, r2, offsets, found, write):
    for i in range(points.shape[0]):
        x = points[i, 0]
        y = points[i, 1]
        cx = int(x / cell)
        cy = int(y / cell)
        m = offsets[i] if write else 0
        for nx in range(max(cx - 1, 0), min(cx + 2, side)):
            for ny in range(max(cy - 1, 0), min(cy + 2, side)):
                d = nx * side + ny
                for q in range(start[d], start[d + 1]):
                    ex = x - xs[q]
                    ey = y - ys[q]
                    if ex * ex + ey * ey <= r2:
                        if write:
                            found[m] = ids[q]
                        m += 1
        if not write:
            offsets[i + 1] = m


@numba.njit(cache=True)
def floor_within(xs, ys, ids, start, side, cell, points, r):
    """CSR of the members within ``r`` (at most ``cell``) of each point."""
    offsets = np.zeros(points.shape[0] + 1, np.int64)
    none = np.empty(0, np.int64)
    _floor_scan(xs, ys, ids, start, side, cell, points, r * r, offsets, none, False)
    for i in range(points.shape[0]):
        offsets[i + 1] += offsets[i]
    found = np.empty(offsets[-1], np.int64)
    _floor_scan(xs, ys, ids, start, side, cell, points, r * r, offsets, found, True)
    return offsets, found


@numba.njit(cache=True)
def _floor_pair_scan(xs, ys, ids, start, side, r2, a, b, write):
    """Each point against the rest of its cell and its four forward
    neighbour cells, so that each pair is met once."""
    m = 0
    for cx in range(side):
        for cy in range(side):
            c = cx * side + cy
            for p in range(start[c], start[c + 1]):
                x = xs[p]
                y = ys[p]
                for k in range(5):
                    nx = cx + (0, 0, 1, 1, 1)[k]
                    ny = cy + (0, 1, -1, 0, 1)[k]
                    if nx >= side or ny < 0 or ny >= side:
                        continue
                    d = nx * side + ny
                    first = p + 1 if k == 0 else start[d]
                    for q in range(first, start[d + 1]):
                        ex = x - xs[q]
                        ey = y - ys[q]
                        if ex * ex + ey * ey <= r2:
                            if write:
                                a[m] = min(ids[p], ids[q])
                                b[m] = max(ids[p], ids[q])
                            m += 1
    return m


@numba.njit(cache=True)
def floor_pairs(pos, r):
    """Every pair within ``r`` (the cell), build included: the hand-written
    cell list of ``../shared/perf/peers/space_peers.py``."""
    xs, ys, ids, start, side = floor_cells(pos, r)
    none = np.empty(0, np.int64)
    m = _floor_pair_scan(xs, ys, ids, start, side, r * r, none, none, False)
    a = np.empty(m, np.int64)
    b = np.empty(m, np.int64)
    _floor_pair_scan(xs, ys, ids, start, side, r * r, a, b, True)
    return a, b
