"""What a Grid holds: the slots' links are made only at the first stray
(a move re-bucketed at once) or for a twin, and ``nbytes`` counts every
array. Against brute force across the paths that make them: a first
stray after ``place`` or after ``assign``, twin moves, places and
removals on a grid that had none, and an ``assign`` that finds nothing
changed in a sorted table."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_grid import Model, check
from test_grid_twin import move_all, place_all, remove_all

from sparseset import Grid

KINDS = ["flat", "paged", "hash"]
SPACES = [
    (1.0, 2, None),
    (1.5, 2, (7.0, 4.0)),
    (1.0, 3, (4.0, 5.0, 3.0)),
    (2.0, 1, None),
]
STEPS = ["query", "few", "many", "new", "discard", "assign", "twin", "twin_churn"]


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


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("cell", "dims", "torus"), SPACES)
@given(data=st.data())
def test_links_on_demand_against_brute_force(kind, cell, dims, torus, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    grid = Grid(cell=cell, dims=dims, torus=torus, index=kind)
    model = Model(cell, dims, torus)
    ids = rng.choice(500, int(rng.integers(1, 50)), replace=False)
    pos = rng.uniform(-3, 10, (len(ids), dims))
    if data.draw(st.booleans()):
        grid.assign(ids, pos)
    else:
        grid.place(ids, pos)
    model.place(ids.tolist(), pos)
    grid.pairs(1.0)  # built: no stray yet, no links
    for step in data.draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6)):
        members, at = model.arrays()
        n = len(members)
        if step == "query":
            grid.within(np.zeros((1, dims)), 1.0)
        elif step in ("few", "many") and n:
            k = max(1, n // 16) if step == "few" else n
            who = rng.choice(members, k, replace=False)
            there = at[np.searchsorted(members, who)]
            there = there + rng.uniform(-1.5, 1.5, there.shape) * cell
            assert grid.place(who, there) == 0
            model.place(who.tolist(), there)
        elif step == "new":
            fresh = np.setdiff1d(rng.choice(500, 5, replace=False), members)
            there = rng.uniform(-3, 10, (len(fresh), dims))
            assert grid.place(fresh, there) == len(fresh)
            model.place(fresh.tolist(), there)
        elif step == "discard" and n:
            gone = rng.choice(members, max(1, n // 5), replace=False)
            assert grid.discard(gone) == len(gone)
            for x in gone.tolist():
                del model.pos[x]
        elif step == "assign" and n:
            there = at + rng.uniform(-0.3, 0.3, at.shape) * cell
            order = rng.permutation(n)
            grid.assign(members[order], there[order])
            model.place(members.tolist(), there)
        elif step == "twin" and n:
            tw = grid.jit
            who = rng.choice(members, max(1, n // 3), replace=False)
            there = rng.uniform(-3, 10, (len(who), dims))
            assert move_all(tw, who, there) == len(who)
            model.place(who.tolist(), there)
        elif step == "twin_churn" and n:
            tw = grid.jit
            gone = rng.choice(members, max(1, n // 4), replace=False)
            assert remove_all(tw, gone) == len(gone)
            for x in gone.tolist():
                del model.pos[x]
            back = gone[: len(gone) // 2]
            there = rng.uniform(-3, 10, (len(back), dims))
            answers = np.empty(len(back), np.int64)
            place_all(tw, back, there, answers)
            assert (answers == 1).all()
            model.place(back.tolist(), there)
        check(grid, model, rng)


def test_an_unchanged_assign_is_seen_in_a_sorted_table_without_a_slot_table():
    rng = np.random.default_rng(9)
    ids = rng.permutation(300)
    pos = rng.uniform(0, 15, (300, 2))
    g = Grid(cell=1.0)
    assert g.assign(ids, pos) is True  # sorted at once
    g.pairs(1.0)
    tw = g.jit
    assert g.assign(ids, pos) is False  # after a query: checked while sorting
    assert g.assign(ids, pos) is False  # unasked: checked against the sorted slots
    assert g.jit.version == tw.version
    swapped = ids.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    # The same members at the same positions, given in another order: the
    # slots either come out the same (no change) or not; either way they
    # hold what was given.
    g.assign(swapped, pos[[1, 0, *range(2, 300)]])
    np.testing.assert_array_equal(g.positions(ids), pos)
    assert g.assign(ids, pos + 0.01) is True
    assert g.assign(ids, pos) is True
    g.pairs(1.0)
    tw = g.jit
    moved = g.positions(ids[:1]) + 2.0
    assert move_all(tw, ids[:1], moved) == 1  # a stray: no answer from the table
    assert g.assign(ids, pos) is True
    np.testing.assert_array_equal(g.positions(ids), pos)
    assert g.assign(ids, pos) is False  # copied, then seen unchanged as copied
