"""Schelling against Mesa's own example, statistically; seeds; rules.

The validation runs Mesa's ``Schelling`` and ours with Mesa's defaults
(20x20, density 0.8, homophily 0.4) over :data:`SEEDS` seeds each and
compares the mean fraction of happy agents after :data:`STEPS` steps:
the difference of the means must be within :data:`K` standard errors
(estimated from both samples); a false alarm has probability about
1e-4 under the null. Power: the per-seed spread is about 0.013, so the
standard error of the difference is about 0.0035 and a shift of 0.02 in
the mean fraction (a few of the ~320 agents' happiness, e.g. counting
an agent as its own neighbour or a torus) is caught with probability
above 0.9.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparseset.models import Schelling

SEEDS = 30
STEPS = 3
K = 3.9


def test_the_share_happy_matches_mesas_over_many_seeds():
    from mesa.examples.basic.schelling.model import Schelling as MesaSchelling

    theirs, ours = [], []
    for seed in range(SEEDS):
        m = MesaSchelling(seed=seed)
        for _ in range(STEPS):
            m.step()
        theirs.append(m.happy / len(m.agents))
        s = Schelling(seed=1000 + seed)
        s.run(STEPS)
        ours.append(s.happy / len(s.agents))
    a, b = np.array(theirs), np.array(ours)
    se = np.sqrt(a.var(ddof=1) / SEEDS + b.var(ddof=1) / SEEDS)
    assert abs(a.mean() - b.mean()) <= K * se, (a.mean(), b.mean(), se)
    assert se < 0.01


def naive_happy(pos, kind, homophily, radius):
    out = []
    for a in range(len(pos)):
        d = np.abs(pos - pos[a]).max(axis=1)
        near = (d <= radius) & (np.arange(len(pos)) != a)
        if near.sum() == 0:
            out.append(False)
        else:
            out.append((kind[near] == kind[a]).mean() >= homophily)
    return np.array(out)


@pytest.mark.parametrize("radius", [1, 2])
def test_rules_hold_every_step(radius):
    m = Schelling(height=9, width=7, density=0.6, homophily=0.5, radius=radius, seed=4)
    w = m.world
    for _ in range(6):
        before = w["pos"]["pos"].copy()
        unhappy = ~w["happy"]["happy"].copy()
        m.step()
        pos = w["pos"]["pos"]
        cells = {tuple(p) for p in pos.tolist()}
        assert len(cells) == len(pos)  # one agent a cell
        assert (pos[:, 0] < 7).all() and (pos[:, 1] < 9).all() and (pos >= 0).all()
        assert np.array_equal(pos[~unhappy], before[~unhappy])  # the happy stay
        happy = naive_happy(pos, w["type"]["type"], 0.5, radius)
        assert np.array_equal(w["happy"]["happy"], happy)
        assert m.happy == happy.sum()


def test_the_same_seed_gives_the_same_run():
    a, b = Schelling(seed=5), Schelling(seed=5)
    a.run(4)
    b.run(4)
    assert np.array_equal(a.world["pos"]["pos"], b.world["pos"]["pos"])
    assert a.happy == b.happy and a.segregation() == b.segregation()


def test_a_full_grid_has_no_empty_cell_to_move_to():
    m = Schelling(height=3, width=3, density=1.0, seed=0)
    before = m.world["pos"]["pos"].copy()
    m.step()
    assert np.array_equal(m.world["pos"]["pos"], before)


def test_recording_and_reports():
    m = Schelling(seed=1, record=True)
    m.run(2)
    frame = m.recorder.model_frame()
    assert frame.columns.tolist() == ["step", "happy", "pct_happy"]
    assert frame.happy.iloc[-1] == m.happy
    assert m.pct_happy() == pytest.approx(100 * m.happy / len(m.agents))
    assert 0.5 < m.segregation() <= 1.0


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="density"):
        Schelling(density=1.5)
    with pytest.raises(ValueError, match="radius"):
        Schelling(radius=0)


@pytest.mark.parametrize("where", ["taken", "off", "between"])
def test_a_position_off_the_free_cells_is_refused_and_nothing_changes(where):
    m = Schelling(height=6, width=5, density=0.5, seed=3)
    w = m.world
    pos = w["pos"]["pos"]
    spot = {"taken": pos[0].copy(), "off": [5.0, 0.0], "between": [1.5, 2.0]}[where]
    pos[1] = spot
    w["pos"].touch(m.agents[1])
    before = pos.copy()
    happy = w["happy"]["happy"].copy()
    message = r"rows \[0, 1\] share the cell" if where == "taken" else "row 1 stands at"
    with pytest.raises(ValueError, match=message):
        m.step()
    assert np.array_equal(w["pos"]["pos"], before)
    assert np.array_equal(w["happy"]["happy"], happy) and m.steps == 0
