"""Console helpers for the command line tools: progress bars and plotting.

tqdm and matplotlib are optional (``pip install sparseset[demo]``): without
tqdm, or when the output is not a terminal, progress is a few plain lines;
without matplotlib, asking for a plot says what to install.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

T = TypeVar("T")


def progress(
    items: Iterable[T], total: int, description: str, out: IO[str] | None = None
) -> Iterator[T]:
    """Yield ``items`` while showing progress on ``out`` (stderr by default).

    A tqdm bar when tqdm is installed and ``out`` is a terminal; otherwise
    a plain line at every tenth of the way, so logs stay short.

    Examples
    --------
    >>> import io
    >>> log = io.StringIO()
    >>> sum(progress(range(20), 20, "adding", log))
    190
    >>> log.getvalue().splitlines()[-1]
    'adding: 20/20'
    """
    out = sys.stderr if out is None else out
    if _is_terminal(out):
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            yield from tqdm(items, total=total, desc=description, file=out)
            return
    marks = {max(1, round(total * tenth / 10)) for tenth in range(1, 11)}
    for done, item in enumerate(items, start=1):
        yield item
        if done in marks:
            print(f"{description}: {done}/{total}", file=out, flush=True)


def _is_terminal(out: IO[str]) -> bool:
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


class MissingDependencyError(ImportError):
    """An optional dependency a feature needs is not installed."""


def pyplot() -> Any:
    """matplotlib's pyplot on a file-only backend, or a clear ImportError.

    Examples
    --------
    >>> callable(pyplot().savefig)
    True
    """
    try:
        import matplotlib
    except ImportError:
        raise MissingDependencyError(
            "plotting needs matplotlib: pip install matplotlib "
            "(or pip install -e '.[demo]')"
        ) from None
    matplotlib.use("Agg")  # files only: no display needed, none opened
    import matplotlib.pyplot as plt

    return plt


class Stopwatch:
    """Wall-clock seconds since creation, from ``time.perf_counter``.

    Examples
    --------
    >>> watch = Stopwatch(); watch.seconds() >= 0
    True
    """

    def __init__(self) -> None:
        self._start = time.perf_counter()

    def seconds(self) -> float:
        """Seconds elapsed so far."""
        return time.perf_counter() - self._start
