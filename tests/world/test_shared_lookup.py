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


@pytest.mark.parametrize("n", [50, 2 * config.PARALLEL_THRESHOLD + 5])
def test_index_is_each_handles_row_or_minus_one(n):
    w = World()
    w.register("hp", "i4")
    e = w.create(n)
    rng = np.random.default_rng(n)
    w.add("hp", e[rng.random(n) < 0.6])
    gone = e[rng.random(n) < 0.1]
    w.destroy(gone)
    never = np.array([2**40 + 3, (7 << 32) | 1, n + 5], np.int64)
    handles = np.concatenate([e, never])[rng.permutation(n + 3)]
    store = w["hp"]
    for threads in (2, 1):
        with kernel_threads(threads):
            rows = store.index(handles)
        has = store.contains(handles)
        assert ((rows >= 0) == has).all()
        assert np.array_equal(store.ids[rows[has]], handles[has])
    assert store.index(int(handles[np.flatnonzero(has)[0]])) >= 0
    assert store.index(int(gone[0])) == -1 if len(gone) else True
    with pytest.raises(ValueError, match="negative"):
        store.index([3, -1])
