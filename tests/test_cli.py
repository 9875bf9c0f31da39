"""The command line: ``python -m sparseset demo`` (and the argument handling).

The bench command's workloads are tested in ``test_bench.py``; here only
its wiring through ``main``.
"""

import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from sparseset import World
from sparseset._demo import DemoSummary, ParticleWorld, run_demo
from sparseset.cli import build_parser, main

BALANCE = re.compile(
    r"books balance: live ([\d,]+) = spawned ([\d,]+) - despawned ([\d,]+) \(ok\)"
)


def numbers(match):
    return [int(group.replace(",", "")) for group in match.groups()]


def test_python_dash_m_runs_the_demo_and_the_books_balance():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparseset",
            "demo",
            "--entities",
            "3000",
            "--steps",
            "40",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    match = BALANCE.search(result.stdout)
    assert match, result.stdout
    live, spawned, despawned = numbers(match)
    assert live == 3000 and spawned - despawned == live
    assert despawned > 0  # 40 steps pass the shortest lifetime: handles recycle
    assert "steps/s" in result.stdout and "entity updates" in result.stdout
    # Progress goes to stderr, plain lines when it is not a terminal.
    assert "simulating: 40/40" in result.stderr


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


def test_save_writes_a_world_that_loads(tmp_path, capsys):
    path = tmp_path / "final.npz"
    assert (
        main(["demo", "--entities", "800", "--steps", "35", "--save", str(path)]) == 0
    )
    assert f"saved the final world to {path}" in capsys.readouterr().out
    world = World.load(path)
    assert len(world) == 800
    assert world.components == ("pos", "vel", "drag", "life")
    assert len(world.group("pos", "vel")) == 800


def test_plot_writes_a_readable_png(tmp_path, capsys):
    image = pytest.importorskip("matplotlib.image")
    path = tmp_path / "demo.png"
    assert main(["demo", "--entities", "500", "--steps", "5", "--plot", str(path)]) == 0
    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert "plotted" in capsys.readouterr().out


def test_plot_without_matplotlib_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status = main(
        ["demo", "--entities", "100", "--steps", "1", "--plot", str(tmp_path / "x.png")]
    )
    assert status == 2
    assert "pip install matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_an_unbalanced_summary_is_reported_and_fails():
    summary = DemoSummary(10, 1, 1.0, spawned=12, despawned=1, live=10, updates=10)
    assert not summary.balanced
    assert summary.lines()[-1].endswith("(MISMATCH)")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--entities", "0"], "not a positive count"),
        (["demo", "--steps", "-3"], "not a positive count"),
        (["demo", "--entities", "many"], "not an integer"),
        (["bench", "--quick", "--n", "5"], "not allowed with argument"),
        (["bench", "--n", "600_000_000"], "too large"),
        (["fly"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_arguments_exit_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_counts_accept_underscores():
    assert build_parser().parse_args(["demo", "--steps", "1_000"]).steps == 1000


def test_bench_through_main_writes_json(tmp_path, capsys):
    path = tmp_path / "bench.json"
    assert main(["bench", "--n", "2000", "--repeats", "1", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["n"] == 2000 and data["results"]
    assert "set add" in capsys.readouterr().out.lower()
