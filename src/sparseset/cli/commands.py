"""The command line: ``python -m sparseset demo``, ``bench`` and ``warm``.

``demo`` runs a particle simulation on a :class:`~sparseset.World` and
prints how fast it went (:mod:`sparseset.demo`); ``bench`` times the core
operations next to the usual alternatives (Python sets and dicts, numpy,
esper when installed) on this machine (:mod:`sparseset.bench`); ``warm``
compiles the common calls' kernels into numba's cache now, so that later
programs load them (:func:`sparseset.cli.warm`). Each takes ``--help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..bench.data import SEED
from ..io.console import MissingDependencyError
from ..sets.sparse_set import FLAT_LIMIT
from .warming import ALL_KINDS, warm


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive count")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        # numpy seeds its generators with non-negative integers only.
        raise argparse.ArgumentTypeError(f"{value} is not a non-negative seed")
    return value


def _bench_size(text: str) -> int:
    value = _positive(text)
    # The bench draws n ids from a 4n-id space, which the flat index must hold.
    if 4 * value > FLAT_LIMIT:
        raise argparse.ArgumentTypeError(
            f"{value:,} is too large: the bench draws from a 4n-id space, and "
            f"the flat index holds 2**31 ids (n <= {FLAT_LIMIT // 4:,})"
        )
    return value


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [kind for kind in kinds if kind not in ALL_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of index kinds "
            f"({', '.join(ALL_KINDS)})"
        )
    return kinds


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m sparseset``.

    Notes
    -----
    O(1): builds the parser, a fixed set of commands and options.

    Examples
    --------
    >>> args = build_parser().parse_args(["demo", "--entities", "1_000"])
    >>> args.command, args.entities, args.steps
    ('demo', 1000, 200)
    """
    parser = argparse.ArgumentParser(
        prog="python -m sparseset",
        description="Sparse sets and ECS storage compiled with numba: "
        "see it run (demo), measure it on this machine (bench), compile "
        "its kernels ahead of a first run (warm).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo",
        help="a particle simulation on a World",
        description="Particles with position and velocity (some with drag and a "
        "lifetime), stepped by a Schedule of systems: integrate through an owning "
        "group, drag through a view, despawn the expired and respawn them through "
        "deferred commands, keep a spatial grid from the changes, then report "
        "the rates.",
    )
    demo.add_argument(
        "--entities",
        type=_positive,
        default=1_000_000,
        help="particles alive at any time (default 1,000,000)",
    )
    demo.add_argument(
        "--steps", type=_positive, default=200, help="simulation steps (default 200)"
    )
    demo.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    demo.add_argument(
        "--threads",
        type=_positive,
        default=None,
        help="threads each batch of the schedule's systems (and their lookups) "
        "runs on; each batch picks the fastest way to use them (default: the "
        "cores this process may use; 1: everything on one thread)",
    )
    demo.add_argument(
        "--save",
        metavar="PATH",
        help="write the final world here with World.save (.npz)",
    )
    demo.add_argument(
        "--plot",
        metavar="PATH",
        help="write a PNG of the final positions and the live "
        "count per step (needs matplotlib)",
    )

    bench = commands.add_parser(
        "bench",
        help="time the core operations against Python, numpy and esper",
        description="Time sparseset's core workloads and their usual "
        "alternatives at one size; print ns per element and speedups.",
    )
    size = bench.add_mutually_exclusive_group()
    size.add_argument(
        "--n",
        type=_bench_size,
        default=None,
        help="elements per workload (default 1,000,000)",
    )
    size.add_argument(
        "--quick", action="store_true", help="100,000 elements and fewer repeats"
    )
    bench.add_argument(
        "--repeats",
        type=_positive,
        default=None,
        help="timed runs per measurement, median reported "
        "(default 5, or 3 with --quick)",
    )
    bench.add_argument(
        "--processes",
        type=_positive,
        default=1,
        metavar="K",
        help="run the whole bench in K fresh processes and report each "
        "figure's median and range over them (default 1: this process)",
    )
    bench.add_argument(
        "--seed",
        type=_seed,
        default=SEED,
        help=f"random seed of the data (default {SEED})",
    )
    bench.add_argument(
        "--plot",
        metavar="PATH",
        help="write a log-scale bar chart PNG (needs matplotlib)",
    )
    bench.add_argument("--json", metavar="PATH", help="write the numbers as JSON")
    bench.add_argument(
        "--contention",
        action="store_true",
        help="time the threaded reads alone and next to a second process "
        "running the same (batch sizes 1,000, 32,768 and 1,000,000; "
        "--quick: 1,000 and 32,768)",
    )

    warm = commands.add_parser(
        "warm",
        help="compile the common calls' kernels into numba's cache now",
        description="Call every container's batch and one-id operations, "
        "and a World's, once on a few int64 ids, so that numba compiles their "
        "kernels into its cache (NUMBA_CACHE_DIR, or __pycache__ next to the "
        "package) and later programs only load them.",
    )
    warm.add_argument(
        "--kinds",
        type=_kinds,
        default=ALL_KINDS,
        help="comma-separated index kinds to warm (default: flat,paged,hash)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m sparseset`` with ``argv``; returns the exit status.

    Notes
    -----
    O(1) to parse ``argv``; the command it runs costs what it runs
    (:func:`~sparseset.demo.run_demo`, :func:`~sparseset.bench.run_bench`,
    :func:`~sparseset.cli.warm`).

    Examples
    --------
    >>> main(["demo", "--entities", "300", "--steps", "2"])  # doctest: +ELLIPSIS
    entities: ...
    books balance: live 300 = spawned ... (ok)
    0
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from ..demo.particles import run_demo

            summary = run_demo(
                entities=args.entities,
                steps=args.steps,
                seed=args.seed,
                save_path=args.save,
                plot_path=args.plot,
                out=sys.stdout,
                threads=args.threads,
            )
            return 0 if summary.balanced and summary.grid_ok else 1
        if args.command == "warm":
            print(warm(args.kinds))
            return 0
        quick = args.quick
        if args.contention:
            from ..bench.contention import SIZES, format_contention, run_contention

            timings = run_contention(
                repeats=args.repeats or (3 if quick else 5),
                seed=args.seed,
                sizes=SIZES[:2] if quick else SIZES,
            )
            print(format_contention(timings))
            return 0
        from ..bench import run_bench, run_bench_processes

        n = args.n or (100_000 if quick else 1_000_000)
        options = {
            "repeats": args.repeats or (3 if quick else 5),
            "plot_path": args.plot,
            "json_path": args.json,
            "out": sys.stdout,
            "seed": args.seed,
        }
        if args.processes > 1:
            run_bench_processes(n, args.processes, **options)
        else:
            run_bench(n, **options)
        return 0
    except (MissingDependencyError, OSError, RuntimeError) as error:
        # A missing optional dependency or an unwritable path: say so
        # plainly, without a traceback.
        print(f"python -m sparseset {args.command}: {error}", file=sys.stderr)
        return 2
