"""w.grid follows its component: gains, losses, deaths and moves, tracked
(through a reader) or not (by checking positions); checked against a
Grid built afresh from the world after every step."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import Grid, World


def fresh(w: World, torus) -> Grid:
    g = Grid(cell=1.0, dims=2, torus=torus, index="hash")
    g.place(w["pos"].ids, w["pos"]["pos"])
    return g


def same(wg, w: World, torus) -> None:
    ref = fresh(w, torus)
    assert sorted(wg.ids.tolist()) == sorted(w["pos"].ids.tolist())
    assert len(wg) == len(w["pos"])
    for metric in ("euclidean", "chebyshev"):
        a, b = wg.pairs(1.5, metric)
        ra, rb = ref.pairs(1.5, metric)
        assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == sorted(
            zip(ra.tolist(), rb.tolist(), strict=True)
        )
    points = np.array([[0.5, 0.5], [3.0, 4.0], [7.5, 1.0]])
    offsets, found = wg.within(points, 2.0)
    roffsets, rfound = ref.within(points, 2.0)
    for i in range(len(points)):
        assert sorted(found[offsets[i] : offsets[i + 1]].tolist()) == sorted(
            rfound[roffsets[i] : roffsets[i + 1]].tolist()
        )
    if len(w["pos"]):
        h = w["pos"].ids
        np.testing.assert_array_equal(wg.positions(h), ref.positions(h))


@pytest.mark.parametrize("tracked", [True, False])
@pytest.mark.parametrize("torus", [None, (8.0, 8.0)])
@given(data=st.data())
def test_world_grid_follows_its_component(tracked, torus, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    w = World()
    w.register("pos", "f8", shape=(2,), track=tracked)
    w.register("tag")
    alive = list(w.create(40))
    w.add("pos", alive[:30], pos=rng.uniform(0, 8, (30, 2)))
    wg = w.grid("pos", cell=1.0, torus=torus)
    same(wg, w, torus)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(
            st.sampled_from(
                ["set", "inplace", "block", "add", "remove", "destroy", "create"]
            )
        )
        have = w["pos"].ids
        if op == "set" and len(have):
            who = rng.choice(have, min(len(have), int(rng.integers(1, 4))), False)
            w.set("pos", who, pos=rng.uniform(-2, 10, (len(who), 2)))
        elif op == "inplace" and len(have):
            k = int(rng.integers(0, len(have)))
            w["pos"]["pos"][k] += 0.75
            if tracked:  # in-place writes are declared, as for any reader
                w.touch("pos", have[k])
        elif op == "block" and len(have):
            # A block of rows written in place and declared as a range (a
            # group's write scope): most or few of the members.
            start = int(rng.integers(0, len(have)))
            stop = int(rng.integers(start + 1, len(have) + 1))
            w["pos"]["pos"][start:stop] += rng.uniform(-1, 1, (stop - start, 2))
            if tracked:
                w["pos"].touch_rows(slice(start, stop))
        elif op == "add":
            free = [h for h in alive if not w.has("pos", h)]
            if free:
                who = free[: int(rng.integers(1, len(free) + 1))]
                w.add("pos", who, pos=rng.uniform(0, 8, (len(who), 2)))
        elif op == "remove" and len(have):
            w.remove("pos", rng.choice(have, 1))
        elif op == "destroy" and alive:
            gone = alive.pop(int(rng.integers(0, len(alive))))
            w.destroy(gone)
        elif op == "create":
            new = w.create(3)
            alive.extend(new)
            w.add("pos", new, pos=rng.uniform(0, 8, (3, 2)))
        same(wg, w, torus)


def test_world_grid_bad_column():
    w = World()
    w.register("body", {"pos": ("f8", 2), "mass": "f4"})
    w.register("name", "U8")
    with pytest.raises(ValueError, match="column"):
        w.grid("body")
    with pytest.raises(ValueError, match="position"):
        w.grid("name")
    e = w.create(2)
    w.add("body", e, pos=[[0, 0], [0.5, 0.5]], mass=1)
    g = w.grid("body", column="pos")
    assert len(g.pairs(1.0)[0]) == 1
    assert g.component == "body" and g.nbytes > 0 and e[0] in g


def test_a_declared_block_of_writes_is_a_lower_bound_known_before_a_scan():
    w = World()
    w.register("pos", "f8", shape=(2,), track=True)
    e = w.create(10)
    w.add("pos", e, pos=np.zeros((10, 2)))
    reader = w.reader("pos")
    reader.commit()
    store = w["pos"]
    assert store.written_at_least(reader.since) == 0
    store.touch_rows(slice(2, 9))
    assert store.written_at_least(reader.since) == 7
    store.touch_rows(np.array([0]))  # rows by position are stamped, not a block
    assert store.written_at_least(reader.since) == 7
    assert store.rows_after(reader.since, True).tolist() == [0, *range(2, 9)]
    reader.commit()  # the clock moved past the block
    assert store.written_at_least(reader.since) == 0
