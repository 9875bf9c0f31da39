"""``nox -s bench_history``: HEAD's last commits into asv's results, one dashboard.

The session runs ``asv_bench/history.py``; this runs the script itself on
HEAD's last two commits and one small benchmark, into a results and an
HTML directory of its own, and reads the published graph back.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HISTORY = ROOT / "asv_bench" / "history.py"
#: One benchmark, three parameter sets, few kernels to compile per commit.
BENCHMARK = "small_sets.Algebra.time_and"


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_history_publishes_a_dashboard_holding_both_commits(tmp_path):
    pytest.importorskip("asv")  # the `bench` extra, which CI installs
    results, html = tmp_path / "results", tmp_path / "html"
    env = {**os.environ, "SPARSESET_BENCH_SIZE": "small"}
    command = [sys.executable, str(HISTORY), "2", "--quick"]
    command += ["--results-dir", str(results), "--html-dir", str(html)]
    # asv matches the pattern against each parameter set's name too.
    command += ["--bench", f"^{BENCHMARK}"]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]

    shas = set(git("rev-list", "--first-parent", "--max-count=2", "HEAD").split())
    assert len(shas) == 2
    index = json.loads((html / "index.json").read_text())
    # asv numbers the commits it graphs; each point of a graph is one commit's.
    revisions = {str(rev): sha for rev, sha in index["revision_to_hash"].items()}
    graphs = list(html.glob(f"graphs/**/{BENCHMARK}.json"))
    assert graphs, sorted(p.relative_to(html).as_posix() for p in html.rglob("*"))
    timed = set()
    for graph in graphs:
        for revision, value in json.loads(graph.read_text()):
            if value is not None:
                timed.add(revisions[str(revision)])
    assert timed == shas
    # The results went where asked: one file per commit, named by its hash.
    recorded = {
        f.name[:8] for f in results.glob("*/*.json") if f.name != "machine.json"
    }
    assert recorded == {sha[:8] for sha in shas}
