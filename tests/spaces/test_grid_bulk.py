"""The bulk path: ``Grid.assign`` (every member replaced in one counting
sort, the id index following lazily) and a World grid whose members
nearly all moved, against brute force through the public API, every
metric, torus or not; and bad input to ``assign`` changing nothing."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import Grid, World

KINDS = ["flat", "paged", "hash"]
METRICS = ["euclidean", "chebyshev", "manhattan"]
SPACES = [
    (1.0, 2, None),
    (1.5, 2, (7.0, 4.0)),
    (1.0, 3, None),
    (1.0, 3, (4.0, 5.0, 3.0)),
    (2.0, 1, None),
]


def wrapped(pos, torus):
    if torus is None:
        return pos
    out = np.mod(pos, torus)
    return np.where(out >= np.asarray(torus), 0.0, out)


def near(delta, torus, r, metric):
    delta = np.abs(delta)
    if torus is not None:
        size = np.asarray(torus)
        delta = np.where(delta > 0.5 * size, size - delta, delta)
    if metric == "euclidean":
        return (delta**2).sum(axis=-1) <= r * r
    if metric == "chebyshev":
        return delta.max(axis=-1) <= r
    return delta.sum(axis=-1) <= r


def agrees(grid, model, dims, cell, torus, rng):
    """Every answer of ``grid`` is brute force's over ``model`` (id -> position)."""
    ids = np.array(sorted(model), np.int64)
    pos = np.array([model[i] for i in ids]).reshape(len(ids), dims)
    assert len(grid) == len(ids)
    assert sorted(grid.ids.tolist()) == ids.tolist()
    assert grid.contains(ids).all()
    if len(ids):
        np.testing.assert_array_equal(grid.positions(ids), pos)
    for metric in METRICS:
        r = float(rng.choice([0.0, 0.5, 1.0, 1.5, 2.5]))
        a, b = grid.pairs(r, metric)
        got = sorted(zip(a.tolist(), b.tolist(), strict=True))
        want = sorted(
            (int(ids[k]), int(j))
            for k in range(len(ids))
            for j in ids[k + 1 :][near(pos[k + 1 :] - pos[k], torus, r, metric)]
        )
        assert got == want, (metric, r)
        points = np.vstack([rng.integers(-8, 24, (4, dims)) / 4.0, pos[:3]])
        offsets, found = grid.within(points, r, metric)
        for i, point in enumerate(wrapped(points, torus)):
            seg = sorted(found[offsets[i] : offsets[i + 1]].tolist())
            assert seg == sorted(ids[near(pos - point, torus, r, metric)].tolist())
    offsets, found = grid.at(np.floor(pos[:4] / cell).astype(np.int64))
    for i in range(min(4, len(ids))):
        assert int(ids[i]) in found[offsets[i] : offsets[i + 1]].tolist()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("cell", "dims", "torus"), SPACES)
@given(data=st.data())
def test_assign_against_brute_force(kind, cell, dims, torus, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    grid = Grid(cell=cell, dims=dims, torus=torus, index=kind)
    model: dict[int, np.ndarray] = {}
    top = data.draw(st.sampled_from([60, 2**20]))
    for _ in range(data.draw(st.integers(1, 5))):
        op = data.draw(st.sampled_from(["assign", "assign", "move", "place", "remove"]))
        have = sorted(model)
        if op == "assign" or not have:
            # Some of the members stay (moved or not), others leave, new come.
            keep = [i for i in have if rng.random() < 0.6]
            new = rng.integers(0, top, int(rng.integers(0, 25))).tolist()
            ids = list(dict.fromkeys(keep + new))
            rng.shuffle(ids)
            pos = rng.integers(-12, 40, (len(ids), dims)) / 4.0
            if rng.random() < 0.3:  # those that stay do not move
                for k, i in enumerate(ids):
                    if i in model:
                        pos[k] = model[i]
            grid.assign(ids, pos)
            model = dict(zip(ids, wrapped(pos, torus), strict=True))
        elif op == "move":
            who = rng.choice(have, int(rng.integers(1, len(have) + 1))).tolist()
            pos = rng.integers(-12, 40, (len(who), dims)) / 4.0
            grid.place(who, pos)
            model.update(zip(who, wrapped(pos, torus), strict=True))
        elif op == "place":
            who = rng.integers(0, top, 3).tolist()
            pos = rng.integers(-12, 40, (3, dims)) / 4.0
            grid.place(who, pos)
            model.update(zip(who, wrapped(pos, torus), strict=True))
        else:
            who = sorted(
                set(rng.choice(have, int(rng.integers(1, len(have) + 1))).tolist())
            )
            assert grid.remove(who) == len(who)
            for i in who:
                del model[i]
        agrees(grid, model, dims, cell, torus, rng)


def test_assign_unchanged_keeps_the_table_and_twins():
    rng = np.random.default_rng(3)
    ids = rng.permutation(200)
    pos = rng.uniform(0, 10, (200, 2))
    g = Grid(cell=1.0)
    assert g.assign(ids, pos) is True
    twin = g.jit
    assert g.assign(ids, pos) is False  # the same members where they were
    assert g.jit.version == twin.version  # the twin handed out stays valid
    moved = pos.copy()
    moved[7] += 0.01
    assert g.assign(ids, moved) is True
    np.testing.assert_array_equal(g.positions(ids), moved)


def test_assign_then_twin_moves_and_places():
    g = Grid(cell=1.0)
    g.place([1, 2, 3], [[0, 0], [5, 5], [9, 9]])
    g.assign([3, 4], [[0.5, 0.5], [0.6, 0.5]])
    assert g.contains([1, 2, 3, 4]).tolist() == [False, False, True, True]
    g.place([5, 3], [[0.7, 0.5], [9, 9]])
    a, b = g.pairs(0.5)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(4, 5)]
    assert g.discard([4, 7]) == 1 and sorted(g.ids.tolist()) == [3, 5]


BAD = [
    ([1, 2], [[0, 0], [np.nan, 0]], ValueError, r"pos\[1, 0\]"),
    ([1, 2], [[0, 0], [0, np.inf]], ValueError, r"pos\[1, 1\]"),
    ([1, 2], [[0, 0]], ValueError, "shape"),
    ([1, -2], [[0, 0], [1, 1]], ValueError, "-2"),
    ([1.5, 2], [[0, 0], [1, 1]], TypeError, "integer"),
    ([4, 1, 4], [[0, 0], [1, 1], [2, 2]], ValueError, "4 is repeated"),
    ([1], [["a", 0]], TypeError, "numbers"),
]


@pytest.mark.parametrize(("ids", "pos", "error", "match"), BAD)
def test_bad_assign_changes_nothing(ids, pos, error, match):
    g = Grid(cell=1.0)
    g.place([1, 9], [[0, 0], [0.5, 0]])
    g.pairs(1.0)
    with pytest.raises(error, match=match):
        g.assign(ids, pos)
    assert sorted(g.ids.tolist()) == [1, 9]
    assert g.pairs(1.0)[0].tolist() == [1]
    assert g.positions([9]).tolist() == [[0.5, 0.0]]


@pytest.mark.parametrize("tracked", [True, False])
@pytest.mark.parametrize("torus", [None, (8.0, 8.0)])
def test_world_grid_when_everyone_moves(tracked, torus):
    """Every step moves every entity (the bulk path), some die and are born."""
    rng = np.random.default_rng(7)
    w = World()
    w.register("pos", "f8", shape=(2,), track=tracked)
    w.add("pos", w.create(300), pos=rng.uniform(0, 8, (300, 2)))
    wg = w.grid("pos", cell=1.0, torus=torus)
    for step in range(4):
        store = w["pos"]
        store["pos"][:] += rng.uniform(-0.6, 0.6, store["pos"].shape)
        if tracked:
            w.touch("pos", store.ids)
        w.destroy(rng.choice(store.ids, 20, replace=False))
        w.add("pos", w.create(20), pos=rng.uniform(0, 8, (20, 2)))
        if step == 2:  # one step where few move: the place path after a bulk one
            w.set("pos", w["pos"].ids[:3], pos=[[1, 1], [1.2, 1], [7.9, 7.9]])
        model = dict(
            zip(w["pos"].ids.tolist(), wrapped(w["pos"]["pos"], torus), strict=True)
        )
        agrees(wg, model, 2, 1.0, torus, rng)


def test_world_grid_bulk_nbytes_and_untracked_stays():
    w = World()
    w.register("pos", "f8", shape=(2,))
    e = w.create(50)
    w.add("pos", e, pos=np.random.default_rng(1).uniform(0, 5, (50, 2)))
    wg = w.grid("pos", cell=1.0)
    first = wg.pairs(1.0)
    twin = wg.grid.jit
    again = wg.pairs(1.0)  # untracked, nothing moved: the same table
    assert wg.grid.jit.version == twin.version
    assert sorted(zip(first[0].tolist(), first[1].tolist(), strict=True)) == sorted(
        zip(again[0].tolist(), again[1].tolist(), strict=True)
    )
    assert wg.nbytes > 0
