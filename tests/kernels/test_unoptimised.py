"""The kernels that walk a tuple of columns per id, compiled unoptimised.

At ``NUMBA_OPT=0`` nothing promotes a stack slot allocated inside a loop
to a register, so a kernel whose loop over a batch allocates per id (as
numba's ``literal_unroll`` does per column: see
``sparseset.kernels.columns``) grows its stack by the batch and overflows
it. The kernels run in a fresh process (``NUMBA_OPT`` is read when numba
is imported), on a thread with a small stack so that a leak of even tens
of bytes per id overflows it within the batch, and must agree with numpy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import sparseset

SCRIPT = textwrap.dedent(
    """
    import threading
    import numpy as np
    from sparseset import kernels
    from sparseset.kernels.index import hashed
    from sparseset.kernels import ACCUMULATE_TUNING, DISCARD_TUNING, NO_POSITIONS
    from sparseset.kernels import candidates_for

    ahead = ACCUMULATE_TUNING[0]

    def run(ids, gone, picked):
        size = 1 << 16
        sparse = np.empty(size, np.uint32); dense = np.empty(size, np.int64)
        counts = np.empty((size, 1), np.int32); weights = np.empty((size, 2))
        sums = (
            (counts, np.ones((1, 1), np.int32)),
            (weights, np.ones((ids.shape[0], 2))),
        )
        ring = candidates_for(ahead)
        n, stop = kernels.upsert_accumulate(
            sparse, dense, 0, ids, sums, NO_POSITIONS, 0, False, False, ring, ahead
        )
        assert stop == -1
        keys, expected = np.unique(ids, return_counts=True)
        order = np.argsort(dense[:n])
        assert (dense[:n][order] == keys).all()
        assert (counts[:n, 0][order] == expected).all()
        assert (weights[:n, 1][order] == expected).all()
        words = (counts.view(np.uint32), weights.view(np.uint64))
        start = kernels.pack_front(sparse, dense, n, 0, picked, words)
        front = set(dense[:start].tolist())
        assert front == set(picked.tolist()) & set(keys.tolist())
        end = kernels.pack_back(sparse, dense, n, n, picked, words)
        assert set(dense[end:n].tolist()) == front
        left = kernels.discard_rows(sparse, dense, n, gone, words, *DISCARD_TUNING)
        assert set(dense[:left].tolist()) == set(keys.tolist()) - set(gone.tolist())
        for p in range(left):
            x = dense[p]
            assert counts[p, 0] == expected[np.searchsorted(keys, x)]
        # A hash index made for the batch: the loop that trusts it, then
        # (a second batch) the one that counts in its slots.
        index = hashed.room(hashed.empty(seed=1), 0, size // 2, 0)
        counts[:] = 0
        one = (counts, np.ones((1, 1), np.int32))
        for exact, tallies in ((True, False), (False, True)):
            n, stop = kernels.upsert_accumulate(
                index, dense, 0 if exact else n, ids, sums if exact else (one,),
                NO_POSITIONS, 0, exact, tallies, ring, ahead,
            )
            assert stop == -1
        order = np.argsort(dense[:n])
        assert (dense[:n][order] == keys).all()
        assert (counts[:n, 0][order] == 2 * expected).all()
        assert (weights[:n, 1][order] == expected).all()
        return n

    rng = np.random.default_rng(28)
    def batch(count):
        ids = rng.integers(0, 30_000, count)
        return ids, ids[: count // 2].copy(), ids[count // 3 :].copy()

    run(*batch(50))  # compiles, on the main thread's full stack
    big = batch(40_000)
    threading.stack_size(1 << 20)
    answer = []
    worker = threading.Thread(target=lambda: answer.append(run(*big)))
    worker.start()
    worker.join()
    print(answer[0])
    """
)


def test_the_column_kernels_keep_their_stack_unoptimised(tmp_path: Path) -> None:
    source = str(Path(sparseset.__file__).resolve().parents[1])
    path = os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])
    env = {
        **os.environ,
        "NUMBA_OPT": "0",
        "NUMBA_CACHE_DIR": str(tmp_path),
        "PYTHONPATH": path,
    }
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert int(run.stdout.split()[-1]) > 20_000
