"""Tests for ``sparseset.demo``: the simulation of ``python -m sparseset demo``.

Its two kernels against plain numpy references, the world's life cycle over
many steps (handles recycled, the group whole, the books balanced) and the
summary's own check. The command line around it is tested in
``test_cli.py``.
"""

import io

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sparseset.demo import (
    BOX,
    BOX_CELLS,
    CELL,
    DemoSummary,
    ParticleWorld,
    apply_drag,
    integrate,
    run_demo,
)


def integrate_reference(pos, vel, dt, gravity, box):
    """``integrate`` in numpy: gravity, move, bounce off the walls."""
    vel[:, 1] += gravity * dt
    moved = pos + vel * dt
    outside = (moved > box) | (moved < -box)
    vel[outside] = -vel[outside]
    pos[:] = np.clip(moved, -box, box)


def rows(count):
    values = st.floats(-3.0, 3.0, allow_nan=False, width=64)
    return hnp.arrays(np.float64, (count, 2), elements=values)


@given(st.integers(0, 40).flatmap(lambda n: st.tuples(rows(n), rows(n))))
def test_integrate_matches_numpy(arrays):
    pos, vel = arrays
    pos = np.clip(pos, -BOX, BOX)
    want_pos, want_vel = pos.copy(), vel.copy()
    integrate_reference(want_pos, want_vel, 0.05, -0.5, BOX)
    integrate(pos, vel, 0.05, -0.5, BOX)
    np.testing.assert_allclose(pos, want_pos, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(vel, want_vel)
    assert np.abs(pos).max(initial=0.0) <= BOX


@given(st.integers(1, 40), st.integers(0, 40), st.randoms(use_true_random=False))
def test_apply_drag_matches_numpy(n, matched, random):
    matched = min(matched, n)
    rng = np.random.default_rng(random.getrandbits(32))
    vel = rng.standard_normal((n, 2))
    drag = rng.uniform(0.1, 1.0, n).astype(np.float32)
    # A view's rows: distinct rows in each store, in any order.
    vel_rows = rng.permutation(n)[:matched]
    drag_rows = rng.permutation(n)[:matched]
    want = vel.copy()
    want[vel_rows] *= (1.0 - drag[drag_rows].astype(np.float64) * 0.1)[:, None]
    apply_drag(vel, drag, vel_rows, drag_rows, 0.1)
    np.testing.assert_allclose(vel, want, rtol=1e-12, atol=0)


def test_the_demo_recycles_handles_and_keeps_its_group_whole():
    sim = ParticleWorld(seed=3)
    sim.spawn(2_000)
    first = sim.world.entities
    for _ in range(60):
        sim.step()
    w = sim.world
    assert len(w) == 2_000 and sim.spawned - sim.despawned == 2_000
    assert not w.alive(first).all()
    assert (w.entities >> 32).max() >= 1  # recycled indexes, next generation
    # Every particle has pos and vel, so the group holds all of them.
    assert len(sim.motion) == len(w["pos"]) == len(w["vel"]) == 2_000
    assert np.abs(w["pos"]["pos"]).max() <= 1.0


def test_the_same_seed_gives_the_same_world():
    a = run_demo(entities=500, steps=50, seed=7, out=io.StringIO())
    b = run_demo(entities=500, steps=50, seed=7, out=io.StringIO())
    assert (a.spawned, a.despawned) == (b.spawned, b.despawned)
    assert a.live_per_step == b.live_per_step == [500] * 50
    assert a.grid_ok and a.lines()[-2].endswith("position (ok)")


def test_any_threads_give_the_same_world_and_the_grid_keeps_up():
    worlds = []
    for threads in (1, 2):
        sim = ParticleWorld(seed=5)
        sim.spawn(1_500)
        for _ in range(50):
            sim.step(threads)
            assert sim.grid_matches()
        assert sim.despawned > 0
        worlds.append(sim.world)
    a, b = worlds
    np.testing.assert_array_equal(a.entities, b.entities)
    for name in ("pos", "vel", "life"):
        ids = a[name].ids
        np.testing.assert_array_equal(a.get(name, ids)[name], b.get(name, ids)[name])


def test_the_world_grid_holds_every_particle_in_the_cell_of_its_position():
    sim = ParticleWorld(seed=6)
    sim.spawn(300)
    w = sim.world
    for step in range(40):
        if step == 20:  # a write from outside the systems, declared: seen too
            w.set("pos", w["pos"].ids[:10], pos=(0.99, 0.99))
        sim.step()
        # Brute force, one cell at a time: who sits in it, by position.
        handles, pos = w["pos"].ids, w["pos"]["pos"]
        cell = np.floor(pos / CELL).astype(np.int64)
        offsets, found = sim.space.at(BOX_CELLS)
        for k in range(0, BOX_CELLS.shape[0], 7):
            inside = handles[(cell == BOX_CELLS[k]).all(1)]
            assert sorted(found[offsets[k] : offsets[k + 1]]) == sorted(inside)
        assert offsets[-1] == len(w) == len(sim.space)
        assert sim.grid_matches()
    # The counts per cell: every particle.
    assert int(sim.counts.sum()) == len(w)


def test_grid_matches_sees_a_grid_that_fell_behind():
    sim = ParticleWorld(seed=8)
    sim.spawn(200)
    sim.step()
    assert sim.grid_matches()
    # Behind the world's back (an undeclared write): the grid cannot know.
    w = sim.world
    w["pos"]["pos"][:5] = np.clip(w["pos"]["pos"][:5] + 0.5, -BOX, BOX)
    assert not sim.grid_matches()


def test_an_unbalanced_summary_is_reported_and_fails():
    summary = DemoSummary(10, 1, 1.0, spawned=12, despawned=1, live=10, updates=10)
    assert not summary.balanced
    assert summary.lines()[-1].endswith("(MISMATCH)")
