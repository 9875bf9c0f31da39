"""Results of the bench and how they are reported: table, JSON and plot.

A :class:`Result` is one measurement (a workload run by one
implementation); :func:`format_table` prints them as the command does,
:func:`write_json` and :func:`write_plot` write its ``--json`` and
``--plot`` files, and :func:`combine_processes` merges the results of
several processes (``--processes``) into medians with their range.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..io.console import pyplot
from . import workloads
from .workloads import SPARSESET

__all__ = [
    "Result",
    "combine_processes",
    "format_table",
    "write_json",
    "write_plot",
]


@dataclass(frozen=True)
class Result:
    """One measurement: a workload run by one implementation.

    Attributes
    ----------
    workload : str
        The workload's name, such as ``"contains"``.
    implementation : str
        ``"sparseset"``, or a baseline such as ``"numpy isin"``; its first
        word is the family (sparseset, numpy, Python, esper).
    ns_per_element : float
        ``seconds / elements`` in nanoseconds.
    elements : int
        Elements the timed call worked on (ids, rows, matched entities).
    seconds : float
        Median seconds of one timed call.
    scaled : bool
        True when a Python loop was timed on a subset of
        :data:`~sparseset.bench.workloads.PYTHON_CAP`
        elements rather than all n; its ns per element stands for n.
    low, high : float, optional
        With ``--processes``: the smallest and largest ns per element of
        the fresh processes (``ns_per_element`` is then their median).

    Examples
    --------
    >>> r = Result("contains", "sparseset", 7.5, 1000, 7.5e-6, False)
    >>> r.implementation, r.ns_per_element
    ('sparseset', 7.5)
    """

    workload: str
    implementation: str
    ns_per_element: float
    elements: int
    seconds: float
    scaled: bool = False
    low: float | None = None
    high: float | None = None


def combine_processes(runs: Sequence[Sequence[Result]]) -> list[Result]:
    """Each figure's median over several processes' results, with its range.

    Notes
    -----
    O(r * p) for r figures and p processes.

    Examples
    --------
    >>> runs = [[Result("contains", "sparseset", ns, 10, ns * 1e-8)]
    ...         for ns in (8.0, 12.0, 9.0)]
    >>> r, = combine_processes(runs)
    >>> r.ns_per_element, r.low, r.high
    (9.0, 8.0, 12.0)
    """
    combined = []
    for first, *others in zip(*runs, strict=True):
        same = [first, *others]
        ns = [r.ns_per_element for r in same]
        combined.append(
            dataclasses.replace(
                first,
                ns_per_element=statistics.median(ns),
                seconds=statistics.median(r.seconds for r in same),
                low=min(ns),
                high=max(ns),
            )
        )
    return combined


def _ns(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    if value < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def _figure(r: Result) -> str:
    """ns per element, with the processes' range when there is one."""
    if r.low is None or r.high is None:
        return _ns(r.ns_per_element)
    return f"{_ns(r.ns_per_element)} ({_ns(r.low)}-{_ns(r.high)})"


def _speedup(ratio: float) -> str:
    if ratio >= 10:
        return f"{ratio:,.0f}x"
    if ratio >= 1:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def format_table(results: Sequence[Result], title: str = "") -> str:
    """The results as an aligned plain-text table, one row per workload.

    Each row has sparseset's ns per element, then every baseline's ns per
    element and its speedup (baseline / sparseset). A baseline timed on a
    subset (``scaled``) is marked ``*`` and explained under the table.

    Notes
    -----
    O(r) for r results.

    Examples
    --------
    >>> rows = [Result("contains", "sparseset", 8.0, 10, 8e-8),
    ...         Result("contains", "Python set", 240.0, 10, 2.4e-6)]
    >>> print(format_table(rows))  # doctest: +NORMALIZE_WHITESPACE
    workload  sparseset ns  baselines: ns per element (speedup = baseline / sparseset)
    contains          8.00  Python set  240  30x
    ns per element: per id (discard: per removed id; view join: per matched entity)
    """
    by_workload: dict[str, list[Result]] = {}
    for r in results:
        by_workload.setdefault(r.workload, []).append(r)
    grid: list[list[tuple[str, str]]] = [
        [
            ("workload", "<"),
            ("sparseset ns", ">"),
            ("baselines: ns per element (speedup = baseline / sparseset)", "<"),
        ]
    ]
    any_scaled = False
    for workload, rows in by_workload.items():
        mine = next((r for r in rows if r.implementation == SPARSESET), None)
        line = [(workload, "<"), (_figure(mine) if mine else "-", ">")]
        for r in rows:
            if r is mine:
                continue
            any_scaled |= r.scaled
            line.append((r.implementation + ("*" if r.scaled else ""), "<"))
            line.append((_figure(r), ">"))
            ratio = r.ns_per_element / mine.ns_per_element if mine else float("nan")
            line.append((_speedup(ratio) if mine else "", ">"))
        grid.append(line)
    lines = [title] if title else []
    lines += _align(grid)
    if any_scaled:
        # Read when the table is made: the cap is a module setting.
        cap = workloads.PYTHON_CAP
        lines.append(
            f"* Python loop timed on {cap:,} elements (n > {cap:,}) "
            "and reported per element"
        )
    lines.append(
        "ns per element: per id (discard: per removed id; "
        "view join: per matched entity)"
    )
    return "\n".join(lines)


def _align(grid: list[list[tuple[str, str]]]) -> list[str]:
    """Pad every column to its widest cell; the header's long last cell hangs."""
    body = grid[1:]
    columns = max(len(row) for row in grid)
    widths = [
        max((len(row[c][0]) for row in body if c < len(row)), default=0)
        for c in range(columns)
    ]
    for c, (text, _) in enumerate(grid[0][:-1]):
        widths[c] = max(widths[c], len(text))
    lines = []
    for row in grid:
        cells = []
        for c, (text, how) in enumerate(row):
            last = row is grid[0] and c == len(row) - 1
            cells.append(
                text
                if last
                else text.rjust(widths[c])
                if how == ">"
                else text.ljust(widths[c])
            )
        lines.append("  ".join(cells).rstrip())
    return lines


def write_json(
    path: str,
    results: Sequence[Result],
    *,
    n: int,
    **meta: Any,
) -> None:
    """Write ``{"n": n, **meta, "results": [...]}`` to ``path`` as JSON.

    Each result is an object with the fields of :class:`Result`.

    Notes
    -----
    O(r) for r results.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bench.json")
    >>> write_json(path, [Result("contains", "sparseset", 8.0, 10, 8e-8)], n=10,
    ...            versions={"numpy": "2"})
    >>> doc = json.load(open(path))
    >>> doc["n"], doc["versions"], doc["results"][0]["ns_per_element"]
    (10, {'numpy': '2'}, 8.0)
    """
    doc = {"n": n, **meta, "results": [dataclasses.asdict(r) for r in results]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


#: Bar colours per implementation family (the first word of its name).
_COLOURS = {
    "sparseset": "tab:blue",
    "numpy": "tab:orange",
    "Python": "tab:green",
    "esper": "tab:red",
}


def write_plot(results: Sequence[Result], path: str, title: str = "") -> None:
    """Write a PNG bar chart of ns per element (log scale), grouped by workload.

    One bar per implementation, coloured by family (sparseset, numpy,
    Python, esper) and labelled with its name; hatched bars were timed on
    a subset. Needs matplotlib.

    Notes
    -----
    O(r) for r results, plus matplotlib's rendering.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bench.png")
    >>> write_plot([Result("contains", "sparseset", 8.0, 10, 8e-8),
    ...             Result("contains", "Python set", 240.0, 10, 2.4e-6)], path)
    >>> os.path.getsize(path) > 0
    True
    """
    plt = pyplot()
    workloads = list(dict.fromkeys(r.workload for r in results))
    widest = max((sum(r.workload == w for r in results) for w in workloads), default=1)
    width = 0.8 / widest
    fig, ax = plt.subplots(figsize=(max(8.0, 1.5 * len(workloads)), 5.5))
    try:
        for i, workload in enumerate(workloads):
            rows = [r for r in results if r.workload == workload]
            for j, r in enumerate(rows):
                x = i + (j - (len(rows) - 1) / 2) * width
                family = r.implementation.split()[0]
                ax.bar(
                    x,
                    r.ns_per_element,
                    width * 0.9,
                    color=_COLOURS.get(family, "tab:gray"),
                    hatch="//" if r.scaled else None,
                    edgecolor="white" if r.scaled else None,
                )
                label = r.implementation.removeprefix("Python ").removeprefix("numpy ")
                ax.text(
                    x,
                    r.ns_per_element * 1.15,
                    label + ("*" if r.scaled else ""),
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
        ax.set_yscale("log")
        top = max((r.ns_per_element for r in results), default=1.0)
        ax.set_ylim(top=top * 25)
        ax.set_xticks(range(len(workloads)), workloads)
        ax.set_ylabel("ns per element (log scale; lower is better)")
        handles = [
            plt.Rectangle((0, 0), 1, 1, color=colour) for colour in _COLOURS.values()
        ]
        ax.legend(handles, list(_COLOURS), loc="upper left", fontsize=8, ncols=4)
        if title:
            ax.set_title(
                title
                + ("  (* timed on a subset)" if any(r.scaled for r in results) else "")
            )
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
