"""What a Grid holds: the slots' links are made only at the first stray
(a move re-bucketed at once) or for a twin, and ``nbytes`` counts every
array. The paths that make the links, against brute force, are in
``test_grid_twin`` (they use its compiled helpers: one compile a run)."""

import numpy as np

from sparseset import Grid


def bookkeeping(grid: Grid, n: int, dims: int) -> int:
    """Bytes held beside the cell table and ``n`` members' positions."""
    return grid.nbytes - grid.table_nbytes - 8 * dims * n


def test_a_grid_none_of_whose_members_strayed_holds_no_links():
    rng = np.random.default_rng(7)
    n = 1000
    pos = rng.uniform(0, 30, (n, 2))
    g = Grid(cell=1.0)
    g.place(np.arange(n), pos)
    g.pairs(1.0)
    # dense (int32) and the flat index: 8 bytes a member, no link.
    assert bookkeeping(g, n, 2) == 8 * n
    g.place([3, 4], [[0.0, 0.0], [29.5, 29.5]])  # strays: a link a slot
    assert bookkeeping(g, n, 2) == 12 * n
    g.place([5], [[0.2, 0.2]])
    assert bookkeeping(g, n, 2) == 12 * n  # made once
    moved = pos.copy()
    moved[[3, 4, 5]] = [[0.0, 0.0], [29.5, 29.5], [0.2, 0.2]]
    want = Grid(cell=1.0)
    want.place(np.arange(n), moved)
    assert sorted(zip(*map(np.ndarray.tolist, g.pairs(1.2)), strict=True)) == sorted(
        zip(*map(np.ndarray.tolist, want.pairs(1.2)), strict=True)
    )


def test_assign_holds_a_slot_table_and_no_links_until_asked():
    rng = np.random.default_rng(8)
    n = 1000
    pos = rng.uniform(0, 30, (n, 2))
    g = Grid(cell=1.0)
    g.assign(rng.permutation(n), pos)
    g.pairs(1.0)
    rows = n + n // 8 + 16  # an assign's spare slots, counted
    assert bookkeeping(g, n, 2) == 4 * rows + 16 * (rows - n)
    g.contains(1)  # the id set, made again: dense and index, n each
    assert bookkeeping(g, n, 2) == 8 * n + 16 * (rows - n)
    tw = g.jit  # a twin's moves make strays: it gets the links
    assert bookkeeping(g, n, 2) == 8 * n + 16 * (rows - n) + 4 * rows
    assert tw.nxt.shape[0] == tw.pos.shape[0]
