"""What a Grid holds: the slots' links are made only at the first stray
(a move re-bucketed at once) or for a twin, and ``nbytes`` counts every
array. The paths that make the links, against brute force, are in
``test_grid_twin`` (they use its compiled helpers: one compile a run)."""

import numpy as np

from sparseset import Grid, World


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


def test_a_tracked_world_grid_holds_what_a_grid_of_its_keys_does():
    """Issue 48: at most 16 bytes a member beside positions and table. A
    World's grid keys its members by entity key under a flat index: after
    1% moved (strays: links), dense (4) + index (4) + links (4) a member."""
    rng = np.random.default_rng(9)
    n = 1000
    pos = rng.uniform(0, 30, (n, 2))
    w = World()
    w.register("pos", "f8", shape=(2,), track=True)
    e = w.create(n)
    w.add("pos", e, pos=pos)
    wg = w.grid("pos", cell=1.0)
    wg.pairs(1.0)
    assert wg.nbytes == wg.grid.nbytes
    assert bookkeeping(wg.grid, n, 2) == 8 * n  # placed: no link yet
    movers = rng.choice(n, n // 100, replace=False)
    w.set("pos", e[movers], pos=pos[movers] + 0.5)
    wg.pairs(1.0)
    assert wg.nbytes == wg.grid.nbytes
    assert bookkeeping(wg.grid, n, 2) == 12 * n <= 16 * n


def test_an_untracked_world_grid_holds_what_an_assigned_grid_does():
    rng = np.random.default_rng(10)
    n = 1000
    w = World()
    w.register("pos", "f8", shape=(2,))
    w.add("pos", w.create(n), pos=rng.uniform(0, 30, (n, 2)))
    wg = w.grid("pos", cell=1.0)  # an assign, and one more at the query
    wg.pairs(1.0)
    g = Grid(cell=1.0)
    for _ in range(2):
        g.assign(np.arange(n), w["pos"]["pos"])
    g.pairs(1.0)
    assert wg.nbytes == g.nbytes
    rows = n + n // 8 + 16
    # dense and the sources' order (assigns outnumbered queries), no index.
    assert bookkeeping(wg.grid, n, 2) == 8 * rows + 16 * (rows - n) <= 16 * n
