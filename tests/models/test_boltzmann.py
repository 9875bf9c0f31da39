"""BoltzmannWealth against Mesa's own example, statistically; seeds; activation.

The validation runs Mesa's ``BoltzmannWealth`` and ours over the same
parameters and :data:`SEEDS` seeds each and compares the mean Gini after
:data:`STEPS` steps: the difference of the means must be within
:data:`K` standard errors (estimated from both samples). Under the null
(same model) a false alarm has probability about 1e-4 (normal tails;
30 seeds a side make the sample means close to normal). Power: the
per-seed spread of the Gini here is about 0.03, so the standard error
of the difference is about 0.008 and a shift of 0.045 in the mean (an
error in the rules, e.g. a torus or a von Neumann neighbourhood, which
moves it by more) is caught with probability above 0.9; all-at-once
activation (Gini about 0.39 at 100 steps) is ~30 standard errors away.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparseset.models import BoltzmannWealth, gini_of

SEEDS = 30
STEPS = 10
K = 3.9


def mesa_ginis(steps: int) -> np.ndarray:
    from mesa.examples.basic.boltzmann_wealth_model.model import (
        BoltzmannWealth as MesaBoltzmann,
    )

    out = []
    for seed in range(SEEDS):
        m = MesaBoltzmann(n=100, width=10, height=10, seed=seed)
        for _ in range(steps):
            m.step()
        out.append(m.compute_gini())
    return np.array(out)


def our_ginis(steps: int) -> np.ndarray:
    out = []
    for seed in range(SEEDS):
        m = BoltzmannWealth(n=100, width=10, height=10, seed=1000 + seed)
        m.run(steps)
        out.append(m.gini())
    return np.array(out)


def test_the_gini_matches_mesas_over_many_seeds():
    theirs, ours = mesa_ginis(STEPS), our_ginis(STEPS)
    se = np.sqrt(theirs.var(ddof=1) / SEEDS + ours.var(ddof=1) / SEEDS)
    assert abs(ours.mean() - theirs.mean()) <= K * se, (ours.mean(), theirs.mean(), se)
    assert se < 0.02  # the test keeps its power


def test_one_at_a_time_activation_gives_mesas_inequality():
    """100 agents on 10x10 after 100 steps: about 0.65, far from the 0.39
    of all-at-once activation."""
    ginis = []
    for seed in range(10):
        m = BoltzmannWealth(seed=seed)
        m.run(100)
        ginis.append(m.gini())
    assert 0.58 < np.mean(ginis) < 0.72


def test_the_same_seed_gives_the_same_run():
    a, b = BoltzmannWealth(n=50, seed=7), BoltzmannWealth(n=50, seed=7)
    a.run(15)
    b.run(15)
    assert np.array_equal(a.world["wealth"]["wealth"], b.world["wealth"]["wealth"])
    assert np.array_equal(a.world["pos"]["pos"], b.world["pos"]["pos"])
    c = BoltzmannWealth(n=50, seed=8)
    c.run(15)
    assert not np.array_equal(a.world["pos"]["pos"], c.world["pos"]["pos"])


def test_rules_hold_every_step():
    m = BoltzmannWealth(n=60, width=4, height=7, seed=3)
    before = m.world["pos"]["pos"].copy()
    for _ in range(20):
        m.step()
        pos = m.world["pos"]["pos"]
        wealth = m.world["wealth"]["wealth"]
        assert wealth.sum() == 60 and wealth.min() >= 0
        step = np.abs(pos - before).max(axis=1)
        assert (step == 1).all()  # a Moore neighbour, never staying
        assert (pos >= 0).all() and (pos[:, 0] < 4).all() and (pos[:, 1] < 7).all()
        assert np.array_equal(m.grid.positions(m.agents), pos)
        before = pos.copy()


def test_a_gift_goes_to_a_cellmate_who_is_there_now():
    """Two agents on a 1x2 grid: each step both cross to the other cell,
    one after the other. Whether they start together or apart, exactly
    one of them finds the other in its new cell and gives a coin."""
    for seed in range(8):
        m = BoltzmannWealth(n=2, width=1, height=2, seed=seed)
        m.step()
        assert sorted(m.world["wealth"]["wealth"].tolist()) == [0, 2]


def test_recording_reports_gini_and_wealth():
    m = BoltzmannWealth(n=20, seed=2, record=True)
    m.run(3)
    frame = m.recorder.model_frame()
    assert frame.step.tolist() == [0, 1, 2, 3]
    assert frame.gini.iloc[0] == 0.0 and frame.gini.iloc[-1] == pytest.approx(m.gini())
    assert len(m.recorder.agent_frame()) == 4 * 20


def test_gini_is_mesas_formula():
    x = np.array([3, 0, 1, 0, 6])
    n = len(x)
    s = sorted(x)
    b = sum(xi * (n - i) for i, xi in enumerate(s)) / (n * sum(s))
    assert gini_of(x) == pytest.approx(1 + 1 / n - 2 * b)


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError, match=str(bad)):
        BoltzmannWealth(n=bad)
    with pytest.raises(TypeError, match="width"):
        BoltzmannWealth(width=2.5)  # type: ignore[arg-type]


def test_the_same_seed_gives_the_same_run_on_any_number_of_threads():
    import numba

    from sparseset.models import BoidFlockers, Schelling

    def runs():
        b = BoltzmannWealth(n=300, width=12, height=12, seed=11)
        b.run(10)
        s = Schelling(height=15, width=15, seed=11)
        s.run(3)
        f = BoidFlockers(population_size=200, width=40, height=40, seed=11)
        f.run(3)
        return [
            b.world["wealth"]["wealth"].copy(),
            s.world["pos"]["pos"].copy(),
            f.world["pos"]["pos"].copy(),
        ]

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = runs()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = runs()
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, many, strict=True):
        assert np.array_equal(a, b)


def test_a_single_cell_grid_is_refused():
    with pytest.raises(ValueError, match="1 x 1"):
        BoltzmannWealth(n=3, width=1, height=1)


def test_a_position_off_the_cells_is_refused_and_nothing_changes():
    m = BoltzmannWealth(n=5, width=4, height=4, seed=1)
    m.world["pos"]["pos"][3] = [1.5, 2.0]
    wealth = m.world["wealth"]["wealth"].copy()
    pos = m.world["pos"]["pos"].copy()
    with pytest.raises(ValueError, match=r"row 3 stands at \[1.5, 2.0\]"):
        m.step()
    m.world["pos"]["pos"][3] = [4.0, 0.0]
    with pytest.raises(ValueError, match="row 3"):
        m.step()
    pos[3] = [4.0, 0.0]
    assert np.array_equal(m.world["wealth"]["wealth"], wealth)
    assert np.array_equal(m.world["pos"]["pos"], pos) and m.steps == 0


def test_the_grid_follows_moves_and_writes_declared_by_hand():
    m = BoltzmannWealth(n=30, width=5, height=5, seed=2)
    m.run(3)
    m.world["pos"]["pos"][0] = [4.0, 4.0]
    m.world["pos"].touch(m.agents[0])
    assert np.array_equal(m.grid.positions(m.agents), m.world["pos"]["pos"])
    m.step()
    assert np.array_equal(m.grid.positions(m.agents), m.world["pos"]["pos"])


def test_a_refused_step_leaves_the_run_as_it_was():
    """The cell lists are checked before they change: put the position
    back, and the run goes on as if nothing had happened."""
    a = BoltzmannWealth(n=40, width=5, height=5, seed=9)
    b = BoltzmannWealth(n=40, width=5, height=5, seed=9)
    a.run(2)
    b.run(2)
    back = a.world["pos"]["pos"][30].copy()
    a.world["pos"]["pos"][30] = [-1.0, 0.0]
    with pytest.raises(ValueError, match="row 30"):
        a.step()
    a.world["pos"]["pos"][30] = back
    a.run(5)
    b.run(5)
    assert np.array_equal(a.world["wealth"]["wealth"], b.world["wealth"]["wealth"])
    assert np.array_equal(a.world["pos"]["pos"], b.world["pos"]["pos"])
