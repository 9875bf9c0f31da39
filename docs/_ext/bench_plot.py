"""Draw the performance page's bench chart when the site is built.

Runs ``python -m sparseset bench --n 20000 --repeats 1 --plot ...`` in the
build's process (the command line's own entry point, so the chart is what
a user's ``--plot`` draws) and keeps its table beside the chart, in
``docs/_generated/`` (not committed). The size is small on purpose: the
chart illustrates the comparison, and the page's tables keep the figures
measured at full size.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

#: The command's arguments after ``python -m sparseset``.
COMMAND = ("bench", "--n", "20000", "--repeats", "1")


def draw(app: Sphinx) -> None:
    from sparseset.cli.commands import main

    folder = Path(app.srcdir) / "_generated"
    folder.mkdir(exist_ok=True)
    table = io.StringIO()
    # The bench reports progress on stderr; the build's log needs none of it.
    with contextlib.redirect_stdout(table), contextlib.redirect_stderr(io.StringIO()):
        status = main([*COMMAND, "--plot", str(folder / "bench.png")])
    if status:
        raise RuntimeError(f"python -m sparseset {' '.join(COMMAND)} exited {status}")
    (folder / "bench.txt").write_text(table.getvalue())


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", draw)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
