"""Big batches of handles are resolved in spans on several threads: the
answers, and the first dead handle an error names, are the one thread's."""

import numpy as np
import pytest

from sparseset import DeadHandleError, World, config
from sparseset.schedule.schedule import kernel_threads


@pytest.mark.parametrize("dead_at", [[], [5], [200_000, 7], [262_180]])
def test_a_shared_lookup_answers_as_one_thread(dead_at):
    w = World()
    w.register("hp", "i4")
    n = 2 * config.PARALLEL_THRESHOLD + 37
    e = w.create(n)
    w.add("hp", e[::2], hp=1)
    handles = e[np.random.default_rng(1).permutation(n)]
    w.destroy(handles[dead_at])
    answers = []
    for threads in (2, 1):
        with kernel_threads(threads):
            rows = w["hp"].index(handles)
            alive = w.alive(handles)
            try:
                w.destroy(handles)
            except DeadHandleError as error:
                message = str(error)
            else:
                message = ""
                w = None  # destroyed everything: nothing left to compare
                break
        answers.append((rows, alive, message))
    if not dead_at:
        assert w is None
        return
    (rows, alive, message), (rows1, alive1, message1) = answers
    assert np.array_equal(rows, rows1) and np.array_equal(alive, alive1)
    assert message == message1 and message.startswith(f"handles[{min(dead_at)}] = ")
    assert (rows[dead_at] == -1).all() and not alive[dead_at].any()
    assert alive.sum() == n - len(dead_at) and len(w) == n - len(dead_at)
