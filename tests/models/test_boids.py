"""BoidFlockers against Mesa's own example and against its rules.

The validation runs Mesa's ``BoidFlockers`` and ours (50 boids on 50 x
50, Mesa's other defaults) over :data:`SEEDS` seeds each and compares the
mean alignment (length of the mean unit heading) after :data:`STEPS`
steps: the difference of the means must be within :data:`K` standard
errors (estimated from both samples), a false alarm of about 1e-4 under
the null. The per-seed spread is about 0.08, so the standard error of
the difference is about 0.023: the test catches a shift of 0.12 in the
mean alignment with probability above 0.9 (a coarse check; Mesa's boids
cost about 0.1 ms an agent-step, so few seeds fit in CI's time). The
rules themselves are checked exactly by
:func:`test_a_step_follows_mesas_rules_one_boid_at_a_time`, against a
plain-Python transcription of Mesa's ``Boid.step``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from sparseset.models import BoidFlockers
from sparseset.models.parameters import activation_order

SEEDS = 24
STEPS = 15
K = 3.9


def alignment(headings: np.ndarray) -> float:
    unit = headings / np.linalg.norm(headings, axis=1, keepdims=True)
    return float(np.linalg.norm(unit.mean(axis=0)))


def test_the_alignment_matches_mesas_over_many_seeds():
    from mesa.examples.basic.boid_flockers.model import BoidFlockers as MesaBoids

    theirs, ours = [], []
    for seed in range(SEEDS):
        m = MesaBoids(population_size=50, width=50, height=50, seed=seed)
        for _ in range(STEPS):
            m.step()
        theirs.append(alignment(np.array([b.direction for b in m.agents])))
        s = BoidFlockers(population_size=50, width=50, height=50, seed=1000 + seed)
        s.run(STEPS)
        ours.append(s.order())
    a, b = np.array(theirs), np.array(ours)
    se = np.sqrt(a.var(ddof=1) / SEEDS + b.var(ddof=1) / SEEDS)
    assert abs(a.mean() - b.mean()) <= K * se, (a.mean(), b.mean(), se)
    assert se < 0.04


def mesa_step(pos, heading, order, m):
    """Mesa's ``Boid.step`` for each boid of ``order`` in turn, on arrays."""
    size = np.array([m.width, m.height])
    for a in order:
        delta = pos - pos[a]
        inverse = delta - np.sign(delta) * size
        delta = np.where(np.abs(delta) < np.abs(inverse), delta, inverse)
        dist = np.sqrt((delta**2).sum(axis=1))
        near = (dist <= m.vision) & (np.arange(len(pos)) != a)
        if near.any():
            d = delta[near]
            cohere = d.sum(axis=0) * m.cohere
            separate = -d[dist[near] < m.separation].sum(axis=0) * m.separate
            match = heading[near].sum(axis=0) * m.match
            heading[a] += (cohere + separate + match) / near.sum()
            heading[a] /= np.linalg.norm(heading[a])
        p = pos[a] + heading[a] * m.speed
        if not ((p >= 0) & (p <= size)).all():
            p = np.mod(p, size)
        pos[a] = p


@pytest.mark.parametrize(
    ("seed", "width", "height", "vision"),
    [(0, 30, 20, 4), (1, 30, 20, 4), (2, 5, 5, 10), (3, 7, 30, 4), (4, 12, 12, 5.9)],
)
def test_a_step_follows_mesas_rules_one_boid_at_a_time(seed, width, height, vision):
    """Including spaces narrower than the sight: each boid counts once."""
    m = BoidFlockers(
        population_size=150, width=width, height=height, vision=vision, seed=seed
    )
    for _ in range(3):
        pos = m.world["pos"]["pos"].copy()
        heading = m.world["heading"]["heading"].copy()
        order = activation_order(copy.deepcopy(m.rng), len(pos))
        mesa_step(pos, heading, order, m)
        m.step()
        assert np.allclose(m.world["heading"]["heading"], heading, atol=1e-9)
        assert np.allclose(m.world["pos"]["pos"], pos, atol=1e-9)
        assert np.allclose(m.grid.positions(m.agents), pos, atol=1e-9)


def test_the_same_seed_gives_the_same_run():
    a, b = BoidFlockers(seed=3), BoidFlockers(seed=3)
    a.run(5)
    b.run(5)
    assert np.array_equal(a.world["pos"]["pos"], b.world["pos"]["pos"])
    assert a.order() == b.order() and a.average_heading == b.average_heading


def test_recording_and_bad_parameters():
    m = BoidFlockers(population_size=30, seed=0, record=True)
    m.run(2)
    frame = m.recorder.model_frame()
    assert frame.step.tolist() == [0, 1, 2]
    assert frame.order.iloc[-1] == pytest.approx(m.order())
    with pytest.raises(ValueError, match="vision"):
        BoidFlockers(vision=0)
    with pytest.raises(ValueError, match="population_size"):
        BoidFlockers(population_size=0)


@pytest.mark.parametrize("side", [316.2277660168379, 829.0607434845318, 50.0, 7.5])
def test_the_grid_cells_tile_the_space_exactly(side):
    """``side / cell`` is a whole number in floating point, so a query reads
    3 cells an axis; the cell is at least ``vision`` (or the whole side)."""
    m = BoidFlockers(population_size=10, width=side, height=side, vision=10, seed=0)
    cell = m.grid.grid.cell
    assert side / cell == int(side / cell)
    assert cell >= 10 or cell == side
