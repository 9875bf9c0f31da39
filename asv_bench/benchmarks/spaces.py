"""Grid next to the hand-written cell list (issue 48).

The data of ``../shared/perf/peers/space_peers.py``: ``N = 1_000_000``
uniform points in a square sized so that each has about 10 others within
``R = 1`` (seed 0), and as many query points drawn the same way (seed 1).

- ``Pairs``: every pair within ``R``, build included (positions change
  every step of a simulation): a new ``Grid(cell=R)``, ``place`` and
  ``pairs`` (``time_grid``), against the hand-written numba cell list of
  the peers script (``time_floor``, its loop in ``_space_floor``) and
  scipy's ``cKDTree.query_pairs`` (``time_ckdtree``).
- ``Within``: the members within ``R`` of each of N query points, as CSR,
  on a grid built once (``time_grid``) against a numba loop over the same
  3 x 3 cells of the floor's own cell list (``time_floor``, see
  ``_space_floor``).
- ``Resync``: a World whose tracked ``pos`` has N entities; 1% of them
  move (``w.set``), then the world's grid catches up (``time_resync``),
  against a full rebuild of a grid of the same entities
  (``time_rebuild``: a new grid of their entity keys, as the World's
  grid holds them, ``place`` and its cell table). The grid's first
  re-bucketing move makes its links (4 bytes a slot, fresh pages), once
  in its life: ``time_resync_again`` is a step after that, as every
  step of a simulation but its first (1% moved once and caught up in
  ``setup``, then another 1%).
- ``WorldQueries``: ``pairs`` and ``within`` (N query points) of that
  World's grid, in handles (``time_world_*``), against the same queries
  of the grid inside it, in entity keys (``time_keys_*``): the share of
  turning keys into handles.
- ``Memory``: ``track_bytes_per_member``, ``Grid.nbytes / N`` with the
  cell table, and ``track_table_bytes_per_member``, the cell table's share
  (``Grid.table_nbytes / N``).
- ``Bookkeeping``: what a grid holds beside its members' positions
  (``8 * dims`` bytes each) and the cell table, per member (issue 48's
  target: at most 16), spare slots included, for a grid built by
  ``place``, one built by ``assign`` (queried, one id looked up), and a
  World's grid (tracked ``pos``: entity keys under a flat index), each
  after 1% of the members moved (their links held).

Read ``grid / floor`` from one run; absolute times are context only. The
data is built once per benchmark process by the cached ``_...`` functions;
every kernel is compiled (or loaded from numba's cache) in ``setup``.
"""

import functools
import math

import numpy as np
from scipy.spatial import cKDTree

from sparseset import Grid, World

from . import _space_floor
from ._size import sized

N = sized(1_000_000)
R = 1.0
NEIGHBOURS = 10
#: How ``Bookkeeping``'s grids are made.
BUILT_BY = ("place", "assign", "world")


@functools.cache
def _points():
    side = math.sqrt(math.pi * R * R * N / NEIGHBOURS)
    pos = np.random.default_rng(0).uniform(0, side, (N, 2))
    queries = np.random.default_rng(1).uniform(0, side, (N, 2))
    return pos, queries


class Pairs:
    number = 1
    repeat = 7
    timeout = 600

    def setup(self):
        self.pos, _ = _points()
        self.ids = np.arange(N)
        self.time_grid()
        self.time_floor()

    def time_grid(self):
        g = Grid(cell=R, dims=2)
        g.place(self.ids, self.pos)
        g.pairs(R)

    def time_floor(self):
        _space_floor.floor_pairs(self.pos, R)

    def time_ckdtree(self):
        cKDTree(self.pos).query_pairs(R, output_type="ndarray")


class Within:
    number = 1
    repeat = 7
    timeout = 600

    def setup(self):
        pos, self.queries = _points()
        self.grid = Grid(cell=R, dims=2)
        self.grid.place(np.arange(N), pos)
        self.cells = _space_floor.floor_cells(pos, R)
        self.time_grid()
        self.time_floor()

    def time_grid(self):
        self.grid.within(self.queries, R)

    def time_floor(self):
        _space_floor.floor_within(*self.cells, R, self.queries, R)


def _tracked_world(pos):
    """A World of ``len(pos)`` entities with a tracked ``pos``, and its
    grid, placed and built."""
    world = World()
    world.register("pos", "f8", shape=(2,), track=True)
    handles = world.create(len(pos))
    world.add("pos", handles, pos=pos)
    grid = world.grid("pos", cell=R)
    grid.pairs(R)
    return world, handles, grid


def _move_one_percent(world, handles, rng):
    """Move 1% of ``handles`` by up to half a cell, declared (``w.set``)."""
    movers = rng.choice(handles, len(handles) // 100, replace=False)
    step = rng.uniform(-0.5, 0.5, (len(movers), 2))
    world.set("pos", movers, pos=world.get("pos", movers)["pos"] + step)


class Resync:
    number = 1
    repeat = 7
    timeout = 600

    def setup(self):
        pos, _ = _points()
        rng = np.random.default_rng(2)
        self.world, self.handles, self.grid = _tracked_world(pos)
        _move_one_percent(self.world, self.handles, rng)
        self.keys = self.world["pos"].members().copy()
        self.pos = self.world["pos"]["pos"]
        self.time_rebuild()
        # A second world, one step further: 1% moved and caught up (the
        # grid's links made), then another 1% moved.
        again, handles, self._again = _tracked_world(pos)
        _move_one_percent(again, handles, rng)
        self._again.sync()
        _move_one_percent(again, handles, rng)

    def time_resync(self):
        self.grid.sync()

    def time_resync_again(self):
        self._again.sync()

    def time_rebuild(self):
        g = Grid(cell=R, dims=2)
        g.place(self.keys, self.pos)
        g.at(np.zeros((1, 2), np.int64))  # builds the cell table


class WorldQueries:
    number = 1
    repeat = 7
    timeout = 600

    def setup(self):
        pos, queries = _points()
        self.world, _, self.grid = _tracked_world(pos)  # placed and built
        self.keyed = self.grid.grid
        self.queries = queries
        self.grid.within(self.queries[:10], R)  # every kernel compiled

    def time_world_pairs(self):
        self.grid.pairs(R)

    def time_keys_pairs(self):
        self.keyed.pairs(R)

    def time_world_within(self):
        self.grid.within(self.queries, R)

    def time_keys_within(self):
        self.keyed.within(self.queries, R)


class Memory:
    def setup(self):
        pos, _ = _points()
        self.grid = Grid(cell=R, dims=2)
        self.grid.place(np.arange(N), pos)
        self.grid.pairs(R)

    def track_bytes_per_member(self):
        return self.grid.nbytes / N

    track_bytes_per_member.unit = "bytes"

    def track_table_bytes_per_member(self):
        return self.grid.table_nbytes / N

    track_table_bytes_per_member.unit = "bytes"


class Bookkeeping:
    params = BUILT_BY
    param_names = ("built_by",)

    def setup(self, built_by):
        pos, _ = _points()
        ids = np.arange(N)
        movers = np.random.default_rng(2).choice(N, N // 100, replace=False)
        moved = pos[movers] + 0.5
        if built_by == "world":
            world = World()
            world.register("pos", "f8", shape=(2,), track=True)
            handles = world.create(N)
            world.add("pos", handles, pos=pos)
            grid = world.grid("pos", cell=R)
            grid.pairs(R)
            world.set("pos", handles[movers], pos=moved)
            grid.pairs(R)
            self.grid = grid.grid
            self.world = world  # the grid's world lives as long as it
        else:
            self.grid = Grid(cell=R, dims=2)
            if built_by == "place":
                self.grid.place(ids, pos)
            else:
                self.grid.assign(ids, pos)
            self.grid.pairs(R)
            self.grid.place(movers, moved)
            self.grid.pairs(R)

    def track_bookkeeping_bytes_per_member(self, built_by):
        g = self.grid
        return (g.nbytes - g.table_nbytes - 8 * g.dims * len(g)) / len(g)

    track_bookkeeping_bytes_per_member.unit = "bytes"
