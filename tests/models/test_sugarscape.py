"""SugarscapeIG against a plain transcription of mesa-frames' rules (exactly)
and against mesa-frames' own runs (statistically); hand-checked rules;
seeds.

Exact: :func:`reference_step` is mesa-frames' ``AntsParallel`` step
(``examples/sugarscape_ig/backend_frames``) in plain Python: each ant's
ranked list of visible cells, the ``current_rank`` counters, the set of
taken cells (origins, plus winners, minus vacated origins), lotteries
per round, then eat, starve and regrow every empty cell to its maximum.
It draws its lottery tickets as the model does (:func:`lottery_py`), so
it must give the same run, ant for ant, step for step.

Statistical: mesa-frames itself (commit 41cee3c of
projectmesa/mesa-frames, installed from source in a separate venv with
polars 2.1.0: ``Sugarscape(AntsParallel, n_agents=400, width=40,
height=40, seed=s).run(30)`` for s in 0..199) gave the means and
standard deviations in :data:`FRAMES` of the survivors and their mean
sugar at steps 10, 20 and 30. mesa-frames' example leaves dead ants on
its grid (``discard`` takes them out of the agent set, not the space),
so the cell an ant died on holds no sugar ever after (it stays "full"
for the regrowth). The test reproduces that with a World hook (a dead
ant's cell gets a maximum of 0) and compares our means over
:data:`RUNS` seeds with mesa-frames' within :data:`K` standard errors of
the difference. Six comparisons at K = 3.8: a false alarm has
probability about 6 x 1.4e-4 < 1e-3 (normal tails; means of 100 and 200
runs). Power: the standard error of the difference in survivors at step
30 is about 1.1 ants, in mean sugar about 0.17; a change of the rules
that moves either by 5.4 standard errors (6 ants, or 0.9 sugar) is
caught with probability above 0.9. Without the ghost cells our model
keeps about 4 more ants alive by step 30 (checked by hand: z about 5
over 200 seeds a side).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from sparseset.models import SugarscapeIG
from sparseset.models.sugarscape import lottery_py

TOP = 0xFFFFFFFF00000000

#: mesa-frames' survivors and mean sugar, 400 ants on 40 x 40, 200 seeds:
#: step -> (alive mean, alive sd, mean_sugar mean, mean_sugar sd).
FRAMES = {
    10: (363.495, 5.756, 17.4024, 0.5733),
    20: (309.13, 8.424, 24.5247, 0.9469),
    30: (278.975, 8.729, 33.8302, 1.3109),
}
FRAMES_RUNS = 200
RUNS = 100
K = 3.8


def snapshot(m: SugarscapeIG) -> dict[int, tuple[int, int, int]]:
    w = m.world
    pos = w["pos"]["pos"].astype(np.int64)
    return {
        int(h): (int(p[0]), int(p[1]), int(s))
        for h, p, s in zip(w["pos"].ids, pos, w["sugar"]["sugar"], strict=True)
    }


def reference_step(
    ants: dict[int, dict[str, int]],
    field: np.ndarray,
    field_max: np.ndarray,
    seed: int,
) -> None:
    """One step of mesa-frames' AntsParallel and the model's regrowth, in
    place: ``ants`` maps handle -> x, y, sugar, metabolism, vision;
    a lottery tie goes to the ant on the lower cell (``x * height + y``);
    ``field`` is the cells' sugar (width x height)."""
    width, height = field.shape
    slot = {
        h: i
        for i, h in enumerate(
            sorted(ants, key=lambda h: ants[h]["x"] * height + ants[h]["y"])
        )
    }
    ranked: dict[int, list[tuple[int, int]]] = {}
    origin: dict[int, tuple[int, int]] = {}
    for h, a in ants.items():
        x, y = a["x"], a["y"]
        origin[h] = (x, y)
        seen = [(x, y, 0)]
        for d in range(1, a["vision"] + 1):
            for cx, cy in ((x + d, y), (x - d, y), (x, y + d), (x, y - d)):
                if 0 <= cx < width and 0 <= cy < height:
                    seen.append((cx, cy, d))
        seen.sort(key=lambda c: (-int(field[c[0], c[1]]), c[2], c[0], c[1]))
        ranked[h] = [(cx, cy) for cx, cy, _ in seen]
    taken = set(origin.values())
    current = dict.fromkeys(ants, 0)
    assigned: dict[int, tuple[int, int]] = {}
    unresolved = list(ants)
    round_ = 0
    while unresolved:
        wants: dict[int, tuple[int, int]] = {}
        for h in unresolved:
            pool = [
                (r, c)
                for r, c in enumerate(ranked[h])
                if r >= current[h] and (c not in taken or c == origin[h])
            ]
            if not pool:  # mesa-frames' fallback: stay
                assigned[h] = origin[h]
                continue
            current[h], wants[h] = pool[0]
        best: dict[tuple[int, int], tuple[int, int]] = {}
        for h, c in wants.items():
            ticket = (lottery_py(seed, round_, h) & TOP) | slot[h]
            if c not in best or ticket < best[c][0]:
                best[c] = (ticket, h)
        for c, (_, h) in best.items():
            assigned[h] = c
            taken.add(c)
            if c != origin[h]:
                taken.discard(origin[h])
        winners = {h for _, h in best.values()}
        unresolved = [h for h in wants if h not in winners]
        for h in unresolved:
            current[h] += 1  # the next rank (its own cell bounds it)
        round_ += 1
    for h, (x, y) in assigned.items():
        a = ants[h]
        a["x"], a["y"] = x, y
        a["sugar"] += int(field[x, y]) - a["metabolism"]
        field[x, y] = 0
    for h in [h for h, a in ants.items() if a["sugar"] <= 0]:
        del ants[h]
    held = {(a["x"], a["y"]) for a in ants.values()}
    for x in range(width):
        for y in range(height):
            field[x, y] = 0 if (x, y) in held else field_max[x, y]


def run_both(m: SugarscapeIG, steps: int) -> None:
    w = m.world
    ants = {
        int(h): {
            "x": int(p[0]), "y": int(p[1]), "sugar": int(s),
            "metabolism": int(me), "vision": int(v),
        }
        for h, p, s, me, v in zip(
            w["pos"].ids, w["pos"]["pos"], w["sugar"]["sugar"],
            w["metabolism"]["metabolism"], w["vision"]["vision"], strict=True,
        )
    }  # fmt: skip
    field = m.sugar.astype(np.int64)
    field_max = m.max_sugar_grid.astype(np.int64)
    for step in range(steps):
        seed = int(copy.deepcopy(m.rng).integers(0, 2**63 - 1))
        reference_step(ants, field, field_max, seed)
        m.step()
        ours = snapshot(m)
        theirs = {h: (a["x"], a["y"], a["sugar"]) for h, a in ants.items()}
        assert ours == theirs, f"step {step + 1}"
        assert np.array_equal(m.sugar, field), f"step {step + 1}"
        if not ants:
            break


@pytest.mark.parametrize(
    ("agents", "side", "max_sugar", "seed"),
    [(60, 12, 4, 0), (90, 10, 4, 1), (100, 10, 2, 2), (30, 9, 7, 3), (200, 16, 4, 4)],
)
def test_steps_match_a_plain_transcription_of_mesa_frames_rules(
    agents, side, max_sugar, seed
):
    m = SugarscapeIG(agents, side, side, seed=seed, max_sugar=max_sugar)
    run_both(m, 25)


def test_a_rectangular_grid_matches_too():
    run_both(SugarscapeIG(50, 7, 13, seed=5), 20)


@pytest.mark.parametrize(
    ("agents", "width", "height", "top", "seed"),
    [(40, 8, 8, 9, 0), (70, 9, 11, 7, 1), (25, 1, 40, 30, 2), (30, 40, 1, 6, 3)],
)
def test_visions_beyond_five_reaching_the_edges_match_too(
    agents, width, height, top, seed
):
    """Each vision ranks in its own group, past 5 and below 1 too (a
    vision of 0 or less sees the ant's own cell only); thin strips leave
    one axis empty."""
    m = SugarscapeIG(agents, width, height, seed=seed)
    v = m.world["vision"]["vision"]
    v[:] = np.random.default_rng(seed).integers(-2, top + 1, v.shape[0])
    v[:2] = (-(2**40), 1000)  # far past the grid: the reference loops to it
    run_both(m, 20)


def test_a_grid_in_several_bands_of_columns_matches_too():
    """The kernel visits the ants by bands of about 2**16 cells: a tall
    grid makes narrow bands (32 columns of 2000 cells), with ants seeing
    across their edges."""
    m = SugarscapeIG(2400, 70, 2000, seed=8)
    assert max(1, (1 << 16) // m.height) < m.width // 2
    run_both(m, 4)


def test_a_crowded_grid_of_many_rounds_matches_too():
    """Nine ants in ten cells: most lose lotteries, round after round."""
    for seed in range(6):
        run_both(SugarscapeIG(90, 10, 10, seed=seed, max_sugar=6), 15)


def frames_like_runs(runs: int) -> tuple[np.ndarray, np.ndarray]:
    """Survivors and mean sugar at steps 10, 20, 30, with mesa-frames'
    dead ants' cells held at no sugar."""
    alive = np.empty((runs, 3))
    sugar = np.empty((runs, 3))
    for r in range(runs):
        m = SugarscapeIG(400, 40, 40, seed=5000 + r)
        w = m.world
        flat_max = m.max_sugar_grid.reshape(-1)
        flat = m.sugar.reshape(-1)

        def scar(handles, w=w, flat_max=flat_max, flat=flat):
            xy = w.get("pos", handles)["pos"].astype(np.int64)
            cells = xy[:, 0] * 40 + xy[:, 1]
            flat_max[cells] = 0
            flat[cells] = 0

        w.on_remove("pos", scar)
        for k in range(3):
            m.run(10)
            alive[r, k] = m.alive
            sugar[r, k] = m.mean_sugar()
    return alive, sugar


def test_survivors_and_mean_sugar_match_mesa_frames_over_many_seeds():
    alive, sugar = frames_like_runs(RUNS)
    for k, step in enumerate((10, 20, 30)):
        a_mean, a_sd, s_mean, s_sd = FRAMES[step]
        pairs = ((alive[:, k], a_mean, a_sd), (sugar[:, k], s_mean, s_sd))
        for ours, mean, sd in pairs:
            se = np.sqrt(sd**2 / FRAMES_RUNS + ours.var(ddof=1) / RUNS)
            assert abs(ours.mean() - mean) <= K * se, (step, ours.mean(), mean, se)
            assert se < 0.1 * sd + 0.05 * mean  # the test keeps its power


def lone_ant(field: list[list[int]], x: int, y: int, vision: int, **traits: int):
    """A model of one ant on ``field`` (its cells' sugar, also their
    maximum), placed by hand."""
    f = np.array(field, np.int32)
    m = SugarscapeIG(1, f.shape[0], f.shape[1], seed=0)
    m.max_sugar_grid[...] = f
    m.sugar[...] = f
    w = m.world
    h = m.agents
    w["pos"]["pos"][0] = (x, y)
    w["vision"]["vision"][0] = vision
    w["sugar"]["sugar"][0] = traits.get("sugar", 10)
    w["metabolism"]["metabolism"][0] = traits.get("metabolism", 1)
    return m, h


def where(m: SugarscapeIG) -> list[list[int]]:
    return m.world["pos"]["pos"].astype(int).tolist()


def test_an_ant_moves_to_the_most_sugar_it_sees_along_the_axes():
    field = [[0] * 5 for _ in range(5)]
    field[4][4] = 9  # on a diagonal: not seen
    field[2][4] = 3
    field[0][2] = 3  # as much, as far: the smaller x wins
    m, _ = lone_ant(field, 2, 2, vision=2)
    m.step()
    assert where(m) == [[0, 2]]
    assert m.world["sugar"]["sugar"].tolist() == [10 + 3 - 1]


def test_nearer_wins_among_equals_and_vision_limits_the_view():
    field = [[0] * 7 for _ in range(7)]
    field[3][6] = 5  # three away
    field[3][5] = 5  # two away: nearer
    m, _ = lone_ant(field, 3, 3, vision=3)
    m.step()
    assert where(m) == [[3, 5]]
    field = [[0] * 7 for _ in range(7)]
    field[3][6] = 5
    m, _ = lone_ant(field, 3, 3, vision=2)  # cannot see it
    m.step()
    assert where(m) == [[3, 3]]


def test_an_ant_stays_on_its_cell_when_it_holds_the_most():
    field = [[1, 1, 1], [1, 4, 1], [1, 1, 1]]
    m, _ = lone_ant(field, 1, 1, vision=1)
    m.step()
    assert where(m) == [[1, 1]]
    assert m.world["sugar"]["sugar"].tolist() == [10 + 4 - 1]
    m.step()  # its cell now holds nothing; a neighbour holds 1
    assert where(m) == [[0, 1]]


def test_a_contested_cell_goes_to_one_ant_by_lottery_the_other_takes_its_next():
    """Two ants one cell either side of the only sugar: each step exactly
    one gets it, the other its best remaining cell; both win sometimes."""
    winners = set()
    for seed in range(12):
        m = SugarscapeIG(2, 1, 5, seed=seed)
        w = m.world
        m.max_sugar_grid[...] = [[1, 0, 8, 0, 2]]
        m.sugar[...] = m.max_sugar_grid
        w["pos"]["pos"][:] = [[0, 1], [0, 3]]
        w["vision"]["vision"][:] = 1
        w["metabolism"]["metabolism"][:] = 1
        w["sugar"]["sugar"][:] = 10
        m.step()
        ys = sorted(int(p[1]) for p in w["pos"]["pos"])
        # the loser's next: its own cell (0) vs the far side (1 or 2)
        assert ys in ([0, 2], [2, 4]), ys
        won = int(w["pos"].ids[int(np.argmax(w["pos"]["pos"][:, 1] == 2))])
        winners.add(won == m.agents[0])
    assert winners == {True, False}


def test_every_cell_holds_one_ant_at_most_and_empty_cells_grow_back():
    m = SugarscapeIG(300, 20, 20, seed=9)
    for _ in range(30):
        m.step()
        xy = m.world["pos"]["pos"].astype(np.int64)
        cells = xy[:, 0] * 20 + xy[:, 1]
        assert np.unique(cells).shape[0] == cells.shape[0]
        held = np.zeros((20, 20), bool)
        held[xy[:, 0], xy[:, 1]] = True
        assert (m.sugar[held] == 0).all()
        assert np.array_equal(m.sugar[~held], m.max_sugar_grid[~held])
        assert (m.world["sugar"]["sugar"] > 0).all()
        assert np.array_equal(m.grid.positions(m.world["pos"].ids), xy)


def test_a_starving_ant_dies_and_its_cell_grows_back():
    field = [[0, 0, 0], [0, 0, 0], [0, 0, 3]]
    m, h = lone_ant(field, 0, 0, vision=1, sugar=2, metabolism=2)
    assert m.alive == 1 and m.running
    m.step()
    assert m.alive == 0 and not m.running
    assert not m.world.alive(h).any()
    assert len(m.world["sugar"]) == 0
    assert m.sugar.tolist() == field  # nothing eaten stays eaten
    m.step()  # nothing left to do
    m.run(5)
    assert m.steps == 1
    assert m.mean_sugar() == 0.0 and np.isnan(m.gini())


def test_a_step_is_a_schedule_whose_system_destroys_the_starved_by_its_commands():
    m = SugarscapeIG(200, 20, 20, seed=5)
    assert m.schedule.batches == [["ants"]]
    twin = SugarscapeIG(200, 20, 20, seed=5)
    for _ in range(8):
        m.step()
        twin.schedule.run(twin.world, threads=1)  # the step's system, by hand
    assert 0 < m.alive < 200 and m.alive == twin.alive
    assert np.array_equal(m.world["pos"].ids, twin.world["pos"].ids)
    assert np.array_equal(m.world["sugar"]["sugar"], twin.world["sugar"]["sugar"])
    # The starved are destroyed, not only taken out of the components.
    assert len(m.world) == m.alive


def test_eating_adds_the_cell_and_burns_the_metabolism():
    field = [[0, 6], [0, 0]]
    m, _ = lone_ant(field, 0, 0, vision=1, sugar=5, metabolism=3)
    m.step()
    assert where(m) == [[0, 1]]
    assert m.world["sugar"]["sugar"].tolist() == [5 + 6 - 3]
    assert m.sugar.tolist() == [[0, 0], [0, 0]]
    m.step()  # stays (nothing better), its cell holds nothing: 8 - 3
    assert m.world["sugar"]["sugar"].tolist() == [5]
    assert m.sugar.tolist() == [[0, 0], [0, 0]]


def test_the_first_step_eats_what_the_cells_started_with():
    m = SugarscapeIG(1, 1, 1, seed=0)
    s0 = int(m.world["sugar"]["sugar"][0])
    cell = int(m.sugar[0, 0])
    m.step()
    left = s0 + cell - int(m.world["metabolism"]["metabolism"][0]) if m.alive else 0
    assert m.alive == (left > 0)
    if m.alive:
        assert m.world["sugar"]["sugar"].tolist() == [left]


def test_initial_draws_follow_mesa_frames():
    m = SugarscapeIG(2000, 60, 60, seed=3, max_sugar=6)
    w = m.world
    assert m.alive == 2000 and m.sugar.shape == (60, 60)
    assert np.array_equal(m.sugar, m.max_sugar_grid)
    assert set(np.unique(m.max_sugar_grid).tolist()) == set(range(7))
    traits = (("sugar", (6, 25)), ("metabolism", (2, 5)), ("vision", (1, 6)))
    for name, (lo, hi) in traits:
        assert set(np.unique(w[name][name]).tolist()) == set(range(lo, hi))
    xy = w["pos"]["pos"].astype(np.int64)
    assert np.unique(xy[:, 0] * 60 + xy[:, 1]).shape[0] == 2000


def test_the_same_seed_gives_the_same_run_on_any_number_of_threads():
    import numba

    def run():
        m = SugarscapeIG(500, 30, 30, seed=21)
        m.run(20)
        return snapshot(m), m.sugar.copy()

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = run()
    finally:
        numba.set_num_threads(before)
    assert one[0] == many[0] and np.array_equal(one[1], many[1])
    other = SugarscapeIG(500, 30, 30, seed=22)
    other.run(20)
    assert snapshot(other) != one[0]


def test_recording_reports_mesa_frames_reporters():
    m = SugarscapeIG(100, 20, 20, seed=2, record=True)
    m.run(4)
    frame = m.recorder.model_frame()
    assert frame.step.tolist() == [0, 1, 2, 3, 4]
    assert frame.agents_alive.iloc[0] == 100
    assert frame.agents_alive.iloc[-1] == m.alive
    assert frame.mean_sugar.iloc[-1] == pytest.approx(m.mean_sugar())
    assert frame.total_sugar.iloc[-1] == pytest.approx(m.total_sugar())
    assert frame.gini.iloc[-1] == pytest.approx(m.gini())
    assert set(frame.columns) >= {"corr_sugar_metabolism", "corr_sugar_vision"}
    agents = m.recorder.agent_frame()
    assert set(agents.columns) >= {"sugar", "metabolism", "vision"}
    assert (agents.step == 4).sum() == m.alive


def test_gini_and_correlations_are_mesa_frames_formulas():
    m = SugarscapeIG(50, 10, 10, seed=4)
    m.run(3)
    s = np.sort(m.world["sugar"]["sugar"].astype(float))
    n = s.size
    idx = np.arange(1, n + 1)
    assert m.gini() == pytest.approx(2 * np.dot(idx, s) / (n * s.sum()) - (n + 1) / n)
    w = m.world
    r = np.corrcoef(w["sugar"]["sugar"], w["vision"]["vision"])[0, 1]
    assert m.corr_sugar_vision() == pytest.approx(r)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"agents": 0}, ValueError, "agents"),
        ({"width": -1}, ValueError, "width"),
        ({"height": 2.5}, TypeError, "height"),
        ({"agents": 17, "width": 4, "height": 4}, ValueError, "17"),
        ({"max_sugar": -1}, ValueError, "max_sugar"),
        ({"max_sugar": 1.5}, TypeError, "max_sugar"),
        ({"max_sugar": 2**40}, ValueError, "max_sugar"),
    ],
)
def test_bad_parameters_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        SugarscapeIG(**kwargs)


def test_ants_sharing_a_cell_or_off_the_grid_are_refused_and_nothing_changes():
    m = SugarscapeIG(10, 5, 5, seed=0)
    pos = m.world["pos"]["pos"]
    before = (pos.copy(), m.sugar.copy(), m.world["sugar"]["sugar"].copy())
    pos[1] = pos[0]
    with pytest.raises(ValueError, match="share a cell"):
        m.step()
    pos[1] = before[0][1]
    assert np.array_equal(m.sugar, before[1])
    pos[3] = (2, 5)
    with pytest.raises(ValueError, match=r"row 3.*5 x 5.*\[2\.0, 5\.0\]"):
        m.step()
    pos[3] = before[0][3]
    assert np.array_equal(m.sugar, before[1])
    assert np.array_equal(m.world["sugar"]["sugar"], before[2])
    m.step()
    assert m.steps == 1


def test_a_cell_as_rich_as_int32_allows_ranks_first_on_a_long_strip():
    m = SugarscapeIG(1, 2, 2**20, seed=0)
    w = m.world
    w["pos"]["pos"][0] = (1, 0)
    w["vision"]["vision"][0] = 2**20  # sees the whole strip
    w["metabolism"]["metabolism"][0] = 1
    m.sugar[1, 2**20 - 5] = 2**31 - 2
    m.sugar[1, 7] = 2**31 - 3
    s0 = int(w["sugar"]["sugar"][0])
    m.step()
    assert where(m) == [[1, 2**20 - 5]]
    assert w["sugar"]["sugar"].tolist() == [s0 + 2**31 - 2 - 1]
    assert m.sugar[1, 2**20 - 5] == 0


def test_a_replaced_field_of_another_kind_is_refused():
    m = SugarscapeIG(10, 5, 6, seed=0)
    m.sugar = m.sugar.astype(np.int64)
    with pytest.raises(ValueError, match=r"sugar must be .*int32.*int64"):
        m.step()
    m.sugar = m.max_sugar_grid.copy()
    m.max_sugar_grid = np.asfortranarray(m.max_sugar_grid)
    with pytest.raises(ValueError, match="max_sugar_grid"):
        m.step()
    m.max_sugar_grid = np.ascontiguousarray(m.max_sugar_grid)
    m.step()
    assert m.steps == 1


def test_ants_out_of_step_across_components_are_refused():
    m = SugarscapeIG(10, 5, 5, seed=0)
    m.world.remove("vision", m.agents[:1])
    with pytest.raises(RuntimeError, match="vision"):
        m.step()
