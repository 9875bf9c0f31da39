"""Grid against brute force: every metric, torus or not, 1-3 axes, after
places, moves and removals, on every index kind; and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import Grid, config, kernels

KINDS = ["flat", "paged", "hash"]
METRICS = ["euclidean", "chebyshev", "manhattan"]


def periodic(delta: np.ndarray, torus: tuple[float, ...] | None) -> np.ndarray:
    delta = np.abs(delta)
    if torus is not None:
        size = np.asarray(torus)
        delta = np.where(delta > 0.5 * size, size - delta, delta)
    return delta


def close(delta: np.ndarray, r: float, metric: str) -> np.ndarray:
    """The kernels' own formulas: the same float operations, the same answers."""
    if metric == "euclidean":
        return (delta**2).sum(axis=-1) <= r * r
    if metric == "chebyshev":
        return delta.max(axis=-1) <= r
    return delta.sum(axis=-1) <= r


def wrapped(pos: np.ndarray, torus: tuple[float, ...] | None) -> np.ndarray:
    if torus is None:
        return pos
    out = np.mod(pos, torus)
    return np.where(out >= np.asarray(torus), 0.0, out)


class Model:
    """A dict of id -> position, and brute-force answers."""

    def __init__(self, cell: float, dims: int, torus: tuple[float, ...] | None):
        self.cell, self.dims, self.torus = cell, dims, torus
        self.pos: dict[int, np.ndarray] = {}

    def place(self, ids: list[int], pos: np.ndarray) -> int:
        new = len(set(ids) - set(self.pos))
        for i, p in zip(ids, wrapped(pos, self.torus), strict=True):
            self.pos[i] = p
        return new

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        ids = np.array(sorted(self.pos), np.int64)
        pos = np.array([self.pos[i] for i in ids]).reshape(len(ids), self.dims)
        return ids, pos

    def pairs(self, r: float, metric: str) -> set[tuple[int, int]]:
        ids, pos = self.arrays()
        out = set()
        for k in range(len(ids)):
            hit = close(periodic(pos[k + 1 :] - pos[k], self.torus), r, metric)
            out |= {(int(ids[k]), int(j)) for j in ids[k + 1 :][hit]}
        return out

    def within(self, point: np.ndarray, r: float, metric: str) -> list[int]:
        ids, pos = self.arrays()
        point = wrapped(point[None, :], self.torus)[0]
        return sorted(ids[close(periodic(pos - point, self.torus), r, metric)].tolist())

    def cell_of(self, p: np.ndarray) -> tuple[int, ...]:
        c = np.floor(p / self.cell).astype(np.int64)
        if self.torus is not None:
            n = np.array([max(1, math.ceil(s / self.cell)) for s in self.torus])
            c = np.minimum(c, n - 1)
        return tuple(c.tolist())

    def at(self, cell: tuple[int, ...]) -> list[int]:
        if self.torus is not None:
            n = [max(1, math.ceil(s / self.cell)) for s in self.torus]
            cell = tuple(c % k for c, k in zip(cell, n, strict=True))
        return sorted(i for i, p in self.pos.items() if self.cell_of(p) == cell)


def check(grid: Grid, model: Model, rng: np.random.Generator) -> None:
    ids, pos = model.arrays()
    assert len(grid) == len(ids)
    assert sorted(grid.ids.tolist()) == ids.tolist()
    if len(ids):
        np.testing.assert_array_equal(grid.positions(ids), pos)
    for metric in METRICS:
        r = float(rng.choice([0.0, 0.5, 1.0, 1.25, 2.0, 3.5]))
        a, b = grid.pairs(r, metric)
        assert (a < b).all()
        got = list(zip(a.tolist(), b.tolist(), strict=True))
        assert len(got) == len(set(got)), "a pair found twice"
        assert set(got) == model.pairs(r, metric), (metric, r)
        points = rng.integers(-8, 24, (6, model.dims)) / 4.0
        if len(ids):
            points = np.vstack([points, pos[: min(3, len(ids))]])
        offsets, found = grid.within(points, r, metric)
        assert offsets[0] == 0 and offsets.shape == (len(points) + 1,)
        for i, point in enumerate(points):
            seg = found[offsets[i] : offsets[i + 1]]
            assert sorted(seg.tolist()) == model.within(point, r, metric), (metric, r)
    cells = rng.integers(-3, 8, (5, model.dims))
    if len(ids):
        cells = np.vstack([cells, [model.cell_of(p) for p in pos[:3]]])
    offsets, found = grid.at(cells)
    for i, cell in enumerate(cells):
        seg = sorted(found[offsets[i] : offsets[i + 1]].tolist())
        assert seg == model.at(tuple(int(c) for c in cell))


SPACES = [
    (1.0, 2, None),
    (0.5, 2, None),
    (1.0, 2, (6.0, 5.0)),
    (1.5, 2, (7.0, 4.0)),  # sizes not multiples of the cell
    (1.0, 3, None),
    (1.0, 3, (4.0, 5.0, 3.0)),
    (1.0, 1, None),
    (2.0, 1, (9.0,)),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("cell", "dims", "torus"), SPACES)
@given(data=st.data())
def test_against_brute_force(kind, cell, dims, torus, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    grid = Grid(cell=cell, dims=dims, torus=torus, index=kind)
    model = Model(cell, dims, torus)
    top = data.draw(st.sampled_from([40, 2**20]))
    for _ in range(data.draw(st.integers(1, 5))):
        op = data.draw(st.sampled_from(["place", "place", "move", "remove", "discard"]))
        have = sorted(model.pos)
        if op == "place" or not have:
            count = int(rng.integers(0, 30))
            ids = rng.integers(0, top, count).tolist()
            # Quarter steps: distances on the boundary r are exact and frequent.
            pos = rng.integers(-12, 40, (count, dims)) / 4.0
            assert grid.place(ids, pos) == model.place(ids, pos)
        elif op == "move":
            ids = rng.choice(have, int(rng.integers(1, 3))).tolist()
            pos = rng.integers(-12, 40, (len(ids), dims)) / 4.0
            assert grid.place(ids, pos) == 0
            model.place(ids, pos)
        else:
            ids = rng.choice(have, int(rng.integers(1, len(have) + 1))).tolist()
            extra = [top + 5] if op == "discard" else []
            gone = len(set(ids))
            assert getattr(grid, op)(ids + extra) == gone
            for i in ids:
                model.pos.pop(i, None)
        check(grid, model, rng)


@pytest.mark.parametrize("kind", KINDS)
def test_moves_after_a_build_and_far_away(kind):
    """Few moves re-bucket in place (strays), some outside the built window
    (clamped into its edge); far-flung members hash their cells."""
    rng = np.random.default_rng(7)
    for torus in (None, (30.0, 20.0)):
        grid = Grid(cell=1.0, dims=2, torus=torus, index=kind)
        model = Model(1.0, 2, torus)
        ids = np.arange(200) * 3
        pos = rng.uniform(0, 20, (200, 2))
        grid.place(ids, pos)
        model.place(ids.tolist(), pos)
        check(grid, model, rng)
        for step in range(6):
            who = rng.choice(ids, 5, replace=False)
            spread = 20 if step < 3 else 60
            new = rng.uniform(-spread, spread, (5, 2)) + 10
            grid.place(who, new)
            model.place(who.tolist(), new)
            check(grid, model, rng)
    grid = Grid(cell=1.0, dims=3, index=kind)
    model = Model(1.0, 3, None)
    pos = np.vstack([rng.uniform(0, 3, (40, 3)), rng.uniform(-1e9, 1e9, (10, 3))])
    pos[-1] = pos[0] + 0.5  # a pair far from the rest... and a near one
    pos[-2] = [1e12, -1e12, 5e11]
    grid.place(np.arange(50), pos)
    model.place(list(range(50)), pos)
    check(grid, model, rng)


def test_floats_against_brute_force():
    rng = np.random.default_rng(3)
    for torus in (None, (13.3, 9.1)):
        grid = Grid(cell=0.7, dims=2, torus=torus)
        model = Model(0.7, 2, torus)
        pos = rng.uniform(-5, 15, (400, 2))
        grid.place(np.arange(400), pos)
        model.place(list(range(400)), pos)
        for metric in METRICS:
            for r in (0.3, 0.7, 1.9):
                a, b = grid.pairs(r, metric)
                assert set(zip(a.tolist(), b.tolist(), strict=True)) == model.pairs(
                    r, metric
                )


def test_moore_and_von_neumann():
    """Integer positions, r = 1: chebyshev is Moore's neighbourhood, manhattan
    von Neumann's (each with the centre)."""
    grid = Grid(cell=1.0, dims=2, torus=(5, 5))
    xy = np.array([(x, y) for x in range(5) for y in range(5)], np.float64)
    grid.place(np.arange(25), xy)
    _, found = grid.within([[0, 0]], 1, "chebyshev")
    cells = {tuple(xy[i].astype(int)) for i in found}
    assert cells == {(x % 5, y % 5) for x in (-1, 0, 1) for y in (-1, 0, 1)}
    _, found = grid.within([[0, 0]], 1, "manhattan")
    cells = {tuple(xy[i].astype(int)) for i in found}
    assert cells == {(0, 0), (1, 0), (4, 0), (0, 1), (0, 4)}


def test_duplicates_last_wins_and_membership():
    grid = Grid(cell=1.0)
    assert grid.place([4, 4, 9], [[0, 0], [5, 5], [1, 1]]) == 2
    assert grid.positions([4]).tolist() == [[5.0, 5.0]]
    assert 4 in grid and 5 not in grid and "x" not in grid and -1 not in grid
    assert grid.contains([4, 5]).tolist() == [True, False]
    assert grid.nbytes > 0
    grid.clear()
    assert len(grid) == 0 and grid.pairs(1.0)[0].shape == (0,)


BAD_PLACES = [
    ([1, 2], [[0, 0], [np.nan, 0]], ValueError, r"pos\[1, 0\] = nan"),
    ([1, 2], [[0, 0], [0, np.inf]], ValueError, r"pos\[1, 1\] = inf"),
    ([1, 2], [[0, 0]], ValueError, "shape"),
    ([1, 2], [[0, 0, 0], [1, 1, 1]], ValueError, "shape"),
    ([1, -2], [[0, 0], [1, 1]], ValueError, r"ids\[1\] = -2"),
    ([1, 2.5], [[0, 0], [1, 1]], TypeError, "integers"),
    ([1, 2**40], [[0, 0], [1, 1]], ValueError, "range"),
    ([1, 2], "ab", TypeError, "numbers"),
]


@pytest.mark.parametrize(("ids", "pos", "error", "match"), BAD_PLACES)
def test_bad_place_changes_nothing(ids, pos, error, match):
    grid = Grid(cell=1.0)
    grid.place([1, 7], [[0.5, 0.5], [3, 3]])
    before = grid.pairs(5.0)
    with pytest.raises(error, match=match):
        grid.place(ids, pos)
    assert sorted(grid.ids.tolist()) == [1, 7]
    assert grid.positions([1, 7]).tolist() == [[0.5, 0.5], [3.0, 3.0]]
    after = grid.pairs(5.0)
    assert [x.tolist() for x in after] == [x.tolist() for x in before]


@pytest.mark.parametrize("bad", [np.nan, -np.nan, np.inf, -np.inf])
def test_a_non_finite_coordinate_deep_in_a_shared_batch_is_named(bad, monkeypatch):
    # Small enough that the finite check goes in spans over the threads.
    monkeypatch.setattr(config, "PARALLEL_THRESHOLD", 64)
    grid = Grid(cell=1.0)
    pos = np.random.default_rng(3).uniform(-50, 50, (5000, 2))
    pos[4321, 1] = bad
    with pytest.raises(ValueError, match=r"pos\[4321, 1\] = -?(nan|inf)"):
        grid.place(np.arange(5000), pos)
    with pytest.raises(ValueError, match=r"pos\[4321, 1\]"):
        grid.assign(np.arange(5000), pos)
    assert len(grid) == 0
    pos[4321, 1] = np.finfo(np.float64).max  # the largest finite value is fine
    assert grid.place(np.arange(5000), pos) == 5000


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40))
def test_the_finite_check_answers_as_numpy(values):
    arr = np.array(values, np.float64)
    assert kernels.any_non_finite(arr.view(np.uint64)) == bool(
        (~np.isfinite(arr)).any()
    )


def test_bad_removal_and_queries_change_nothing():
    grid = Grid(cell=1.0)
    grid.place([1, 7], [[0.5, 0.5], [3, 3]])
    with pytest.raises(KeyError, match="ids\\[1\\] = 8"):
        grid.remove([1, 8])
    with pytest.raises(ValueError, match="-1"):
        grid.discard([1, -1])
    with pytest.raises(TypeError):
        grid.remove([1.5])
    assert sorted(grid.ids.tolist()) == [1, 7]
    with pytest.raises(KeyError):
        grid.positions([9])
    with pytest.raises(ValueError, match="finite"):
        grid.within([[np.nan, 0]], 1.0)
    with pytest.raises(ValueError, match="shape"):
        grid.within([[0, 0, 0]], 1.0)
    with pytest.raises(ValueError, match="r must be"):
        grid.within([[0, 0]], -1.0)
    with pytest.raises(ValueError, match="r must be"):
        grid.pairs(math.inf)
    with pytest.raises(ValueError, match="metric"):
        grid.pairs(1.0, "cosine")
    with pytest.raises(TypeError, match="integers"):
        grid.at([[0.5, 0]])
    with pytest.raises(ValueError, match="cell"):
        Grid(cell=0)
    with pytest.raises(ValueError, match="dims"):
        Grid(dims=4)
    with pytest.raises(ValueError, match="torus"):
        Grid(dims=2, torus=(1, 2, 3))
    with pytest.raises(ValueError, match="torus"):
        Grid(dims=2, torus=(1, -2))


def test_queries_answer_handles_through_a_generation_table():
    """``generations=``: a grid of entity keys answers handles (``key |
    generation << 32``, the LIVE bit dropped), as it finds them; pairs
    stay smaller first in handles; a key past the table answers as is."""
    live = np.uint32(1 << 31)
    gens = np.array([3, 0, 1], np.uint32) | live
    g = Grid(cell=1.0)
    g.place([0, 1, 2, 7], [[0, 0], [0.5, 0], [5, 5], [5.5, 5]])
    handle = {0: 3 << 32, 1: 1, 2: 2 | 1 << 32, 7: 7}
    for metric in ("euclidean", "chebyshev", "manhattan"):
        a, b = g.pairs(1.0, metric, generations=gens)
        want = sorted(
            (min(handle[x], handle[y]), max(handle[x], handle[y]))
            for x, y in zip(*g.pairs(1.0, metric), strict=True)
        )
        assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == want
    _, found = g.within([[0.0, 0.0], [5, 5]], 1.0, generations=gens)
    assert sorted(found.tolist()) == sorted(handle.values())
    _, found = g.at([[0, 0], [5, 5]], generations=gens)
    assert sorted(found.tolist()) == sorted(handle.values())
    g.place([2], [[40.0, 40.0]])  # a stray: the general kernels
    _, found = g.within([[40.0, 40.0]], 0.5, generations=gens)
    assert found.tolist() == [handle[2]]
    for bad in (gens.astype(np.int64), gens.reshape(1, 3), [1, 2]):
        with pytest.raises(TypeError, match="generations must be a 1-D uint32"):
            g.pairs(1.0, generations=bad)
