"""ShardedSet, unique and first_seen on a real dask cluster: ``sparseset.distributed``.

One ``distributed.LocalCluster`` of two worker processes (one thread
each) serves every module of this folder (``conftest.py``); its workers
load the numba kernels once, in the fixture. Every operation is checked
against numpy or a Python ``set`` on the same ids, for hash and range
layouts and every index kind, with empty shards, ids at each kind's
limit, dask arrays, dask Series and Parquet input. Bad in-memory input
raises the same errors as ``SparseSet``, when the call is made (no task
exists yet); bad ids inside a dask array raise when computed, naming
their position. The last test kills a worker in the middle of a
``contains`` and checks that the answer is still exact.
"""

import os
import signal
import subprocess
import sys
import time
import uuid

import cloudpickle
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Event, wait
from hypothesis import given, settings
from hypothesis import strategies as st

from sparseset import FormatError, SparseSet
from sparseset.distributed import ShardedSet, first_seen, unique

# The gate of the worker-loss test runs on the workers, which cannot
# import this module by name.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: (layout, index kind) pairs: every kind, under the layout that suits it.
CASES = [("hash", "hash"), ("range", "flat"), ("range", "paged"), ("hash", "flat")]
LIMITS = {"flat": 2**31, "paged": 2**48, "hash": 2**63}


def dask_ids(values, blocks=3):
    """``values`` as a dask array of about ``blocks`` blocks."""
    values = np.asarray(values) if len(values) else np.empty(0, np.int64)
    return da.from_array(values, chunks=max(1, -(-len(values) // blocks)))


def check_members(s, expected):
    """``s`` holds exactly ``expected``, and its queries agree."""
    expected = set(expected)
    ids = s.ids().compute()
    assert sorted(ids.tolist()) == sorted(expected)
    assert len(s) == len(expected) == len(ids)
    assert s.shard_lengths().sum() == len(expected)
    if expected:
        probe = np.array(sorted(expected), np.int64)
        assert s.contains(probe).compute().all()
        positions = s.index(probe).compute()
        assert (ids[positions] == probe).all()


# -- import hygiene ------------------------------------------------------------


def test_importing_sparseset_does_not_import_dask():
    code = (
        "import sys, sparseset\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('dask', 'distributed')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_dask_raises_one_import_error_naming_the_extra():
    code = (
        "import sys\n"
        "sys.modules['dask'] = None\n"
        "try:\n"
        "    import sparseset.distributed\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip().endswith('pip install "sparseset[distributed]"'), out
    assert len(out.strip().splitlines()) == 1


# -- build and query -----------------------------------------------------------


@pytest.mark.parametrize(("by", "index"), CASES)
def test_queries_match_numpy(client, by, index):
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 6_000, 5_000)
    queries = rng.integers(0, 7_000, 3_000)
    s = ShardedSet(dask_ids(ids, 4), shards=3, by=by, index=index).persist()
    check_members(s, ids.tolist())
    q = dask_ids(queries, 5)
    found = s.contains(q)
    assert found.chunks == q.chunks and found.dtype == np.bool_
    assert (found.compute() == np.isin(queries, ids)).all()
    positions = s.index(q)
    assert positions.chunks == q.chunks
    positions = positions.compute()
    members = s.ids().compute()
    hit = positions >= 0
    assert (hit == np.isin(queries, ids)).all()
    assert (members[positions[hit]] == queries[hit]).all()
    # The whole set, gathered on purpose, is the single-machine set.
    whole = s.compute()
    assert isinstance(whole, SparseSet) and whole.kind == index
    assert whole == SparseSet.from_ids(ids)


@pytest.mark.parametrize("by", ["hash", "range"])
def test_numpy_and_list_queries_and_one_id(client, by):
    s = ShardedSet([4, 9, 2**20], shards=2, by=by).persist()
    assert s.contains(np.array([9, 5], np.uint16)).compute().tolist() == [True, False]
    assert s.contains([2**20, 2**62]).compute().tolist() == [True, False]
    one = s.contains(9)
    assert one.shape == () and bool(one.compute()) is True
    assert int(s.index(np.int8(5)).compute()) == -1


@given(
    ids=st.lists(st.integers(0, 300), max_size=60),
    queries=st.lists(st.integers(0, 400), max_size=40),
    shards=st.integers(1, 5),
    blocks=st.integers(1, 4),
    case=st.sampled_from(CASES),
)
@settings(max_examples=min(8, settings().max_examples))
def test_random_sets_match_python_sets(client, ids, queries, shards, blocks, case):
    by, index = case
    s = ShardedSet(dask_ids(ids, blocks), shards=shards, by=by, index=index)
    q = np.array(queries, np.int64)
    assert s.contains(dask_ids(q, blocks)).compute().tolist() == [
        x in set(ids) for x in queries
    ]
    mask = first_seen(dask_ids(ids, blocks), shards=shards, by=by).compute()
    seen = set()
    expected = []
    for x in ids:
        expected.append(x not in seen)
        seen.add(x)
    assert mask.tolist() == expected


def test_empty_shards_and_empty_sets(client):
    # A range layout over [0, 800) in 8 shards, ids in two of them.
    s = ShardedSet([1, 5, 790], shards=8, by="range", space=800).persist()
    assert s.shard_lengths().tolist() == [2, 0, 0, 0, 0, 0, 0, 1]
    check_members(s, {1, 5, 790})
    assert s.contains([300, 5]).compute().tolist() == [False, True]
    empty = ShardedSet([], shards=3).persist()
    check_members(empty, set())
    assert empty.contains([0, 1]).compute().tolist() == [False, False]
    assert empty.index(np.empty(0, np.int64)).compute().shape == (0,)
    check_members(empty.add([7, 7]), {7})
    check_members(s.intersection(ShardedSet([2], layout=s.layout)), set())
    # Empty blocks in a dask array are split like any other.
    ids = da.from_array(np.array([3, 1, 4, 1, 5]), chunks=((2, 0, 3, 0),))
    check_members(ShardedSet(ids, shards=3), {1, 3, 4, 5})
    assert s.contains(ids).compute().tolist() == [False, True, False, True, True]


@pytest.mark.parametrize("index", ["flat", "paged", "hash"])
@pytest.mark.parametrize("by", ["hash", "range"])
def test_ids_at_each_kinds_limit(client, by, index):
    top = LIMITS[index] - 1
    ids = np.array([0, top, top - 1, 12345], np.int64)
    s = ShardedSet(ids, shards=3, by=by, index=index).persist()
    check_members(s, ids.tolist())
    probe = np.array([top, top - 2], np.int64)
    assert s.contains(probe).compute().tolist() == [True, False]
    # Past the range: absent for queries, refused by add, as SparseSet does.
    past = np.array([top + 1, 2**63 - 1 if index != "hash" else 5], np.uint64)
    assert s.contains(past).compute()[0] == np.False_
    with pytest.raises(ValueError) as expected:
        SparseSet(index=index).add([5, top + 1])
    with pytest.raises(ValueError) as got:
        s.add([5, top + 1])
    assert str(got.value) == str(expected.value)
    # Inside a dask array, when computed, with the same message.
    with pytest.raises(ValueError, match=r"ids\[1\] = .* is outside the"):
        len(s.add(da.from_array(np.array([5, top + 1], np.uint64), chunks=1)))


# -- new sets ------------------------------------------------------------------


@pytest.mark.parametrize(("by", "index"), CASES[:2])
def test_add_and_discard_return_new_sets(client, by, index):
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 3_000, 2_000)
    more = rng.integers(0, 4_000, 1_500)
    gone = rng.integers(0, 4_000, 1_500)
    space = {"space": 4_000} if by == "range" else {}
    s = ShardedSet(ids, shards=3, by=by, index=index, **space).persist()
    t = s.add(dask_ids(more)).persist()
    u = t.discard(dask_ids(gone)).persist()
    check_members(s, ids.tolist())
    check_members(t, set(ids.tolist()) | set(more.tolist()))
    check_members(u, (set(ids.tolist()) | set(more.tolist())) - set(gone.tolist()))
    assert s.layout == t.layout == u.layout


@pytest.mark.parametrize(("by", "index"), CASES)
def test_algebra_matches_python_sets_shard_by_shard(client, by, index):
    rng = np.random.default_rng(3)
    a_ids, b_ids = rng.integers(0, 2_000, 1_500), rng.integers(1_000, 3_000, 1_500)
    space = {"space": 3_000} if by == "range" else {}
    a = ShardedSet(a_ids, shards=4, by=by, index=index, **space).persist()
    b = ShardedSet(b_ids, index="hash", layout=a.layout).persist()
    sa, sb = set(a_ids.tolist()), set(b_ids.tolist())
    for result, expected in [
        (a.union(b), sa | sb),
        (a | b, sa | sb),
        (a.intersection(b), sa & sb),
        (a & b, sa & sb),
        (a.difference(b), sa - sb),
        (a - b, sa - sb),
        (b - a, sb - sa),
        (a.union(b_ids), sa | sb),
    ]:
        check_members(result, expected)
    # The result takes the left operand's kind.
    assert (a | b).kind == index and (b - a).kind == "hash"
    # No shuffle: each result shard is built from the same shard of each.
    graph = a.union(b).__dask_graph__()
    name = a.union(b).name
    for k in range(4):
        deps = graph.layers[name].get_dependencies((name, k), graph)
        assert set(deps) == {(a.name, k), (b.name, k)}


def test_different_layouts_raise_naming_both(client):
    a = ShardedSet([1, 2], shards=2, by="range", space=10)
    for b in (
        ShardedSet([1], shards=3, by="range", space=10),
        ShardedSet([1], shards=2, by="range", space=20),
        ShardedSet([1], shards=2, by="hash"),
    ):
        with pytest.raises(ValueError) as error:
            a.union(b)
        assert str(a.layout) in str(error.value) and str(b.layout) in str(error.value)


# -- bad input -----------------------------------------------------------------

BAD = [
    np.array([1.0, 2.0]),
    np.array([True, False]),
    [1, -3],
    np.array([2, -1], np.int32),
    [1, "x"],
    np.arange(4).reshape(2, 2),
    "12",
    [1, 2.5],
]


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_bad_in_memory_ids_raise_as_sparse_set_does_before_any_task(client, bad):
    s = ShardedSet([1, 2], shards=2)
    with pytest.raises((TypeError, ValueError)) as expected:
        SparseSet().add(bad)
    for call in (
        s.add,
        s.discard,
        s.contains,
        s.index,
        lambda ids: ShardedSet(ids, shards=2),
        unique,
        first_seen,
    ):
        with pytest.raises(expected.type) as got:
            call(bad)  # raises here: nothing lazy comes back
        assert str(got.value) == str(expected.value)


def test_bad_dask_inputs(client):
    s = ShardedSet([1, 2], shards=2)
    with pytest.raises(TypeError, match="float64"):
        s.contains(da.from_array(np.array([1.0])))
    with pytest.raises(TypeError, match="not bool"):
        s.add(da.from_array(np.array([True])))
    with pytest.raises(ValueError, match="1-D"):
        s.contains(da.zeros((2, 2), dtype=np.int64, chunks=1))
    with pytest.raises(TypeError, match="Series of dtype"):
        s.contains(dd.from_pandas(pd.Series([1.5, 2.0]), npartitions=1))
    with pytest.raises(ValueError, match="by = 'tree'"):
        ShardedSet([1], by="tree")
    with pytest.raises(ValueError, match="index = 'tree'"):
        ShardedSet([1], index="tree")
    with pytest.raises(ValueError, match="not both"):
        ShardedSet([1], shards=2, layout=s.layout)
    with pytest.raises(TypeError, match="Layout"):
        ShardedSet([1], layout=(2, "hash"))
    # A negative id inside a dask array: found when its block is split,
    # named by its position in the whole array.
    ids = da.from_array(np.array([4, 5, 6, 7, -8, 9]), chunks=2)
    with pytest.raises(ValueError, match=r"ids must be non-negative: ids\[4\] = -8"):
        s.contains(ids).compute()
    with pytest.raises(ValueError, match=r"ids\[4\] = -8"):
        first_seen(ids, shards=2).compute()


# -- dask dataframes and Parquet ---------------------------------------------


def test_series_and_parquet_input(client, tmp_path):
    rng = np.random.default_rng(4)
    users = rng.integers(0, 5_000, 4_000)
    frame = pd.DataFrame({"user": users, "value": rng.random(4_000)})
    path = tmp_path / "events"
    dd.from_pandas(frame, npartitions=4).to_parquet(path)
    s = ShardedSet.read_parquet(path, column="user", shards=3).persist()
    check_members(s, users.tolist())
    column = dd.read_parquet(path)["user"]
    ranged = ShardedSet(column, shards=3, by="range", index="flat").persist()
    check_members(ranged, users.tolist())
    queries = dd.from_pandas(pd.Series(rng.integers(0, 6_000, 500)), npartitions=3)
    found = s.contains(queries)
    assert len(found.chunks[0]) == 3
    expected = np.isin(queries.compute().to_numpy(), users)
    assert (found.compute() == expected).all()
    mask = first_seen(column, shards=3).compute()
    _, first = np.unique(users, return_index=True)
    assert np.flatnonzero(mask).tolist() == sorted(first.tolist())
    with pytest.raises(TypeError, match="column must be a column name"):
        ShardedSet.read_parquet(path, column=["user"])


# -- streams -------------------------------------------------------------------


@pytest.mark.parametrize("by", ["hash", "range"])
def test_unique_and_first_seen_match_numpy(client, by):
    rng = np.random.default_rng(5)
    distinct = rng.permutation(100_000)[:3_000]
    ids = rng.choice(distinct, 6_000)  # about half repeats
    stream = dask_ids(ids, 5)
    found = unique(stream, shards=3, by=by).compute()
    assert np.array_equal(np.sort(found), np.unique(ids))
    mask = first_seen(stream, shards=3, by=by)
    assert mask.chunks == stream.chunks
    _, first = np.unique(ids, return_index=True)
    expected = np.zeros(len(ids), bool)
    expected[first] = True
    assert (mask.compute() == expected).all()
    assert np.array_equal(stream[mask].compute(), ids[np.sort(first)])


# -- files ---------------------------------------------------------------------


@pytest.mark.parametrize(("by", "index"), CASES[:2])
def test_save_and_load_round_trip(client, tmp_path, by, index):
    rng = np.random.default_rng(6)
    ids = rng.integers(0, 10_000, 3_000)
    s = ShardedSet(ids, shards=3, by=by, index=index).persist()
    s.save(tmp_path / "set")
    loaded = ShardedSet.load(str(tmp_path / "set"))
    assert loaded.layout == s.layout and loaded.kind == index
    check_members(loaded, ids.tolist())
    # Saving again over it replaces it whole and leaves no stale file.
    s.discard(ids[:100]).save(tmp_path / "set")
    files = sorted(os.listdir(tmp_path / "set"))
    assert len(files) == 4 and "manifest.npz" in files
    assert not [f for f in files if f.endswith(".tmp")]
    check_members(
        ShardedSet.load(tmp_path / "set"), set(ids.tolist()) - set(ids[:100].tolist())
    )


def test_load_rejects_broken_saves(client, tmp_path):
    s = ShardedSet(np.arange(100), shards=2, by="range", index="flat")
    s.save(tmp_path / "good")
    with pytest.raises(FileNotFoundError):
        ShardedSet.load(tmp_path / "missing")

    def broken(name, change):
        path = tmp_path / name
        s.save(path)
        shard_files = sorted(p for p in os.listdir(path) if p.startswith("shard-"))
        change(path, shard_files)
        return path

    def truncate(path, files):
        data = (path / files[1]).read_bytes()
        (path / files[1]).write_bytes(data[: len(data) // 2])

    def swap(path, files):
        first, second = path / files[0], path / files[1]
        a, b = first.read_bytes(), second.read_bytes()
        first.write_bytes(b)
        second.write_bytes(a)

    def remove(path, files):
        os.unlink(path / files[0])

    def bad_manifest(path, files):
        (path / "manifest.npz").write_bytes(b"not a zip file")

    with pytest.raises(FormatError):
        ShardedSet.load(broken("truncated", truncate))
    with pytest.raises(FormatError, match="is not shard"):
        ShardedSet.load(broken("swapped", swap))
    with pytest.raises(FileNotFoundError, match="shard 0"):
        ShardedSet.load(broken("removed", remove))
    with pytest.raises(FormatError):
        ShardedSet.load(broken("manifest", bad_manifest))


# -- faults --------------------------------------------------------------------


def gate(block, event_name):
    """Hold a block until the test opens the gate (or a minute passes)."""
    Event(event_name).wait(timeout=60)
    return block


def test_worker_lost_in_the_middle_of_contains_gives_the_exact_answer(client):
    rng = np.random.default_rng(7)
    ids = rng.integers(0, 50_000, 20_000)
    queries = rng.integers(0, 60_000, 8_000)
    s = ShardedSet(dask_ids(ids, 4), shards=4, by="hash").persist()
    wait(s)
    holders = client.who_has(s)
    victim = holders[(s.name, 0)][0]
    pids = client.run(os.getpid)

    event = Event(f"sparseset-gate-{uuid.uuid4().hex}")
    # meta given: dask would otherwise call gate on the client to infer it.
    gated = dask_ids(queries, 4).map_blocks(
        gate, event.name, meta=np.empty(0, queries.dtype)
    )
    future = client.compute(s.contains(gated))
    # The query's first tasks are running (held at the gate), the lookups
    # wait for them: kill the worker holding shard 0 now.
    deadline = time.monotonic() + 60
    while not any("gate" in str(k) for ks in client.processing().values() for k in ks):
        assert time.monotonic() < deadline, "the query never started"
        time.sleep(0.02)
    os.kill(pids[victim], signal.SIGKILL)
    while victim in client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, "the scheduler never noticed"
        time.sleep(0.02)
    event.set()
    found = future.result(timeout=120)
    assert (found == np.isin(queries, ids)).all()
    # The lost shards were rebuilt from their lineage, on a live worker.
    live = set(client.scheduler_info()["workers"])
    assert all(set(w) <= live and w for w in client.who_has(s).values())
    check_members(s, ids.tolist())


def test_the_configured_shards_are_the_default(monkeypatch):
    from sparseset import config
    from sparseset.distributed import sharded_set

    monkeypatch.setattr(config, "DISTRIBUTED_SHARDS", 0)
    automatic = sharded_set.default_shards()
    assert automatic >= 1
    monkeypatch.setattr(config, "DISTRIBUTED_SHARDS", automatic + 2)
    assert sharded_set.default_shards() == automatic + 2
    assert ShardedSet(np.array([1, 2, 3])).shards == automatic + 2
