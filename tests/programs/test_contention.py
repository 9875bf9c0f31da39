"""python -m sparseset bench --contention: its workloads, its second
process and its table (no timing is asserted)."""

import subprocess

import numpy as np
import pytest

from sparseset.bench import contention
from sparseset.cli.commands import main


@pytest.mark.parametrize("read", contention.READS)
def test_each_read_answers_for_its_size(read):
    call = contention.workload(read, 500, 0)
    first, second = call(), call()
    if read in ("contains", "index"):
        assert first.shape == (500,)
        np.testing.assert_array_equal(first, second)
    else:
        # One entity leaves "vel" and comes back, call by call.
        assert {len(first), len(second)} == {499, 500}


def test_an_unknown_read_is_refused():
    with pytest.raises(ValueError, match="no read 'sort'"):
        contention.workload("sort", 10, 0)


def test_a_run_times_every_read_alone_and_busy_and_stops_its_load(monkeypatch):
    monkeypatch.setattr(contention, "LOAD_START_SECONDS", 0.5)
    started = []
    popen = subprocess.Popen

    def recording_popen(*args, **kwargs):
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(contention.subprocess, "Popen", recording_popen)
    timings = contention.run_contention(repeats=1, sizes=(200,), reads=("contains",))
    assert [(t.read, t.size) for t in timings] == [("contains", 200)]
    t = timings[0]
    assert min(t.alone_one, t.alone_all, t.busy_one, t.busy_all) > 0
    assert len(started) == 1 and started[0].poll() is not None  # stopped
    table = contention.format_contention(timings)
    assert table.splitlines()[1].split()[:2] == ["contains", "200"]


def test_the_cli_flag_runs_it_and_prints_the_table(monkeypatch, capsys):
    calls = []

    def fake_run(repeats, seed, sizes):
        calls.append((repeats, seed, tuple(sizes)))
        return [contention.Timing("index", 1000, 1e-3, 1e-3, 1e-3, 1e-3)]

    monkeypatch.setattr(contention, "run_contention", fake_run)
    assert main(["bench", "--contention", "--quick", "--seed", "3"]) == 0
    assert calls == [(3, 3, contention.SIZES[:2])]
    assert "index" in capsys.readouterr().out
