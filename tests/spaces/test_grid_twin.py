"""A Grid's twin: one-at-a-time moves from @njit code, seen at once by
the twin's queries and the grid's, against brute force."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit
from test_grid import Model, check

from sparseset import Grid
from sparseset.jit.grid import (
    CHEBYSHEV,
    EUCLIDEAN,
    MANHATTAN,
    _range,
    grid_cell,
    grid_cell_slots,
    grid_move,
    grid_move_slot,
    grid_place,
    grid_position,
    grid_remove,
    grid_slot,
    grid_within,
    grid_within_slots,
)

CODES = {"euclidean": EUCLIDEAN, "chebyshev": CHEBYSHEV, "manhattan": MANHATTAN}


@njit
def move_all(tw, ids, pos):
    """Move each id in turn; the sum of the answers."""
    done = 0
    for i in range(ids.shape[0]):
        x1 = pos[i, 1] if pos.shape[1] > 1 else 0.0
        x2 = pos[i, 2] if pos.shape[1] > 2 else 0.0
        done += grid_move(tw, ids[i], pos[i, 0], x1, x2)
    return done


@njit
def place_all(tw, ids, pos, answers):
    """Place each id in turn (add or move), recording each answer."""
    for i in range(ids.shape[0]):
        x1 = pos[i, 1] if pos.shape[1] > 1 else 0.0
        x2 = pos[i, 2] if pos.shape[1] > 2 else 0.0
        answers[i] = grid_place(tw, ids[i], pos[i, 0], x1, x2)


@njit
def remove_all(tw, ids):
    done = 0
    for i in range(ids.shape[0]):
        done += grid_remove(tw, ids[i])
    return done


@njit
def near(tw, point, r, metric, out):
    x1 = point[1] if point.shape[0] > 1 else 0.0
    x2 = point[2] if point.shape[0] > 2 else 0.0
    return grid_within(tw, point[0], x1, x2, r, metric, out)


@njit
def in_cell(tw, cell, out):
    c1 = cell[1] if cell.shape[0] > 1 else 0
    c2 = cell[2] if cell.shape[0] > 2 else 0
    return grid_cell(tw, cell[0], c1, c2, out)


SPACES = [
    (1.0, 2, None),
    (1.5, 2, (7.0, 4.0)),
    (1.0, 3, None),
    (1.0, 3, (4.0, 5.0, 3.0)),
    (1.0, 1, None),
]


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
@pytest.mark.parametrize(("cell", "dims", "torus"), SPACES)
@given(data=st.data())
def test_twin_moves_against_brute_force(kind, cell, dims, torus, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    grid = Grid(cell=cell, dims=dims, torus=torus, index=kind)
    model = Model(cell, dims, torus)
    ids = rng.choice(1000, int(rng.integers(1, 60)), replace=False)
    spread = data.draw(st.sampled_from([10, 1e7]))  # 1e7: a hashed table
    pos = rng.integers(-4, 40, (len(ids), dims)) / 4.0
    pos[: len(ids) // 10] *= spread / 10
    grid.place(ids, pos)
    model.place(ids.tolist(), pos)
    out = np.empty(len(ids) + 200, np.int64)
    for _ in range(data.draw(st.integers(1, 4))):
        tw = grid.jit
        who = rng.choice(sorted(model.pos), int(rng.integers(1, 4)))
        new = rng.integers(-8, 48, (len(who), dims)) / 4.0
        assert move_all(tw, who, new) == len(who)
        model.place(who.tolist(), new)
        assert move_all(tw, np.array([5000]), new[:1]) == 0  # absent
        have = sorted(model.pos)
        if len(have) > 1:  # one-member removals, the last member moving in
            gone = rng.choice(have, min(len(have) - 1, int(rng.integers(1, 4))), False)
            assert remove_all(tw, gone) == len(gone)
            assert remove_all(tw, gone[:1]) == 0
            for x in gone.tolist():
                del model.pos[x]
        born = rng.choice(np.arange(1000, 1040), int(rng.integers(1, 4)), False)
        born = np.concatenate([born, rng.choice(sorted(model.pos), 1)])
        where = rng.integers(-8, 48, (len(born), dims)) / 4.0
        answers = np.empty(len(born), np.int64)
        place_all(tw, born, where, answers)
        for x, p, answer in zip(born, where, answers, strict=True):
            assert answer in (0, 1, -2)
            if answer == -2:  # no room in the twin: the grid grows instead
                continue
            assert answer == (0 if int(x) in model.pos else 1)
            model.place([int(x)], p[None, :])
        later = [k for k, a in enumerate(answers) if a == -2]
        if later:
            grid.place(born[later], where[later])
            model.place(born[later].tolist(), where[later])
            tw = grid.jit
        for metric, code in CODES.items():
            for r in (0.0, 1.0, 2.25):
                point = rng.integers(-8, 48, dims) / 4.0
                k = near(tw, point, r, code, out)
                assert sorted(out[:k].tolist()) == model.within(point, r, metric)
        for cell_at in rng.integers(-2, 10, (3, dims)):
            k = in_cell(tw, cell_at, out)
            assert sorted(out[:k].tolist()) == model.at(tuple(cell_at.tolist()))
        here = np.empty(dims)
        last = sorted(model.pos)[-1]
        assert grid_position(tw, last, here) == 1
        np.testing.assert_array_equal(here, model.pos[last])
        check(grid, model, rng)


def test_a_stale_twin_answers_minus_one_and_a_short_buffer_counts():
    grid = Grid(cell=1.0)
    grid.place(np.arange(10), np.zeros((10, 2)))
    tw = grid.jit
    out = np.empty(3, np.int64)
    assert near(tw, np.zeros(2), 1.0, EUCLIDEAN, out) == 10  # wrote 3 of 10
    assert set(out.tolist()) <= set(range(10))
    grid.place([10], [[0.0, 0.0]])  # a new member: the table goes stale
    assert near(tw, np.zeros(2), 1.0, EUCLIDEAN, out) == -1
    assert move_all(tw, np.array([1]), np.zeros((1, 2))) == -1
    assert in_cell(tw, np.zeros(2, np.int64), out) == -1
    assert grid_position(tw, 1, np.empty(2)) == -1
    assert near(grid.jit, np.zeros(2), 1.0, EUCLIDEAN, out) == 11


def test_many_twin_moves_then_a_rebuild():
    """Moves past an eighth of the members make the next query rebuild."""
    rng = np.random.default_rng(5)
    grid = Grid(cell=1.0)
    model = Model(1.0, 2, None)
    ids = np.arange(100)
    pos = rng.uniform(0, 10, (100, 2))
    grid.place(ids, pos)
    model.place(ids.tolist(), pos)
    tw = grid.jit
    new = rng.uniform(0, 10, (100, 2))
    assert move_all(tw, ids, new) == 100
    model.place(ids.tolist(), new)
    check(grid, model, rng)
    assert move_all(tw, ids[:1], new[:1]) == -1  # rebuilt since


@njit
def slots_near(tw, point, r, metric, out):
    return grid_within_slots(tw, point[0], point[1], 0.0, r, metric, out)


@njit
def slots_in_cell(tw, cell, out):
    return grid_cell_slots(tw, cell[0], cell[1], 0, out)


@njit
def move_slots(tw, slots, pos):
    done = 0
    for i in range(slots.shape[0]):
        done += grid_move_slot(tw, slots[i], pos[i, 0], pos[i, 1])
    return done


def test_a_cell_tiling_the_ring_but_not_exactly_reads_three_cells_an_axis():
    """100 / (100 / 11) is 10.999999999999998 in floating point: the cells
    tile the ring to within rounding, and a query of one cell's reach
    reads three cells an axis, not five; a truly narrower last cell still
    costs one more where the reach needs it; and the answers stay those
    of brute force, points on the wrap and on cell edges included."""
    cell = 100.0 / 11
    assert 100.0 / cell != 11.0
    grid = Grid(cell=cell, torus=(100.0, 100.0))
    rng = np.random.default_rng(3)
    edges = np.arange(12) * cell
    pos = np.concatenate(
        [
            rng.uniform(0, 100, (300, 2)),
            np.column_stack([edges[:11], rng.uniform(0, 100, 11)]),
            np.array([[0.0, 0.0], [100.0 - 1e-12, 0.0], [cell, 100.0 - cell]]),
        ]
    )
    grid.place(np.arange(pos.shape[0]), pos)
    tw = grid.jit
    assert _range(5, 0, cell, 2, tw.geo, tw.win)[1] == 3
    assert _range(5, 0, 2 * cell, 2, tw.geo, tw.win)[1] == 5
    narrow = Grid(cell=9.5, torus=(100.0, 100.0))  # 11 cells, the last 5 wide
    narrow.place([0], [[1.0, 1.0]])
    tn = narrow.jit
    assert _range(5, 0, 9.5, 2, tn.geo, tn.win)[1] == 5
    assert _range(5, 0, 5.0, 2, tn.geo, tn.win)[1] == 3  # 9.5 - 4.5 reaches 5
    assert _range(5, 0, 5.5, 2, tn.geo, tn.win)[1] == 5
    out = np.empty(pos.shape[0], np.int64)
    for r in (cell, 0.5 * cell, 5.0):
        for p in pos[::7]:
            d = np.abs(pos - p)
            d = np.minimum(d, 100.0 - d)
            want = np.flatnonzero(np.hypot(d[:, 0], d[:, 1]) <= r)
            k = near(tw, p, r, EUCLIDEAN, out)
            assert sorted(out[:k].tolist()) == want.tolist()


def test_slots_answer_the_members_rows_without_look_ups():
    rng = np.random.default_rng(8)
    grid = Grid(cell=1.0, index="hash")
    ids = rng.choice(10**6, 200, replace=False)
    pos = rng.integers(0, 8, (200, 2)).astype(np.float64)
    grid.place(ids, pos)
    tw = grid.jit
    slots = np.array([grid_slot(tw, x) for x in ids])
    np.testing.assert_array_equal(tw.dense[slots], ids)
    np.testing.assert_array_equal(tw.pos[slots], pos)
    assert grid_slot(tw, 10**6 + 1) == -1
    new = rng.integers(0, 8, (200, 2)).astype(np.float64)
    assert move_slots(tw, slots, new) == 200  # slots stay put while live
    np.testing.assert_array_equal(tw.dense[slots], ids)
    np.testing.assert_array_equal(grid.positions(ids), new)
    out = np.empty(200, np.int64)
    for c in rng.integers(0, 8, (20, 2)):
        k = slots_in_cell(tw, c, out)
        want = ids[(new == c).all(axis=1)]
        assert sorted(tw.dense[out[:k]].tolist()) == sorted(want.tolist())
        k = slots_near(tw, c.astype(np.float64), 1.5, CHEBYSHEV, out)
        want = ids[(np.abs(new - c) <= 1.5).all(axis=1)]
        assert sorted(tw.dense[out[:k]].tolist()) == sorted(want.tolist())
    assert move_slots(tw, np.array([200]), np.zeros((1, 2))) == 0  # no member
    grid.place([10**6 + 5], [[0.0, 0.0]])
    assert grid_slot(tw, ids[0]) == -1  # stale
    assert move_slots(tw, slots[:1], np.zeros((1, 2))) == -1


# -- links made on demand (see test_grid_memory) -------------------------

LINK_SPACES = [
    (1.0, 2, None),
    (1.5, 2, (7.0, 4.0)),
    (1.0, 3, (4.0, 5.0, 3.0)),
    (2.0, 1, None),
]
LINK_STEPS = ["query", "few", "many", "new", "discard", "assign", "twin", "twin_churn"]


@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
@pytest.mark.parametrize(("cell", "dims", "torus"), LINK_SPACES)
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
    steps = st.lists(st.sampled_from(LINK_STEPS), min_size=1, max_size=6)
    for step in data.draw(steps):
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
