"""WolfSheep against Mesa's own example, statistically; its rules on staged cases.

The validation runs Mesa's ``WolfSheep`` (stepped by its ABMSimulator,
which schedules the grass's regrowth) and ours over the same parameters
(:data:`PARAMS`: Mesa's defaults on a 10 x 10 grid, 40 sheep and 10
wolves) and :data:`SEEDS` seeds each, and compares, for wolves, sheep
and grown grass, the mean over seeds of each run's mean count over
steps 1 to :data:`STEPS`: the difference of the means must be within
:data:`K` standard errors (estimated from both samples). Under the null
(same model) a false alarm has probability about 4e-4 (three
comparisons, each beyond 4 standard errors with probability about
1.2e-4 under Student's t with ~98 degrees of freedom; the run means are
sums of many steps, close to normal at 50 seeds a side). Power: the
per-seed spread of the run means is about 2 animals or patches, so the
standard error of a difference is about 0.4 and a shift of 2.4 in a
mean (about 15% of the sheep's or the wolves' mean) is caught with
probability 0.9. Rules broken on purpose, run (offline) as this test
runs them: a Moore neighbourhood in place of von Neumann's moves the
sheep's mean by about 20 standard errors and wolves that do not seek
sheep by about 16 (always caught); sheep that ignore wolves move the
grass by about 4 (caught about half the time); grass that regrows a
step early moves the sheep by about 2 (missed: too small an effect for
this size).
"""

from __future__ import annotations

import numpy as np
import pytest

from sparseset.models import WolfSheep

SEEDS = 50
STEPS = 12
K = 4.0
PARAMS = {"width": 10, "height": 10, "initial_sheep": 40, "initial_wolves": 10}


def mesa_means() -> np.ndarray:
    from mesa.examples import WolfSheep as MesaWolfSheep
    from mesa.experimental.devs import ABMSimulator

    out = []
    for seed in range(SEEDS):
        simulator = ABMSimulator()
        m = MesaWolfSheep(simulator=simulator, seed=seed, **PARAMS)
        simulator.run_for(STEPS)
        frame = m.datacollector.get_model_vars_dataframe()
        assert len(frame) == STEPS + 1  # step 0, then every step
        out.append(frame[["Wolves", "Sheep", "Grass"]].to_numpy()[1:].mean(axis=0))
    return np.array(out, np.float64)


def our_means() -> np.ndarray:
    out = []
    for seed in range(SEEDS):
        m = WolfSheep(seed=1000 + seed, **PARAMS)
        rows = []
        for _ in range(STEPS):
            m.step()
            rows.append(m.counts())
        out.append(np.mean(rows, axis=0))
    return np.array(out, np.float64)


def test_the_populations_match_mesas_over_many_seeds():
    theirs, ours = mesa_means(), our_means()
    se = np.sqrt(theirs.var(0, ddof=1) / SEEDS + ours.var(0, ddof=1) / SEEDS)
    z = (ours.mean(0) - theirs.mean(0)) / se
    assert (np.abs(z) <= K).all(), (ours.mean(0), theirs.mean(0), se)
    assert (se < 0.8).all()  # the test keeps its power
    assert theirs[:, 1].mean() > 5  # the sheep live long enough to be compared


def staged(sheep, wolves, *, width=5, height=5, energy=10.0, **params):
    """A model with animals at the given cells, energies ``energy``,
    no births and no grass unless ``params`` say otherwise."""
    params = {"sheep_reproduce": 0.0, "wolf_reproduce": 0.0, "grass": False} | params
    m = WolfSheep(
        width=width, height=height, initial_sheep=len(sheep),
        initial_wolves=len(wolves), seed=0, **params,
    )  # fmt: skip
    for kind, cells in (("sheep", sheep), ("wolf", wolves)):
        store = m.world[kind]
        if cells:
            store["pos"][:] = np.array(cells, np.float64)
        store["energy"][:] = energy
    return m


def positions(m, kind):
    return sorted(map(tuple, m.world[kind]["pos"].astype(int).tolist()))


def test_a_sheep_takes_the_one_cell_without_a_wolf():
    for seed in range(5):
        m = staged([(2, 2)], [(1, 2), (3, 2), (2, 1)])
        m.rng = np.random.default_rng(seed)
        m.step()
        assert positions(m, "sheep") == [(2, 3)]


def test_the_grid_wraps():
    m = staged([(0, 2)], [(1, 2), (0, 1), (0, 3)])
    m.step()
    assert positions(m, "sheep") == [(4, 2)]


def test_a_sheep_prefers_grown_grass_and_eats_it():
    for seed in range(5):
        m = staged([(2, 2)], [], grass=True, grass_regrowth_time=7, energy=3.0)
        m.rng = np.random.default_rng(seed)
        m.regrow_at[:] = 10**6  # nothing grown ...
        m.regrow_at[2, 1] = 0  # ... but one neighbour
        m.step()
        assert positions(m, "sheep") == [(2, 1)]
        assert m.world["sheep"]["energy"][0] == 3.0 - 1 + 4  # Mesa's gain of 4
        assert m.grass_countdown()[2, 1] == 7 and not m.fully_grown()[2, 1]


def test_eaten_grass_grows_again_after_grass_regrowth_time_steps():
    m = staged([(2, 2)], [], grass=True, grass_regrowth_time=3, energy=3.0)
    m.regrow_at[:] = 10**6
    m.regrow_at[2, 1] = 0
    m.step()  # step 1: the sheep eats at (2, 1)
    assert positions(m, "sheep") == [(2, 1)] and m.regrow_at[2, 1] == 1 + 3
    grown = []
    for _ in range(3):
        m.step()
        grown.append(bool(m.fully_grown()[2, 1]))
    assert grown == [False, False, True]  # Mesa's: at the end of step 1 + 3
    assert m.counts()[2] == 1


def test_starving_is_energy_below_zero():
    m = staged([(0, 0), (4, 4)], [], grass=True)
    m.regrow_at[:] = 10**6  # no grass anywhere
    m.world["sheep"]["energy"][:] = [0.5, 1.0]
    survivor = m.sheep[1]
    m.step()
    assert m.sheep.tolist() == [survivor]  # 1.0 - 1 = 0 lives, -0.5 dies
    assert len(m.sheep_grid) == 1


def test_without_grass_sheep_neither_tire_nor_eat():
    m = staged([(0, 0)], [], energy=0.25)
    m.run(5)
    assert m.world["sheep"]["energy"].tolist() == [0.25] and m.counts() == (0, 1, 0)


def test_a_surrounded_sheep_stays_and_one_wolf_eats_it():
    """The first wolf sees the sheep in one of its four neighbours and
    always goes there (wolves that moved at random would all miss it in
    a third of the seeds)."""
    for seed in range(12):
        m = staged([(2, 2)], [(1, 2), (3, 2), (2, 1), (2, 3)], energy=10.0)
        m.rng = np.random.default_rng(seed)
        m.step()
        energy = m.world["wolf"]["energy"]
        assert m.counts()[:2] == (4, 0)
        fed = energy == 10.0 - 1 + 20  # Mesa's gain of 20
        assert fed.sum() == 1 and (energy[~fed] == 9.0).all()
        assert tuple(m.world["wolf"]["pos"][fed][0]) == (2, 2)


def test_a_lamb_is_prey_in_the_step_it_is_born():
    """The surrounded ewe stays and gives birth; the wolves, after all the
    sheep, find two sheep: two of them eat."""
    for seed in range(6):
        m = staged([(2, 2)], [(1, 2), (3, 2), (2, 1), (2, 3)], sheep_reproduce=1.0)
        m.rng = np.random.default_rng(seed)
        m.step()
        energy = m.world["wolf"]["energy"]
        assert m.counts()[:2] == (4, 0)
        assert (energy == 29.0).sum() == 2


def test_a_newborn_waits_for_the_next_step():
    m = staged([], [(2, 2)], wolf_reproduce=1.0, energy=10.0)
    m.step()
    wolves = m.world["wolf"]
    assert len(wolves) == 2
    assert wolves["energy"].tolist() == [4.5, 4.5]  # (10 - 1) / 2 each
    assert (wolves["pos"][0] == wolves["pos"][1]).all()  # born in its cell


def test_neighbourhoods_on_small_rings_are_mesas():
    import random

    from mesa.discrete_space import OrthogonalVonNeumannGrid

    from sparseset.models.wolf_sheep import _neighbours

    nx = np.empty(4, np.int64)
    ny = np.empty(4, np.int64)
    for width, height in [(1, 1), (1, 3), (2, 2), (2, 5), (3, 3), (4, 1)]:
        grid = OrthogonalVonNeumannGrid(
            [height, width], torus=True, random=random.Random(0)
        )
        for x in range(width):
            for y in range(height):
                k = _neighbours(x, y, width, height, nx, ny)
                ours = sorted(zip(ny[:k].tolist(), nx[:k].tolist(), strict=True))
                theirs = sorted(c.coordinate for c in grid[(y, x)].neighborhood)
                assert ours == theirs, (width, height, x, y)


def test_rules_hold_every_step():
    m = WolfSheep(width=9, height=7, initial_sheep=60, initial_wolves=20, seed=5)
    w = m.world
    removed = []
    w.on_remove("sheep", lambda h: removed.append(len(h)))
    for _ in range(25):
        calls = len(removed)
        m.step()
        assert len(removed) - calls <= 2  # deaths come in batches, per turn
        for kind, grid in (("sheep", m.sheep_grid), ("wolf", m.wolf_grid)):
            store = w[kind]
            pos = store["pos"]
            assert (pos >= 0).all() and (pos[:, 0] < 9).all() and (pos[:, 1] < 7).all()
            assert (pos == np.round(pos)).all()
            assert (store["energy"] >= 0).all()
            assert np.array_equal(np.sort(grid.ids), np.sort(store.ids))
            assert np.array_equal(grid.positions(store.ids), pos)
        wolves, sheep, grass = m.counts()
        assert (wolves, sheep) == (len(m.wolves), len(m.sheep))
        assert grass == m.fully_grown().sum() == (m.grass_countdown() == 0).sum()
        assert len(w) == wolves + sheep


def test_the_same_seed_gives_the_same_run():
    def run(seed):
        m = WolfSheep(12, 12, initial_sheep=50, initial_wolves=20, seed=seed)
        m.run(15)
        return (
            m.counts(),
            m.world["sheep"]["pos"].copy(),
            m.world["wolf"]["energy"].copy(),
            m.regrow_at.copy(),
        )

    a, b, c = run(7), run(7), run(8)
    assert a[0] == b[0]
    for x, y in zip(a[1:], b[1:], strict=True):
        assert np.array_equal(x, y)
    assert a[0] != c[0] or not np.array_equal(a[3], c[3])


def test_the_same_seed_gives_the_same_run_on_any_number_of_threads():
    import numba

    def run():
        m = WolfSheep(width=15, height=15, initial_sheep=80, initial_wolves=30, seed=11)
        m.run(10)
        return m.counts(), m.world["sheep"]["pos"].copy(), m.regrow_at.copy()

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = run()
    finally:
        numba.set_num_threads(before)
    assert one[0] == many[0]
    assert np.array_equal(one[1], many[1]) and np.array_equal(one[2], many[2])


def test_a_step_is_a_schedule_of_the_sheeps_turn_then_the_wolves():
    m = WolfSheep(width=10, height=10, initial_sheep=40, initial_wolves=10, seed=4)
    assert m.schedule.batches == [["sheep"], ["wolves"]]
    twin = WolfSheep(width=10, height=10, initial_sheep=40, initial_wolves=10, seed=4)
    for _ in range(5):
        m.step()
        twin.schedule.run(twin.world, threads=1)  # the step's systems, by hand
        twin.steps += 1
    assert m.counts() == twin.counts()
    assert np.array_equal(m.world["sheep"]["pos"], twin.world["sheep"]["pos"])


def test_mesas_defaults_and_start():
    m = WolfSheep(seed=3)
    assert (m.width, m.height, m.grass_regrowth_time) == (20, 20, 30)
    assert m.counts()[:2] == (50, 100)
    energy = m.world["sheep"]["energy"]
    assert energy.min() >= 0 and energy.max() < 8
    assert m.world["wolf"]["energy"].max() < 40
    # Grown with probability 1/2 + 1/2 * 1/30 (a countdown of 0 is grown).
    assert 150 < m.counts()[2] < 260
    assert m.grass_countdown().max() < 30


def test_recording_reports_the_counts():
    m = WolfSheep(8, 8, initial_sheep=20, initial_wolves=5, seed=2, record=True)
    m.run(3)
    frame = m.recorder.model_frame()
    assert frame.step.tolist() == [0, 1, 2, 3]
    assert tuple(frame[["wolves", "sheep", "grass"]].iloc[-1]) == m.counts()
    assert tuple(frame[["wolves", "sheep"]].iloc[0]) == (5, 20)


def test_no_animals_is_a_quiet_meadow():
    m = WolfSheep(width=3, height=3, initial_sheep=0, initial_wolves=0, seed=1)
    m.run(40)
    assert m.counts() == (0, 0, 9)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"width": 0}, ValueError, "width"),
        ({"height": 2.5}, TypeError, "height"),
        ({"initial_sheep": -1}, ValueError, "initial_sheep.*-1"),
        ({"initial_wolves": 3.0}, TypeError, "initial_wolves"),
        ({"sheep_reproduce": 1.5}, ValueError, "sheep_reproduce.*1.5"),
        ({"wolf_reproduce": -0.1}, ValueError, "wolf_reproduce"),
        ({"wolf_reproduce": "0.1"}, TypeError, "wolf_reproduce"),
        ({"wolf_gain_from_food": float("nan")}, ValueError, "wolf_gain_from_food"),
        ({"sheep_gain_from_food": -4}, ValueError, "sheep_gain_from_food.*-4"),
        ({"grass": 1}, TypeError, "grass"),
        ({"grass_regrowth_time": 0}, ValueError, "grass_regrowth_time.*0"),
        ({"grass_regrowth_time": 2.0}, TypeError, "grass_regrowth_time"),
    ],
)
def test_bad_parameters_are_refused(params, error, match):
    with pytest.raises(error, match=match):
        WolfSheep(**params)


@pytest.mark.parametrize(
    ("kind", "cell"), [("sheep", (5, 0)), ("wolf", (0, -1)), ("sheep", (1.5, 2))]
)
def test_an_animal_off_the_grid_is_refused_before_anything_changes(kind, cell):
    m = staged([(0, 0), (1, 1)], [(2, 2), (3, 3)])
    m.world[kind]["pos"][1] = cell
    before = [m.world[k]["pos"].copy() for k in ("sheep", "wolf")]
    with pytest.raises(ValueError, match=f"{kind} at row 1"):
        m.step()
    after = [m.world[k]["pos"] for k in ("sheep", "wolf")]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    assert m.steps == 0


def test_no_regrowth_time_is_needed_without_grass():
    m = WolfSheep(grass=False, grass_regrowth_time=0, seed=0)
    m.run(2)
    assert m.counts()[2] == 0
