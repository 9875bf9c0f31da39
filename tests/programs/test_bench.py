"""Tests for ``sparseset.bench``, the ``python -m sparseset bench`` workloads.

One small run (n = 3000, one repeat) is shared by most tests: every
workload and implementation must be there with sane numbers, and the
table, JSON and PNG must say the same thing. The workloads are also run
once each, untimed, to check that every implementation of a workload does
the same work (same members, same answers, same updated positions), so the
ratios compare like with like.
"""

import io
import json
import math
import re
import statistics
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from sparseset.bench import (
    WORKLOADS,
    Result,
    WorkloadData,
    cases,
    combine_processes,
    format_table,
    run_bench,
    run_bench_processes,
    runner,
    workloads,
)
from sparseset.bench.data import SCHEMA, SEED
from sparseset.cli.commands import main

N = 3000

#: What each workload is timed with; esper rows only when it is installed.
EXPECTED = {
    "set add": ["sparseset", "Python set.update"],
    "contains": ["sparseset", "numpy isin", "Python set"],
    "discard": ["sparseset", "Python set.difference_update"],
    "intersection": ["sparseset", "numpy intersect1d", "Python set &"],
    "store add": ["sparseset", "Python dict of rows", "esper"],
    "group update": ["sparseset", "numpy arrays", "Python dict loop", "esper"],
    "view join": ["sparseset", "numpy intersect1d", "Python dict loop"],
}
#: Elements one timed call covers, at n = N.
ELEMENTS = {
    "set add": N,
    "contains": N,
    "discard": N // 2,
    "intersection": N,
    "store add": N,
    "group update": N,
    "view join": N // 2,
}

try:
    import esper
except ImportError:
    esper = None


def expected_pairs(with_esper):
    return [
        (workload, impl)
        for workload, impls in EXPECTED.items()
        for impl in impls
        if with_esper or impl != "esper"
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One bench run at n = N with JSON and plot: (results, table, paths)."""
    pytest.importorskip("matplotlib")
    folder = tmp_path_factory.mktemp("bench")
    json_path, plot_path = folder / "bench.json", folder / "bench.png"
    out = io.StringIO()
    results = run_bench(
        N, repeats=1, out=out, json_path=str(json_path), plot_path=str(plot_path)
    )
    return results, out.getvalue(), json_path, plot_path


def test_every_workload_and_implementation_is_timed(run):
    results, _, _, _ = run
    pairs = [(r.workload, r.implementation) for r in results]
    assert pairs == expected_pairs(esper is not None)
    assert tuple(dict.fromkeys(r.workload for r in results)) == WORKLOADS


def test_numbers_are_positive_finite_and_consistent(run):
    results, _, _, _ = run
    for r in results:
        assert isinstance(r, Result)
        assert math.isfinite(r.ns_per_element) and r.ns_per_element > 0, r
        assert math.isfinite(r.seconds) and r.seconds > 0, r
        assert r.elements == ELEMENTS[r.workload], r
        assert r.ns_per_element == pytest.approx(r.seconds / r.elements * 1e9)
        assert not r.scaled  # n is below the cap: everything ran at full size


def test_table_has_header_and_a_row_per_workload(run):
    _, table, _, _ = run
    header = table.splitlines()[0]
    assert f"n = {N:,}" in header
    assert f"numba {numba.__version__}" in header
    assert f"numpy {np.__version__}" in header
    assert f"{numba.get_num_threads()} numba threads" in header
    lines = table.splitlines()
    for workload in WORKLOADS:
        rows = [line for line in lines if line.startswith(workload + " ")]
        assert len(rows) == 1, (workload, table)
        for impl in EXPECTED[workload][1:]:
            if impl != "esper" or esper is not None:
                assert impl in rows[0]
    assert "*" not in table  # nothing was scaled


def test_table_speedups_are_baseline_over_sparseset():
    rows = [
        Result("contains", "sparseset", 8.0, 10, 8e-8),
        Result("contains", "numpy isin", 4.0, 10, 4e-8),
        Result("contains", "Python set", 240.0, 10, 2.4e-6, scaled=True),
    ]
    table = format_table(rows, title="title line")
    assert table.splitlines()[0] == "title line"
    row = next(line for line in table.splitlines() if line.startswith("contains"))
    assert row.split() == [
        "contains",
        "8.00",
        "numpy",
        "isin",
        "4.00",
        "0.50x",
        "Python",
        "set*",
        "240",
        "30x",
    ]
    assert "* Python loop timed on" in table


def test_json_holds_the_same_numbers(run):
    results, _, json_path, _ = run
    doc = json.loads(json_path.read_text())
    assert doc["n"] == N
    assert doc["versions"]["numpy"] == np.__version__
    assert (doc["versions"]["esper"] is None) == (esper is None)
    assert [Result(**r) for r in doc["results"]] == results


def test_plot_is_a_png(run):
    _, _, _, plot_path = run
    from matplotlib import image

    pixels = image.imread(str(plot_path))
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_without_esper_there_are_no_esper_rows(monkeypatch):
    monkeypatch.setitem(sys.modules, "esper", None)  # import esper now fails
    out = io.StringIO()
    results = run_bench(500, repeats=1, out=out)
    assert [(r.workload, r.implementation) for r in results] == [
        (w, i) for w, i in expected_pairs(False)
    ]
    assert "esper  " not in out.getvalue()
    assert "esper not installed" in out.getvalue()


@pytest.mark.skipif(esper is None, reason="esper is not installed")
def test_esper_world_is_left_as_it_was():
    esper.switch_world("default")
    before = esper.list_worlds()
    run_bench(200, repeats=1, out=io.StringIO())
    assert esper.current_world == "default"
    assert esper.list_worlds() == before


def test_python_loops_above_the_cap_run_on_a_subset(monkeypatch):
    monkeypatch.setattr(workloads, "PYTHON_CAP", 1000)
    out = io.StringIO()
    results = run_bench(N, repeats=1, out=out)
    scaled = {(r.workload, r.implementation) for r in results if r.scaled}
    assert scaled == {
        pair
        for pair in expected_pairs(esper is not None)
        if pair[1] in ("Python dict of rows", "Python dict loop", "esper")
    }
    for r in results:
        if r.scaled and r.workload != "view join":
            assert r.elements == 1000
        elif r.scaled:  # the entities with vel among the first 1000
            assert 300 < r.elements < 700
        else:
            assert r.elements == ELEMENTS[r.workload]
    table = out.getvalue()
    assert "Python dict loop*" in table
    assert "* Python loop timed on 1,000 elements" in table


def test_default_output_is_stdout_at_call_time(capsys):
    run_bench(100, repeats=1)
    assert "view join" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "positive"),
        ({"n": 2.5}, "positive"),
        ({"n": 2**29 + 1}, "flat index"),
        ({"n": 10, "repeats": 0}, "repeats"),
    ],
)
def test_bad_arguments_raise_before_any_work(kwargs, message):
    out = io.StringIO()
    n = kwargs.pop("n")
    with pytest.raises(ValueError, match=message):
        run_bench(n, out=out, **kwargs)
    assert out.getvalue() == ""


def test_plot_without_matplotlib_fails_before_timing(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = io.StringIO()
    with pytest.raises(ImportError, match="matplotlib"):
        run_bench(100, repeats=1, out=out, plot_path=str(tmp_path / "x.png"))
    assert out.getvalue() == ""


def test_tiny_sizes_work():
    for n in (1, 2, 3):
        results = run_bench(n, repeats=1, out=io.StringIO())
        assert all(r.elements >= 1 and r.ns_per_element > 0 for r in results)


# -- equal work: every implementation of a workload computes the same thing --


def compare(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            compare(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_implementations_do_the_same_work(workload):
    esper_module = runner._esper_module()
    with runner._esper_world(esper_module):
        data = WorkloadData(2000, 7)
        built = cases(workload, data, esper_module)
        assert [c.implementation for c in built] == [
            impl
            for impl in EXPECTED[workload]
            if impl != "esper" or esper_module is not None
        ]
        answers = [case.canonical(case.prepare()()) for case in built]
    reference = answers[0]
    for case, answer in zip(built[1:], answers[1:], strict=True):
        try:
            compare(reference, answer)
        except AssertionError as error:
            raise AssertionError(f"{workload}: {case.implementation}") from error


def test_the_workloads_change_what_they_should():
    """The reference answers themselves: not all equal by doing nothing."""
    data = WorkloadData(2000, 7)

    def answer(workload):
        case = cases(workload, data)[0]
        return case.canonical(case.prepare()())

    assert answer("set add").tolist() == sorted(data.ids.tolist())
    contains = answer("contains")
    assert contains.sum() == 1000 and contains.tolist() == [
        q in data.pyset for q in data.queries.tolist()
    ]
    assert answer("discard").tolist() == sorted(
        set(data.ids.tolist()) - set(data.victims.tolist())
    )
    assert answer("intersection").tolist() == sorted(
        set(data.ids.tolist()) & set(data.other.tolist())
    )
    assert len(answer("intersection")) == 1000
    ids, pos, vel = answer("store add")
    order = np.argsort(data.ids)
    compare((ids, pos, vel), (data.ids[order], data.pos[order], data.vel[order]))
    compare(answer("group update"), data.pos + data.vel * workloads.DT)
    moved = data.pos.copy()
    moved[data.vel_members] += data.vel[data.vel_members] * workloads.DT
    compare(answer("view join"), moved)


def test_processes_report_the_median_and_range_of_fresh_processes(tmp_path, capsys):
    path = tmp_path / "bench.json"
    argv = ["bench", "--n", "1500", "--repeats", "1", "--processes", "2"]
    assert main([*argv, "--seed", "3", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["processes"] == 2 and data["seed"] == 3
    assert len(data["per_process"]) == 2
    for k, combined in enumerate(data["results"]):
        figures = [run[k]["ns_per_element"] for run in data["per_process"]]
        assert combined["low"] == min(figures) and combined["high"] == max(figures)
        assert combined["ns_per_element"] == statistics.median(figures)
    table = capsys.readouterr().out
    assert "median of 2 fresh processes" in table
    assert re.search(r"set add\s+[\d.]+ \([\d.]+-[\d.]+\)", table)


def test_combine_processes_takes_medians_and_refuses_unequal_runs():
    runs = [
        [Result("contains", "sparseset", ns, 10, ns * 1e-8)] for ns in (5.0, 9.0, 7.0)
    ]
    (result,) = combine_processes(runs)
    assert (result.ns_per_element, result.low, result.high) == (7.0, 5.0, 9.0)
    assert result.seconds == pytest.approx(7e-8)
    with pytest.raises(ValueError):
        combine_processes([runs[0], runs[1] * 2])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0, "processes": 2}, "positive integer size"),
        ({"n": 100, "processes": 0}, "at least one process"),
        ({"n": 100, "processes": 2, "repeats": 0}, "at least one timed run"),
    ],
)
def test_processes_refuse_bad_arguments_before_starting_any(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_bench_processes(**kwargs)


# -- the inputs: one definition for the bench and the asv suite --------------


def test_workload_data_is_what_the_workloads_say():
    n = 301
    d = WorkloadData(n, seed=5)
    ids = d.ids.tolist()
    assert len(set(ids)) == n and min(ids) >= 0 and max(ids) < d.space == 4 * n
    assert d.space_order[:n].tolist() == ids
    assert sorted(d.space_order.tolist()) == list(range(d.space))
    members = set(ids)
    assert sum(q in members for q in d.queries.tolist()) == d.half == n // 2
    assert len(set(d.queries.tolist())) == n
    assert len(set(d.victims.tolist())) == d.half and set(d.victims.tolist()) <= members
    other = set(d.other.tolist())
    assert len(other) == n and other & members == set(ids[n - d.half :])
    assert d.pos.shape == d.vel.shape == (n, 3)
    assert sorted(d.pos_order.tolist()) == sorted(d.vel_order.tolist()) == [*range(n)]
    assert len(set(d.vel_members.tolist())) == d.half
    assert max(d.vel_members.tolist()) < n


def test_workload_data_is_fixed_by_size_and_seed_alone():
    names = ["ids", "queries", "victims", "other", "pos", "vel"]
    names += ["pos_order", "vel_order", "vel_members"]
    first = WorkloadData(200, seed=9)
    # Drawn in the opposite order: each input has its own stream.
    second = WorkloadData(200, seed=9)
    for name in reversed(names):
        getattr(second, name)
    for name in names:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
    assert not np.array_equal(first.ids, WorkloadData(200, seed=10).ids)


@pytest.mark.parametrize(
    ("args", "message"),
    [((0,), "positive integer size"), ((1.5,), "positive"), ((10, -1), "seed = -1")],
)
def test_workload_data_refuses_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        WorkloadData(*args)


def test_an_unknown_workload_is_named():
    with pytest.raises(ValueError, match="'sort' is not one of"):
        cases("sort", WorkloadData(10))


def test_a_negative_seed_is_refused_before_any_work():
    out = io.StringIO()
    with pytest.raises(ValueError, match="seed = -3"):
        run_bench(10, seed=-3, out=out)
    assert out.getvalue() == ""


@pytest.fixture(scope="module")
def asv_suite():
    """The asv suite's modules, imported as asv imports them."""
    pytest.importorskip("asv_runner")  # the `bench` extra
    root = Path(__file__).resolve().parents[2] / "asv_bench"
    sys.path.insert(0, str(root))
    try:
        from benchmarks import sparse_set, store, world

        yield sparse_set, store, world
    finally:
        sys.path.remove(str(root))
        # Drop the modules and the 1M-id data their caches hold.
        for name in [m for m in sys.modules if m.split(".")[0] == "benchmarks"]:
            del sys.modules[name]


def test_the_asv_suite_times_the_bench_data(asv_suite):
    sparse_set, store, world = asv_suite
    assert sparse_set.SEED == SEED  # the bench's default seed
    n = sparse_set.N
    bench = WorkloadData(n, SEED)  # drawn here, not by the suite
    assert bench.space == sparse_set.SPACE

    equal = np.testing.assert_array_equal
    equal(sparse_set._space_permutation(), bench.space_order)
    equal(sparse_set._members(), bench.ids)
    equal(sparse_set._contains_queries(), bench.queries)
    equal(sparse_set._discard_victims(), bench.victims)
    equal(sparse_set._other_ids(), bench.other)
    equal(sparse_set._member_set().ids, bench.ids)
    equal(sparse_set._other_set().ids, bench.other)

    # The store's ids and rows at each size are the bench's first ones.
    for size in store.SIZES:
        pos, vel = store._values(size)
        equal(store._ids(size), bench.ids[:size])
        equal(pos, bench.pos[:size])
        equal(vel, bench.vel[:size])
    assert store.SCHEMA == SCHEMA and store.DT == workloads.DT

    equal(world._pos_order(), bench.pos_order)
    equal(world._vel_members(), bench.vel_members)
    equal(world._vel_order_all(), bench.vel_order)
    joined = world._join_world("random")
    mine = bench.world(bench.vel_members)
    for name in ("pos", "vel"):
        equal(joined[name].ids, mine[name].ids)
        equal(joined[name][name], mine[name][name])


def test_the_index_kinds_suite_warms_up_on_the_current_api():
    """index_kinds' warm-up calls every kernel its rows time, through the
    library's state as it is now (a stale attribute once failed every row)."""
    pytest.importorskip("asv_runner")
    root = Path(__file__).resolve().parents[2] / "asv_bench"
    sys.path.insert(0, str(root))
    try:
        from benchmarks import index_kinds

        index_kinds._warm_up()
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "benchmarks"]:
            del sys.modules[name]
