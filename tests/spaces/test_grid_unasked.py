"""``Grid.assign`` when no query came since the last one: the rows are
copied, unsorted, and the next query sorts them. Against brute force
after bulk moves where few or many change cell, with members leaving,
coming and changing rows in between, queries after some assigns and not
others, every index kind, torus or not."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_grid_bulk import KINDS, SPACES, agrees, wrapped

from sparseset import Grid, World

CHURN = ["none", "swap", "replace", "grow", "shrink"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("cell", "dims", "torus"), SPACES)
@given(data=st.data())
def test_settle_against_brute_force(kind, cell, dims, torus, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    grid = Grid(cell=cell, dims=dims, torus=torus, index=kind)
    top = data.draw(st.sampled_from([200, 2**20]))
    ids = rng.choice(top, int(rng.integers(1, 60)), replace=False)
    pos = rng.uniform(-3, 10, (len(ids), dims))
    grid.assign(ids, pos)
    for _ in range(data.draw(st.integers(1, 6))):
        # Everyone moves: a little (few change cell) or a lot (many do).
        scale = data.draw(st.sampled_from([0.02, 0.2, 2.0])) * cell
        pos = pos + rng.uniform(-scale, scale, pos.shape)
        churn = data.draw(st.sampled_from(CHURN))
        if churn == "swap":  # two rows trade places
            if len(ids) > 1:
                i, j = rng.choice(len(ids), 2, replace=False)
                ids[[i, j]], pos[[i, j]] = ids[[j, i]], pos[[j, i]]
        elif churn != "none":
            leave = int(rng.integers(0, max(1, len(ids) // 4)))
            come = {"replace": leave, "grow": leave + 3, "shrink": 0}[churn]
            keep = rng.permutation(len(ids))[leave:]
            keep.sort()
            fresh = np.setdiff1d(rng.choice(top, come + 20, replace=False), ids)[:come]
            ids = np.concatenate((ids[keep], rng.permutation(fresh)))
            pos = np.vstack((pos[keep], rng.uniform(-3, 10, (len(fresh), dims))))
        if len(ids) == 0:
            ids, pos = np.array([5]), np.zeros((1, dims))
        grid.assign(ids, pos)
        if data.draw(st.booleans()):  # or let the strays pile up unasked
            model = dict(zip(ids.tolist(), wrapped(pos, torus), strict=True))
            agrees(grid, model, dims, cell, torus, rng)
        pos = wrapped(pos, torus)
    model = dict(zip(ids.tolist(), wrapped(pos, torus), strict=True))
    agrees(grid, model, dims, cell, torus, rng)


def test_unasked_assign_copies_and_the_next_query_sorts():
    rng = np.random.default_rng(4)
    ids = rng.permutation(400)
    pos = rng.uniform(0, 20, (400, 2))
    g = Grid(cell=1.0)
    assert g.assign(ids, pos) is True  # the first: sorted at once
    assert not np.array_equal(g.ids, ids)
    assert g.assign(ids, pos) is False  # unasked, and nothing changed
    moved = pos + rng.uniform(-0.3, 0.3, pos.shape)
    assert g.assign(ids, moved) is True  # unasked: copied in the given order
    np.testing.assert_array_equal(g.ids, ids)
    assert g.assign(ids, moved) is False
    want = Grid(cell=1.0)
    want.place(ids, moved)
    for grid in (g, want):  # the query sorts
        a, b = grid.pairs(1.5)
        assert grid is want or not np.array_equal(g.ids, ids)
        assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == sorted(
            zip(*want.pairs(1.5), strict=True)
        )
    twin = g.jit
    assert g.assign(ids, moved) is False  # asked since: the sorting path
    assert g.jit.version == twin.version
    np.testing.assert_array_equal(g.positions(ids), moved)


def test_world_grid_unasked_with_births_and_deaths():
    """The demo's pattern: every step everyone moves a little (a catch-up
    then), some die and as many are born; queries after some steps catch
    up with those, and answer brute force's."""
    rng = np.random.default_rng(9)
    w = World()
    w.register("pos", "f8", shape=(2,), track=True)
    w.register("vel", "f8", shape=(2,))
    e = w.create(500)
    w.add("pos", e, pos=rng.uniform(0, 10, (500, 2)))
    w.add("vel", e, vel=rng.uniform(-0.3, 0.3, (500, 2)))
    group = w.group("pos", "vel")
    wg = w.grid("pos", cell=1.0)
    for step in range(6):
        with group.write("pos") as pos:
            pos += group["vel"]
        wg.sync()  # everyone moved: the bulk path
        dead = rng.choice(w["pos"].ids, 15, replace=False)
        w.destroy(dead)
        born = w.create(15)
        w.add("pos", born, pos=rng.uniform(0, 10, (15, 2)))
        w.add("vel", born, vel=np.zeros((15, 2)))
        if step % 3:  # a query, catching up with the births and deaths
            store = w["pos"]
            model = dict(zip(store.ids.tolist(), store["pos"], strict=True))
            agrees(wg, model, 2, 1.0, None, rng)
    store = w["pos"]
    model = dict(zip(store.ids.tolist(), store["pos"], strict=True))
    agrees(wg, model, 2, 1.0, None, rng)
