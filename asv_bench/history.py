"""Benchmark the last N commits into asv's results, then publish the dashboard.

``nox -s bench_history -- N [asv run arguments]`` runs this; so can you,
from any directory, in an environment that has the ``bench`` extra::

    python asv_bench/history.py 5 --bench sparse_set

Each commit is checked out into a temporary git worktree and benchmarked
by ``asv run --python=same --set-commit-hash SHA``, with that worktree's
``src/`` first on the benchmarks' path (asv's ``ASV_PYTHONPATH``), so the
suite of the current checkout times each commit's package in this one
environment: no virtualenv per commit, and no dependency of a commit's
own ``bench`` extra. The results go to asv's results directory and
``asv publish`` writes the HTML dashboard (its path is printed last; ``asv
preview`` in ``asv_bench/`` serves it). A commit whose package fails to
import records failed benchmarks, as asv does for any broken commit.

The dashboard graphs the branch checked out (``HEAD`` when detached).
``--results-dir`` and ``--html-dir`` send both elsewhere (the test of this
script uses them, so that it leaves ``asv_bench/.asv`` alone). Every
further argument goes to ``asv run`` (``--bench REGEX``, ``--quick``...).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE / "asv.conf.json"


def git(*args: str, cwd: pathlib.Path = HERE) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def last_commits(count: int) -> list[str]:
    """The last ``count`` commits of HEAD's first-parent line, oldest first."""
    shas = git("rev-list", "--first-parent", f"--max-count={count}", "HEAD").split()
    if len(shas) < count:
        raise SystemExit(f"asked for {count} commits; HEAD's history has {len(shas)}")
    return shas[::-1]


def config_with(
    work: pathlib.Path, branch: str, results: str | None, html: str | None
) -> str:
    """asv's config for this run, written into ``work``.

    Its paths are made absolute (asv reads them relative to the config's
    own directory); the dashboard graphs ``branch``, the one the commits
    were taken from, and the results and HTML go where asked.
    """
    lines = CONFIG.read_text().splitlines()
    # asv's config allows // comments; drop whole-line ones to read it as JSON.
    text = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
    conf = json.loads(text)
    for key in ("repo", "benchmark_dir", "env_dir", "results_dir", "html_dir"):
        conf[key] = str((HERE / conf[key]).resolve())
    if results is not None:
        conf["results_dir"] = str(pathlib.Path(results).resolve())
    if html is not None:
        conf["html_dir"] = str(pathlib.Path(html).resolve())
    conf["branches"] = [branch]
    path = work / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=2))
    return str(path)


def asv(*args: str, env: dict[str, str] | None = None) -> int:
    command = [sys.executable, "-m", "asv", *args]
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, cwd=HERE, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("commits", type=int, help="how many commits, HEAD's last")
    parser.add_argument("--results-dir", help="asv's results (default: the config's)")
    parser.add_argument("--html-dir", help="the dashboard (default: the config's)")
    options, asv_args = parser.parse_known_args(argv)
    if options.commits < 1:
        parser.error(f"commits must be at least 1, got {options.commits}")
    shas = last_commits(options.commits)
    failed = []
    with tempfile.TemporaryDirectory(prefix="sparseset-history-") as tmp:
        work = pathlib.Path(tmp)
        # "HEAD" where no branch is checked out: asv lists its commits the same.
        branch = git("rev-parse", "--abbrev-ref", "HEAD")
        config = config_with(work, branch, options.results_dir, options.html_dir)
        if asv("machine", "--yes", "--config", config):
            return 1
        for sha in shas:
            tree = work / sha
            git("worktree", "add", "--detach", str(tree), sha)
            try:
                env = {
                    **os.environ,
                    "ASV_PYTHONPATH": str(tree / "src"),
                    # Each commit's kernels compile into a cache of its own:
                    # numba keys its cache by source file, and files differ.
                    "NUMBA_CACHE_DIR": str(work / f"numba-{sha}"),
                }
                code = asv(
                    "run",
                    "--python=same",
                    f"--set-commit-hash={sha}",
                    "--config",
                    config,
                    *asv_args,
                    env=env,
                )
            finally:
                git("worktree", "remove", "--force", str(tree))
            if code:
                failed.append(sha)
        if asv("publish", "--config", config):
            return 1
    html = options.html_dir or str(HERE / ".asv" / "html")
    print(f"dashboard: {html}/index.html (serve it with: asv preview)")
    if failed:
        # The others' results are published; asv's output above names what failed.
        print(f"asv run failed on {len(failed)} commit(s): {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
