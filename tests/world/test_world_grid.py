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


def same(wg, w: World, torus, ever=()) -> None:
    """The World grid answers as a grid of handles built afresh; of every
    handle ever made (``ever``), the live holders of ``pos`` are members
    and the rest (dead, or an older generation of a reused index) not."""
    ref = fresh(w, torus)
    assert sorted(wg.ids.tolist()) == sorted(w["pos"].ids.tolist())
    assert len(wg) == len(w["pos"])
    # The grid inside holds entity keys: the handles' low 32 bits.
    assert sorted(wg.grid.ids.tolist()) == sorted((w["pos"].ids & 0xFFFFFFFF).tolist())
    if len(ever):
        ever = np.asarray(ever, np.int64)
        want = w["pos"].contains(ever)
        assert wg.contains(ever).tolist() == want.tolist()
        assert [int(h) in wg for h in ever] == want.tolist()
        if not want.all():
            gone = int(ever[~want][0])
            asked = [*w["pos"].ids[:1].tolist(), gone]
            where = f"ids\\[{len(asked) - 1}\\]"
            with pytest.raises(KeyError, match=f"{where} = {gone} is not a member"):
                wg.positions(asked)
    cells = np.array([[0, 0], [3, 4], [7, 1], [-1, 2]])
    offsets, found = wg.at(cells)
    roffsets, rfound = ref.at(cells)
    assert offsets.tolist() == roffsets.tolist()
    assert sorted(found.tolist()) == sorted(rfound.tolist())
    for metric in ("euclidean", "chebyshev"):
        a, b = wg.pairs(1.5, metric)
        assert (a < b).all()  # in handles, whatever order the keys had
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
    ever = list(alive)
    w.add("pos", alive[:30], pos=rng.uniform(0, 8, (30, 2)))
    wg = w.grid("pos", cell=1.0, torus=torus)
    same(wg, w, torus, ever)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(
            st.sampled_from(
                [
                    "set",
                    "inplace",
                    "block",
                    "add",
                    "remove",
                    "destroy",
                    "create",
                    "recycle",
                ]
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
            ever.extend(new)
            w.add("pos", new, pos=rng.uniform(0, 8, (3, 2)))
        elif op == "recycle" and alive:
            # Destroyed and made again at once: the index comes back with
            # a new generation, with or without the component.
            gone = alive.pop(int(rng.integers(0, len(alive))))
            w.destroy(gone)
            new = w.create(1)
            assert int(new[0]) & 0xFFFFFFFF == int(gone) & 0xFFFFFFFF
            alive.extend(new)
            ever.extend(new)
            if rng.random() < 0.75:
                w.add("pos", new, pos=rng.uniform(0, 8, (1, 2)))
        same(wg, w, torus, ever)


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


@pytest.mark.parametrize("tracked", [True, False])
def test_a_reused_index_answers_its_new_handle_only(tracked):
    w = World()
    w.register("pos", "f8", shape=(2,), track=tracked)
    e = w.create(3)
    w.add("pos", e, pos=[[0, 0], [0.5, 0], [5, 5]])
    wg = w.grid("pos", cell=1.0)
    assert wg.pairs(1.0)[0].tolist() == [e[0]]
    w.destroy(e[0])
    new = w.create(1)
    assert int(new[0]) & 0xFFFFFFFF == int(e[0])  # index 0, generation 1
    w.add("pos", new, pos=[[0.2, 0.0]])
    a, b = wg.pairs(1.0)
    # Key 0 is below key 1, its handle above: the pair is swapped.
    assert (a.tolist(), b.tolist()) == ([e[1]], [new[0]])
    assert sorted(wg.ids.tolist()) == sorted([e[1], e[2], new[0]])
    assert wg.contains([e[0], new[0]]).tolist() == [False, True]
    assert e[0] not in wg and new[0] in wg
    assert wg.positions(new).tolist() == [[0.2, 0.0]]
    with pytest.raises(KeyError, match=f"ids\\[1\\] = {e[0]} is not a member"):
        wg.positions([new[0], e[0]])
    with pytest.raises(KeyError, match=f"id = {e[0]} is not a member"):
        wg.positions(e[0])
    _, found = wg.within([[0.0, 0.0]], 1.0)
    assert sorted(found.tolist()) == sorted([e[1], new[0]])
    _, found = wg.at([[0, 0]])
    assert sorted(found.tolist()) == sorted([e[1], new[0]])
    # The grid inside and its twin hold keys; handles() turns them back.
    assert sorted(wg.grid.ids.tolist()) == [0, 1, 2]
    assert sorted(wg.handles(wg.grid.jit.dense[:3]).tolist()) == sorted(
        [e[1], e[2], new[0]]
    )


def test_world_grid_refuses_bad_handles_and_keys_as_before():
    w = World()
    w.register("pos", "f8", shape=(2,), track=True)
    e = w.create(2)
    w.add("pos", e, pos=[[0, 0], [1, 1]])
    wg = w.grid("pos")
    with pytest.raises(ValueError, match="non-negative"):
        wg.contains([e[0], -1])
    with pytest.raises(ValueError, match="non-negative"):
        wg.positions([-3])
    with pytest.raises(TypeError):
        wg.contains([1.5])
    assert -1 not in wg and "x" not in wg and 2**70 not in wg and 2**40 not in wg
    assert wg.contains([2**62, 2**31]).tolist() == [False, False]
    with pytest.raises(KeyError, match=f"id = {2**40} is not a member"):
        wg.positions(2**40)
    w.destroy(e[1])
    with pytest.raises(ValueError, match="ids\\[1\\] = 1 is not the key of a live"):
        wg.handles([0, 1])  # key 1's entity is dead
    with pytest.raises(ValueError, match="= 7 is not the key"):
        wg.handles(7)
    assert wg.handles(np.array([0], np.int32)).tolist() == [e[0]]
