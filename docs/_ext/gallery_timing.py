"""A time cap on the gallery's examples, which run at every docs build.

sphinx-gallery calls :func:`time_examples` before and after each example
(``reset_modules_order = "both"``); an example that ran longer than
:data:`EXAMPLE_SECONDS` gets a warning, which ``sphinx-build -W`` turns
into a failed build. The gallery illustrates; the benchmarks measure.
"""

from __future__ import annotations

import time
from typing import Any

from sphinx.util import logging

#: Seconds one example may run at build time. The examples take seconds
#: with a warm numba cache; the margin is for a cold one, where the first
#: call of each kernel compiles it (the particle example compiles most of
#: the World's kernels). An example past this has grown beyond an
#: illustration.
EXAMPLE_SECONDS = 60.0

_logger = logging.getLogger(__name__)
_started: dict[str, float] = {}


def time_examples(gallery_conf: dict[str, Any], fname: str, when: str) -> None:
    """Start the clock before an example; warn after it if it ran too long."""
    if when == "before":
        _started[fname] = time.perf_counter()
        return
    seconds = time.perf_counter() - _started.pop(fname, time.perf_counter())
    if seconds > EXAMPLE_SECONDS:
        _logger.warning(
            "gallery example %s ran %.1f s, past the %.0f s cap: make it smaller",
            fname,
            seconds,
            EXAMPLE_SECONDS,
        )
