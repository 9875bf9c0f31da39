"""Atomic calls on stores and maps: threads that switch every microsecond
(:mod:`stress`) end exactly as the serial run of the same work."""

import numpy as np
import pytest

from sparseset import ComponentStore, SparseMap
from stress import RUNS, run_threads

pytestmark = pytest.mark.boundscheck

KINDS = ["flat", "paged", "hash"]


def check_store(store):
    """Rows aligned with ids: every row holds its own id's values."""
    ids = store.ids
    assert ids.shape[0] == len(store) == len(set(ids.tolist()))
    assert store.index(ids).tolist() == list(range(len(store)))
    assert store["v"].tolist() == ids.tolist()
    assert store["w"].tolist() == (2 * ids).tolist()


@pytest.mark.parametrize("kind", KINDS)
def test_batch_adds_keep_every_row_with_its_id(kind):
    """4 threads x 500 batches of 20 ids of their own: 40,000 rows, each
    holding its own id's values (the issue's third row)."""
    workers, batches, size = 4, 500, 20
    for _ in range(RUNS):
        store = ComponentStore({"v": "i8", "w": "i8"}, index=kind)
        plans = [
            np.arange(w, workers * batches * size, workers).reshape(batches, size)
            for w in range(workers)
        ]

        def work(store, plan):
            def body():
                for ids in plan:
                    store.add(ids, v=ids, w=2 * ids)

            return body

        run_threads([work(store, plan) for plan in plans])
        assert len(store) == workers * batches * size
        check_store(store)


@pytest.mark.parametrize("kind", KINDS)
def test_adds_removals_sets_and_reads_on_disjoint_ids_match_the_serial_run(kind):
    workers = 4
    for run in range(RUNS):
        store = ComponentStore({"v": "i8", "w": "i8"}, index=kind)
        rng = np.random.default_rng(run)
        plans = [rng.integers(0, 5000, (150, 16)) * workers + w for w in range(workers)]
        wrong = []

        def work(store, plan, wrong):
            def body():
                kept = set()
                for i, ids in enumerate(plan):
                    store.add(ids, v=ids, w=2 * ids)
                    kept.update(ids.tolist())
                    gone = plan[i // 2][:8]
                    store.discard(gone)
                    kept.difference_update(gone.tolist())
                    x = int(ids[-1])
                    if x in kept:
                        store.set(x, w=2 * x)
                        row = store.get(x)
                        if (row["v"], row["w"]) != (x, 2 * x) or x not in store:
                            wrong.append(x)
                return kept

            return body

        kept = run_threads([work(store, plan, wrong) for plan in plans])
        assert wrong == []
        check_store(store)
        assert set(store.ids.tolist()) == set().union(*kept)


@pytest.mark.parametrize("kind", KINDS)
def test_one_id_sets_of_two_columns_are_never_read_half_written(kind):
    """One-id ``set`` of plain values (written under the guard by hand, not
    through exclusive()) changes both columns of a row at once: readers of
    the same rows, lock-free ``get`` included, never see one column new and
    the other old, while another thread adds and removes other ids (rows
    move, the store grows)."""
    for run in range(RUNS):
        store = ComponentStore({"v": "f8", "w": ("f8", 2)}, index=kind)
        watched = list(range(100, 120))
        store.add(watched, v=0.0, w=0.0)
        values = np.random.default_rng(run).uniform(0, 1, 3000).tolist()
        wrong = []

        def writer(store, watched, values):
            def body():
                for k, value in enumerate(values):
                    x = watched[k % len(watched)]
                    handle = np.int64(x) if k % 2 else x
                    store.set(handle, v=value, w=(value, value))

            return body

        def reader(store, watched, wrong):
            def body():
                for _ in range(150):
                    for x in watched:
                        row = store.get(x)
                        if not row["v"] == row["w"][0] == row["w"][1]:
                            wrong.append((x, row))

            return body

        def churn(store):
            def body():
                for k in range(300):
                    ids = np.arange(1000 + 16 * k, 1016 + 16 * k)
                    store.add(ids, v=1.0, w=1.0)
                    store.discard(ids[::2])

            return body

        run_threads(
            [
                writer(store, watched, values),
                reader(store, watched, wrong),
                churn(store),
            ]
        )
        assert wrong == []
        assert store.contains(watched).all()


@pytest.mark.parametrize("kind", KINDS)
def test_map_writes_and_reads_on_disjoint_keys_match_the_serial_run(kind):
    workers = 4
    for run in range(RUNS):
        m = SparseMap("i8", index=kind)
        rng = np.random.default_rng(run)
        plans = [
            (rng.integers(0, 4000, 600) * workers + w).tolist() for w in range(workers)
        ]
        wrong = []

        def work(m, plan, wrong):
            def body():
                kept = {}
                for i, k in enumerate(plan):
                    m[k] = 3 * k
                    kept[k] = 3 * k
                    if i % 3 == 2:
                        gone = plan[i - 1]
                        if m.pop(gone, None) != kept.pop(gone, None):
                            wrong.append(gone)
                    if k in kept and m[k] != 3 * k:
                        wrong.append(k)
                return kept

            return body

        kept = run_threads([work(m, plan, wrong) for plan in plans])
        assert wrong == []
        expected = {}
        for part in kept:
            expected.update(part)
        assert dict(m.items()) == expected


def test_overlapping_writers_keep_rows_aligned_and_end_in_a_serial_state():
    """Threads write the same ids (value = id * 10 + thread) and discard
    some: each row holds its own id's value, written by one of the threads
    whose last operation on that id was a write."""
    workers = 4
    for run in range(RUNS):
        store = ComponentStore({"v": "i8"})
        rng = np.random.default_rng(run)
        plans = [rng.integers(0, 2000, (150, 20)) for _ in range(workers)]

        def work(store, plan, t):
            def body():
                last = {}
                for i, ids in enumerate(plan):
                    if i % 4 == 3:
                        store.discard(ids)
                        last.update(dict.fromkeys(ids.tolist(), None))
                    else:
                        store.add(ids, v=ids * 10 + t)
                        last.update(dict.fromkeys(ids.tolist(), t))
                return last

            return body

        lasts = run_threads([work(store, plan, t) for t, plan in enumerate(plans)])
        ids, values = store.ids, store["v"]
        assert store.index(ids).tolist() == list(range(len(store)))
        assert (values // 10).tolist() == ids.tolist()
        for x, v in zip(ids.tolist(), values.tolist(), strict=True):
            assert any(last.get(x) == v % 10 for last in lasts), x
        for x in set().union(*lasts) - set(ids.tolist()):
            assert any(x in last and last[x] is None for last in lasts), x


def test_map_iteration_while_another_thread_writes_gives_a_snapshot():
    m = SparseMap("i8")
    m.update({k: k for k in range(500)})

    def write():
        for k in range(3000):
            m.pop(k % 500, None)
            m.discard(range(k % 7, 500, 7))
            m.update({j: j for j in range(500)})

    def iterate():
        for _ in range(100):
            items = list(m.items())
            assert all(k == v for k, v in items)
            assert len({k for k, _ in items}) == len(items)
            assert all(v in range(500) for v in m.values())

    run_threads([write, iterate])
