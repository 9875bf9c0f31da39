"""Batch lookups shared out over threads (sparseset.sets.pool)."""

import itertools
import threading
import time

import numpy as np
import pytest

from sparseset import SparseSet, config
from sparseset.sets import pool


@pytest.fixture
def four_threads(monkeypatch):
    """Share batches over four threads, whatever numba's setting; start and
    end with sharing allowed."""
    monkeypatch.setattr(pool, "lookup_threads", lambda: 4)
    monkeypatch.setattr(pool, "_serial_until", 0.0)


@pytest.mark.parametrize("count", [1, 2, 31, 32, 33, 1000, 100_003])
def test_spans_cover_the_batch_once(four_threads, count):
    spans = []
    answer = pool.share_out(count, lambda a, b: spans.append((a, b)) or a == 0)
    assert answer is True
    covered = sorted(spans)
    assert covered[0][0] == 0 and covered[-1][1] == count
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(covered))
    assert len(spans) <= 4 * pool.SPANS_PER_THREAD


def test_spans_run_on_several_threads(four_threads):
    names = set()

    def work(a, b):
        names.add(threading.current_thread().name)
        time.sleep(0.002)  # releases the GIL, as the kernels do
        return False

    assert pool.share_out(1000, work) is False
    assert len(names) >= 2


def test_an_error_in_a_span_reaches_the_caller(four_threads):
    def work(a, b):
        if a > 0:
            raise ZeroDivisionError(a)
        return False

    with pytest.raises(ZeroDivisionError):
        pool.share_out(1000, work)


def test_a_stalled_helper_makes_batches_run_alone_for_a_while(four_threads):
    """A caller left waiting for a helper's span (a thread the OS took off
    its core, simulated by a sleep) stops sharing for BACKOFF_SECONDS."""
    count = 4 * config.PARALLEL_THRESHOLD
    caller = threading.current_thread()

    def work(a, b):
        # Spans release the GIL, as the kernels do; a helper's takes long.
        time.sleep(0.001 if threading.current_thread() is caller else 0.05)
        return False

    assert pool.shared(count)
    for _ in range(20):  # until a helper claims a span before the caller ends
        pool.share_out(count, work)
        if not pool.shared(count):
            break
    assert not pool.shared(count)
    assert pool._serial_until > time.monotonic()


def test_small_batches_and_one_thread_are_not_shared(monkeypatch):
    monkeypatch.setattr(pool, "_serial_until", 0.0)
    assert not pool.shared(config.PARALLEL_THRESHOLD - 1)
    monkeypatch.setattr(pool, "lookup_threads", lambda: 1)
    assert not pool.shared(10 * config.PARALLEL_THRESHOLD)


def test_public_lookups_through_the_pool_answer_as_one_thread(four_threads):
    rng = np.random.default_rng(4)
    s = SparseSet.from_ids(rng.integers(0, 10**6, 200_000))
    q = rng.integers(0, 10**6, 2 * config.PARALLEL_THRESHOLD + 7)
    want = np.isin(q, s.ids)
    np.testing.assert_array_equal(s.contains(q), want)
    idx = s.index(q)
    np.testing.assert_array_equal(s.ids[idx[want]], q[want])
    assert (idx[~want] == -1).all()
    with pytest.raises(ValueError, match="non-negative"):
        s.contains(np.concatenate([q, [-5]]))


@pytest.mark.parametrize("holes", [0, 1, 5_000])
def test_a_view_joined_through_the_pool_matches_one_thread(four_threads, holes):
    from sparseset import World

    rng = np.random.default_rng(holes)
    n = 2 * config.PARALLEL_THRESHOLD + 11
    w = World()
    w.register("a", "i8")
    w.register("b", "i8")
    e = w.create(n)
    w.add("a", rng.permutation(e), a=np.arange(n))
    w.add("b", rng.permutation(e), b=np.arange(n))
    # Entities missing from either store: the probe of the larger store
    # misses some keys, leaving gaps in some spans.
    gone = rng.choice(e, 2 * holes, replace=False)
    w.discard("a", gone[:holes])
    w.discard("b", gone[holes:])
    view = w.view("a", "b")
    a_rows, b_rows = view.rows("a"), view.rows("b")
    ids = view.ids

    want = w["a"].ids[np.isin(w["a"].ids, w["b"].ids)]  # "a"'s order: smallest
    if len(w["b"]) < len(w["a"]):
        want = w["b"].ids[np.isin(w["b"].ids, w["a"].ids)]
    np.testing.assert_array_equal(ids, want)
    np.testing.assert_array_equal(w["a"].ids[a_rows], ids)
    np.testing.assert_array_equal(w["b"].ids[b_rows], ids)
