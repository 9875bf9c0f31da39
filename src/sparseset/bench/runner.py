"""Running the bench: timing every workload, in one process or in several.

:func:`run_bench` is ``python -m sparseset bench``; :func:`run_bench_processes`
is the same with ``--processes K``. Every measurement is the median over
``repeats`` runs, each a fresh untimed setup followed by one timed call,
with the garbage collector paused; every compiled path runs once at a tiny
size first, so compilation is never timed.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import numba
import numpy as np

from .. import config
from .._version import __version__
from ..io.console import Stopwatch, progress, pyplot
from ..sets.sparse_set import FLAT_LIMIT
from .data import SEED, WorkloadData
from .report import Result, combine_processes, format_table, write_json, write_plot
from .workloads import ESPER_WORLD, WORKLOADS, Case, cases

__all__ = ["SLOW_REPEATS", "run_bench", "run_bench_processes"]

#: Timed runs of a Python baseline, at most
#: (:data:`sparseset.config.BENCH_SLOW_REPEATS`).
SLOW_REPEATS = config.BENCH_SLOW_REPEATS
#: Size of the untimed warm-up run that compiles every numba path.
_WARM_UP_N = 64


def _esper_module() -> Any:
    """esper if it can be imported now, else None (its rows are then left out)."""
    try:
        import esper
    except ImportError:
        return None
    return esper


# -- timing ---------------------------------------------------------------------


def _time_once(case: Case) -> float:
    call = case.prepare()
    # As timeit does: a collector pause in the middle of a Python loop
    # would be charged to whichever call happened to trigger it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        result = call()
        seconds = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    # Freed after the clock stopped: dropping a million-id set is not the
    # operation being measured.
    del result
    return seconds


def _measure(workload: str, case: Case, repeats: int) -> Result:
    if not case.slow:
        # One untimed run at full size first: the first call of a case pays
        # for fresh pages of its temporaries (most of all the group update),
        # which a single timed run would report.
        _time_once(case)
    runs = min(repeats, SLOW_REPEATS) if case.slow else repeats
    seconds = statistics.median(_time_once(case) for _ in range(runs))
    return Result(
        workload,
        case.implementation,
        seconds / max(case.elements, 1) * 1e9,
        case.elements,
        seconds,
        case.scaled,
    )


def _warm_up(seed: int, esper: Any) -> None:
    """Run every case once at a tiny size, so numba compiles (or loads) now.

    Same dtypes and array kinds as the timed runs, so the same
    specialisations are hit.
    """
    with _esper_world(esper):
        data = WorkloadData(_WARM_UP_N, seed)
        for workload in WORKLOADS:
            for case in cases(workload, data, esper):
                case.prepare()()


@contextmanager
def _esper_world(esper: Any) -> Iterator[None]:
    """Leave esper's current world as it was and drop the bench's world."""
    if esper is None:
        yield
        return
    previous = esper.current_world
    try:
        yield
    finally:
        if esper.current_world != previous:
            esper.switch_world(previous)
        if previous != ESPER_WORLD and ESPER_WORLD in esper.list_worlds():
            esper.delete_world(ESPER_WORLD)


def _versions(esper: Any) -> dict[str, str | None]:
    return {
        "sparseset": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "esper": None if esper is None else str(getattr(esper, "__version__", "?")),
    }


# -- the command ----------------------------------------------------------------


def _check_arguments(
    n: Any, repeats: Any, plot_path: str | None, seed: Any = SEED
) -> None:
    """Refuse a bad size, repeat count, seed or missing matplotlib before any work."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n = {n!r}: the bench needs a positive integer size")
    if 4 * int(n) > FLAT_LIMIT:
        raise ValueError(f"n = {n}: the 4n-id space must fit the flat index (2**31)")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats = {repeats!r}: need at least one timed run")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed = {seed!r}: need a non-negative integer seed")
    if plot_path is not None:
        pyplot()  # a missing matplotlib should stop us now, not after a minute


def run_bench(
    n: int,
    *,
    repeats: int = 5,
    plot_path: str | None = None,
    json_path: str | None = None,
    out: IO[str] | None = None,
    seed: int = SEED,
) -> list[Result]:
    """Time every workload at size ``n``; print a table to ``out``.

    Parameters
    ----------
    n : int
        Ids per workload, drawn from a ``4 * n``-id space in random order.
        Python dict and esper loops run on at most ``PYTHON_CAP`` of them
        and are reported per element (marked ``*`` in the table).
    repeats : int, optional
        Timed runs per measurement; the median is reported. Python
        baselines run at most ``SLOW_REPEATS`` times.
    plot_path : str, optional
        Where to write a PNG bar chart (needs matplotlib; checked before
        anything is timed).
    json_path : str, optional
        Where to write ``{"n", "repeats", "seed", "threads", "versions",
        "results"}`` as JSON.
    out : text stream, optional
        Where the table goes; ``sys.stdout`` (as it is at call time) by
        default. Progress goes to stderr.
    seed : int, optional
        Seed of every random input.

    Returns
    -------
    list of Result
        One per workload and implementation, in table order. esper rows
        are present only when esper can be imported.

    Raises
    ------
    ValueError
        If ``n``, ``repeats`` or ``seed`` is out of range: ``n`` must be
        positive with its 4n-id space inside the flat index, ``repeats`` at
        least 1, ``seed`` non-negative.
    ImportError
        If ``plot_path`` is given and matplotlib is not installed (raised
        before anything runs).

    Examples
    --------
    >>> import io
    >>> table = io.StringIO()
    >>> results = run_bench(2000, repeats=1, out=table)
    >>> sorted({r.workload for r in results}) == sorted(WORKLOADS)
    True
    >>> all(r.ns_per_element > 0 for r in results)
    True
    >>> "view join" in table.getvalue()
    True
    """
    _check_arguments(n, repeats, plot_path, seed)
    n = int(n)
    out = sys.stdout if out is None else out
    esper = _esper_module()
    watch = Stopwatch()
    _warm_up(seed, esper)
    results: list[Result] = []
    with _esper_world(esper):
        data = WorkloadData(n, seed)
        for workload in progress(WORKLOADS, len(WORKLOADS), f"bench n={n:,}"):
            for case in cases(workload, data, esper):
                results.append(_measure(workload, case, repeats))
    versions = _versions(esper)
    title = (
        f"sparseset {__version__} bench: n = {n:,}; numba {numba.__version__}, "
        f"numpy {np.__version__}, Python {versions['python']}, "
        f"esper {versions['esper'] or 'not installed'}; "
        f"{numba.get_num_threads()} numba threads, {os.cpu_count()} CPUs\n"
        f"n distinct ids from a {4 * n:,}-id space in random order (seed {seed}); "
        f"median of {repeats} runs, {min(repeats, SLOW_REPEATS)} for Python "
        "baselines"
    )
    meta = {
        "repeats": repeats,
        "seed": seed,
        "threads": numba.get_num_threads(),
        "versions": versions,
    }
    _report(results, title, watch, out, json_path, plot_path, n=n, **meta)
    return results


def _report(
    results: list[Result],
    title: str,
    watch: Stopwatch,
    out: IO[str],
    json_path: str | None,
    plot_path: str | None,
    *,
    n: int,
    **meta: Any,
) -> None:
    """Print the table and the time taken; write the JSON and plot if asked."""
    print(format_table(results, title=title), file=out)
    print(f"bench took {watch.seconds():.1f} s", file=out, flush=True)
    if json_path is not None:
        write_json(json_path, results, n=n, **meta)
    if plot_path is not None:
        write_plot(results, plot_path, title=f"sparseset bench, n = {n:,}")


def run_bench_processes(
    n: int,
    processes: int,
    *,
    repeats: int = 5,
    plot_path: str | None = None,
    json_path: str | None = None,
    out: IO[str] | None = None,
    seed: int = SEED,
) -> list[Result]:
    """:func:`run_bench` in ``processes`` fresh processes, one after another;
    report each figure's median over them and its spread.

    Random-access workloads swing between processes on a shared machine
    (page placement, the other tenants): one process can make a table; the
    median of several, with the range beside it, does not.

    Parameters
    ----------
    n, repeats, plot_path, json_path, out, seed
        As for :func:`run_bench`; each process gets ``n``, ``repeats`` and
        ``seed``. The JSON holds the combined results and every process's
        figures (``"per_process"``).
    processes : int
        How many fresh processes (``python -m sparseset bench``), at least 1.

    Returns
    -------
    list of Result
        One per workload and implementation: ``ns_per_element`` and
        ``seconds`` are medians over the processes, ``low`` and ``high``
        the extremes of ``ns_per_element``.

    Raises
    ------
    ValueError
        If ``processes`` is less than one, or another argument is out of
        range as for :func:`run_bench`.
    ImportError
        If ``plot_path`` is given and matplotlib is not installed.
    RuntimeError
        If a process fails; its stderr is in the message.

    Examples
    --------
    >>> import io
    >>> results = run_bench_processes(500, 2, repeats=1, out=io.StringIO())
    >>> all(r.low <= r.ns_per_element <= r.high for r in results)
    True
    """
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes = {processes!r}: need at least one process")
    _check_arguments(n, repeats, plot_path, seed)
    out = sys.stdout if out is None else out
    watch = Stopwatch()
    runs: list[list[Result]] = []
    meta: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sparseset-bench-") as tmp:
        for k in progress(range(processes), processes, f"{processes} processes"):
            path = os.path.join(tmp, f"process-{k}.json")
            command = [sys.executable, "-m", "sparseset", "bench", "--n", str(n)]
            command += ["--repeats", str(repeats), "--seed", str(seed)]
            command += ["--json", path]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(
                    f"bench process {k + 1} of {processes} failed "
                    f"(exit {done.returncode}):\n{done.stderr.strip()}"
                )
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            meta = {key: doc[key] for key in ("threads", "versions")}
            runs.append([Result(**r) for r in doc["results"]])
    results = combine_processes(runs)
    versions = meta["versions"]
    title = (
        f"sparseset {__version__} bench: n = {n:,}; median of {processes} fresh "
        f"processes (lowest-highest in brackets), each the median of {repeats} "
        f"runs; numba {versions['numba']}, numpy {versions['numpy']}, Python "
        f"{versions['python']}, esper {versions['esper'] or 'not installed'}; "
        f"{meta['threads']} numba threads, {os.cpu_count()} CPUs"
    )
    per_process = [[dataclasses.asdict(r) for r in run] for run in runs]
    _report(
        results,
        title,
        watch,
        out,
        json_path,
        plot_path,
        n=n,
        repeats=repeats,
        seed=seed,
        processes=processes,
        per_process=per_process,
        **meta,
    )
    return results
