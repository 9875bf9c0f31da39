"""The command line: ``python -m sparseset demo|bench`` and its arguments.

The demo's simulation is tested in ``test_demo.py`` and the bench's
workloads in ``test_bench.py``; here only their wiring through ``main``.
"""

import json
import pathlib
import re
import runpy
import subprocess
import sys

import pytest

from sparseset import World
from sparseset.cli.commands import build_parser, main
from sparseset.cli.warming import kernel_signatures

FIRST_PROGRAM = (
    pathlib.Path(__file__).resolve().parents[2]
    / "asv_bench/benchmarks/scripts/first_program.py"
)
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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--entities", "0"], "not a positive count"),
        (["demo", "--steps", "-3"], "not a positive count"),
        (["demo", "--entities", "many"], "not an integer"),
        (["bench", "--quick", "--n", "5"], "not allowed with argument"),
        (["bench", "--n", "600_000_000"], "too large"),
        (["fly"], "invalid choice"),
        (["warm", "--kinds", "flat,trie"], "not a comma-separated list"),
        (["warm", "--kinds", ","], "not a comma-separated list"),
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


def test_after_warm_a_first_program_finds_every_kernel_it_calls(capsys):
    # In one process: whatever warm compiled or loaded, the program after it
    # (the one asv's cold_start.FirstRun times as a new process) adds no
    # kernel signature (none compiled, none loaded from the cache).
    assert main(["warm", "--kinds", "flat"]) == 0
    assert "warmed flat:" in capsys.readouterr().out
    before = sum(kernel_signatures())
    runpy.run_path(str(FIRST_PROGRAM))
    assert sum(kernel_signatures()) == before
