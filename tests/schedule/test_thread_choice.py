"""How a schedule's batches use the threads: each way (``Schedule``'s
``MODES``) is tried, the cheapest kept, losers tried again ever more
rarely; every way leaves the same world; a run's ``threads`` caps the
threads its systems' kernels use, and the caller's setting comes back."""

import time

import numba
import numpy as np
import pytest

from sparseset import Schedule, World, config
from sparseset.demo.particles import ParticleWorld
from sparseset.schedule import schedule as scheduling
from sparseset.schedule.schedule import (
    FIRST_TRIALS,
    MODES,
    RETRY_MAX,
    RETRY_RUNS,
    RETRY_SHARE,
    SAMPLES,
    Choice,
    kernel_threads,
)


def test_a_choice_tries_each_way_then_keeps_the_cheapest():
    c = Choice(MODES)
    costs = {"systems": 1.3, "both": 1.2, "kernels": 1.0, "one": 1.4}
    tried = []
    for _ in range(FIRST_TRIALS * len(MODES)):
        mode = c.pick()
        tried.append(mode)
        c.record(mode, costs[mode])
    assert tried == list(MODES) * FIRST_TRIALS and c.best == "kernels"
    runs = []
    for _ in range(4 * RETRY_RUNS):
        mode = c.pick()
        # No loser comes back before RETRY_RUNS runs since its own.
        assert mode == "kernels" or c.idle[mode] >= RETRY_RUNS
        runs.append(mode)
        c.record(mode, costs[mode])
    assert runs.count("kernels") > 3 * RETRY_RUNS and set(runs) > {"kernels"}


def test_a_ways_cost_is_the_median_of_its_recent_runs():
    c = Choice(("kernels", "one"))
    for cost in (1.0, 9.0, 1.2, 1.1, 1.1, 1.2):  # "one" was interrupted once
        c.record(c.pick(), cost)
    assert c.seconds == {"kernels": 1.1, "one": 1.2} and c.best == "kernels"
    for _ in range(SAMPLES):
        c.record("kernels", 2.0)  # the kernels' way got slower, every run
    assert c.seconds["kernels"] == 2.0 and c.best == "one"
    lucky = Choice(("both", "one"))
    for cost in (0.5, 1.0, 3.0, 1.0, 3.0, 1.0):  # one lucky run on busy cores
        lucky.record(lucky.pick(), cost)
    assert lucky.best == "one"


def test_ways_within_the_noise_do_not_take_turns():
    c = Choice(("kernels", "one"))
    for cost in (1.0, 0.97, 1.0, 0.98, 1.0, 0.97):  # "one" cheaper by under 5%
        c.record(c.pick(), cost)
    assert c.best == "kernels" and c.seconds["one"] < c.seconds["kernels"]
    for _ in range(3):
        c.record("one", 0.9)  # now by more: the batch switches
    assert c.best == "one"


def test_a_big_loss_waits_long_enough_to_cost_little():
    c = Choice(("kernels", "one"))
    costs = {"kernels": 1.0, "one": 1.5}
    for _ in range(2 * FIRST_TRIALS):
        mode = c.pick()
        c.record(mode, costs[mode])
    # "one" lost twice by half the batch: it waits at least 25 runs.
    assert c.wait["one"] >= int(0.5 / RETRY_SHARE) and c.best == "kernels"
    picks = []
    for _ in range(c.wait["one"] + 1):  # idle counts the runs since its own
        mode = c.pick()
        picks.append(mode)
        c.record(mode, costs[mode])
    assert picks.count("one") == 1 and picks[-1] == "one"


def test_losers_are_tried_again_ever_more_rarely_and_a_change_is_followed():
    c = Choice(("kernels", "one"))
    costs = {"kernels": 1.0, "one": 2.0}
    picks = []
    for _ in range(400):
        mode = c.pick()
        picks.append(mode)
        c.record(mode, costs[mode])
    trials = [k for k, mode in enumerate(picks) if mode == "one"]
    gaps = np.diff(trials)
    assert (np.diff(gaps) >= 0).all() and gaps.max() == RETRY_MAX + 1
    assert len(trials) < 400 / RETRY_RUNS
    costs["kernels"] = 5.0  # the cores got busy: sharing stopped paying
    for _ in range(RETRY_MAX + 4):
        mode = c.pick()
        c.record(mode, costs[mode])
    assert c.best == "one" and c.pick() == "one"


def test_kernel_threads_caps_this_thread_and_restores_it():
    before = numba.get_num_threads()
    with kernel_threads(1):
        assert numba.get_num_threads() == 1
        with kernel_threads(64):  # never above numba's own count
            assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before


@pytest.fixture
def forced(monkeypatch):
    """Make every batch run one way."""

    def force(mode):
        monkeypatch.setattr(scheduling.Choice, "pick", lambda self: mode)

    return force


@pytest.mark.parametrize("mode", MODES)
def test_every_way_leaves_the_world_one_thread_leaves(forced, mode, monkeypatch):
    # Small enough that the lookups and the demo's own loops go in spans.
    monkeypatch.setattr(config, "PARALLEL_THRESHOLD", 256)
    worlds = []
    for threads in (1, 2):
        forced(mode)
        sim = ParticleWorld(seed=4)
        sim.spawn(3000)
        for _ in range(6):
            sim.step(threads)
        worlds.append(sim)
        if threads == 2:
            assert sim.schedule.modes[1] == mode
    one, two = worlds
    assert one.schedule.modes == ["one", "one"]
    for name in ("pos", "vel", "life", "drag"):
        assert np.array_equal(one.world[name].ids, two.world[name].ids)
        assert np.array_equal(one.world[name][name], two.world[name][name])
    assert np.array_equal(one.counts, two.counts) and two.grid_matches()
    assert (one.spawned, one.despawned) == (two.spawned, two.despawned)


@pytest.mark.parametrize(
    ("threads", "mode", "inside"),
    [
        (1, "one", 1),
        (2, "one", 1),
        (2, "systems", 1),
        (2, "kernels", 2),
        (2, "both", 2),
    ],
)
def test_a_run_caps_the_kernels_threads_of_its_systems(forced, threads, mode, inside):
    if numba.config.NUMBA_NUM_THREADS < 2 and inside > 1:
        inside = 1
    forced(mode)
    w = World()
    w.register("a")
    seen = []
    sch = Schedule()
    for name in ("x", "y"):
        sch.add(
            lambda world: seen.append(numba.get_num_threads()), reads="a", name=name
        )
    before = numba.get_num_threads()
    sch.run(w, threads=threads)
    assert seen == [inside, inside]
    assert sch.modes == [mode if threads > 1 else "one"]
    assert numba.get_num_threads() == before


def test_a_batch_of_one_system_does_not_run_systems_side_by_side():
    sch = Schedule()
    sch.add(lambda world: time.sleep(0.001), name="alone")  # worth sharing
    ran = set()
    for _ in range(RETRY_RUNS + 3):
        sch.run(World(), threads=2)
        ran.update(sch.modes)
    spans = min(2, scheduling.cores(), numba.config.NUMBA_NUM_THREADS) > 1
    assert ran == ({"kernels", "one"} if spans else {"one"})
