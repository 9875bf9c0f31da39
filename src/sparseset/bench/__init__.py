"""``python -m sparseset bench``: the core workloads next to their usual alternatives.

Seven workloads (set add, contains, discard, intersection, store add,
group update, view join; see :mod:`sparseset.bench.workloads`), each timed
for sparseset and for what a Python programmer would otherwise write
(builtin sets and dicts, numpy, esper when it is installed), on the same
data in the same process, so that the ratios are what to read.

The ids are n distinct ids drawn from a 4n-id space in random order (fixed
seed), so that at n = 1,000,000 the random reads leave the caches; the asv
suite in ``asv_bench/`` draws its data from the same
:class:`~sparseset.bench.data.WorkloadData`, with the same seed. Times
are ns per element: per id, per discarded member, per matched entity for
the view join. Every measurement is the median over ``repeats`` runs, each
a fresh untimed setup followed by one timed call; every compiled path runs
once at a tiny size first, so compilation is never timed.

Run it from the command line (``--help`` lists the options)::

    python -m sparseset bench                  # n = 1,000,000
    python -m sparseset bench --quick          # n = 100,000, 3 repeats
    python -m sparseset bench --processes 5 --json bench.json --plot bench.png

or from Python:

>>> import io
>>> table = io.StringIO()
>>> results = run_bench(300, repeats=1, out=table)
>>> [r.implementation for r in results if r.workload == "contains"]
['sparseset', 'numpy isin', 'Python set']
>>> table.getvalue().splitlines()[1].startswith("n distinct ids")
True

Modules:

- :mod:`~sparseset.bench.data`: the seeded inputs and the containers
  built from them, which the asv suite uses too;
- :mod:`~sparseset.bench.workloads`: every workload's cases (sparseset
  and its baselines);
- :mod:`~sparseset.bench.runner`: timing, :func:`run_bench` and
  :func:`run_bench_processes`;
- :mod:`~sparseset.bench.report`: :class:`Result`, the table, the JSON and
  the plot.
"""

from .data import SEED, WorkloadData
from .report import Result, combine_processes, format_table, write_json, write_plot
from .runner import run_bench, run_bench_processes
from .workloads import WORKLOADS, Case, cases

__all__ = [
    "SEED",
    "WORKLOADS",
    "Case",
    "Result",
    "WorkloadData",
    "cases",
    "combine_processes",
    "format_table",
    "run_bench",
    "run_bench_processes",
    "write_json",
    "write_plot",
]
