"""ShardedStore on the folder's LocalCluster against pandas
(docs/contract.md#shardedstore).

Every operation is checked against the pandas answer on the same rows:
building (``drop_duplicates(keep="last")``), ``add_at`` (``value_counts``
and ``groupby().sum()``), ``update``, ``get`` and ``contains`` (``loc``
and ``isin``), ``join`` (``merge``), ``to_dask_dataframe``, ``compute``
and ``save``/``load``; for hash and range layouts, numpy, list and dask
inputs. Bad input raises now for in-memory values (the store's own
errors) and when computed for dask ones, naming the value. The last test
kills a worker in the middle of an ``add_at`` and checks the exact counts.
"""

import os
import signal
import sys
import time
import uuid

import cloudpickle
import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Event, wait

from sparseset import ComponentStore, FormatError, UnknownColumnError
from sparseset.distributed import ShardedSet, ShardedStore

cloudpickle.register_pickle_by_value(sys.modules[__name__])

CASES = [("hash", "hash"), ("range", "flat")]


def options(by, index, space=10_000):
    return {"shards": 3, "by": by, "index": index} | (
        {"space": space} if by == "range" else {}
    )


def dask_ids(values, blocks=3):
    values = np.asarray(values)
    return da.from_array(values, chunks=max(1, -(-len(values) // blocks)))


def as_frame(store, columns):
    """A computed ComponentStore as a pandas frame indexed by id, sorted."""
    return pd.DataFrame(
        {name: store[name].tolist() for name in columns}, index=store.ids.tolist()
    ).sort_index()


@pytest.mark.parametrize(("by", "index"), CASES)
def test_build_get_contains_match_pandas(client, by, index):
    rng = np.random.default_rng(21)
    ids = rng.integers(0, 6_000, 4_000)
    hp = rng.integers(-100, 100, 4_000).astype(np.int32)
    pos = rng.random((4_000, 2))
    s = ShardedStore.from_arrays(
        dask_ids(ids, 4), hp=dask_ids(hp, 4), pos=pos, **options(by, index)
    ).persist()
    assert s.schema == {"hp": (np.dtype("i4"), ()), "pos": (np.dtype("f8"), (2,))}
    # A repeated id takes its last row, as ComponentStore.add and pandas.
    frame = pd.DataFrame({"id": ids, "hp": hp, "p0": pos[:, 0], "p1": pos[:, 1]})
    last = frame.drop_duplicates("id", keep="last").set_index("id").sort_index()
    assert len(s) == len(last) and sorted(s.ids().compute().tolist()) == list(
        last.index
    )
    queries = rng.choice(last.index.to_numpy(), 3_000)
    rows = s.get(dask_ids(queries, 5))
    assert rows["hp"].chunks == dask_ids(queries, 5).chunks
    assert rows["hp"].compute().tolist() == last.loc[queries, "hp"].tolist()
    got = rows["pos"].compute()
    assert np.array_equal(got, last.loc[queries, ["p0", "p1"]].to_numpy())
    one = s.get(int(queries[0]))
    assert one["pos"].shape == (2,)
    assert int(one["hp"].compute()) == last.loc[queries[0], "hp"]
    probe = rng.integers(0, 7_000, 2_000)
    assert (s.contains(probe).compute() == np.isin(probe, last.index.to_numpy())).all()
    whole = s.compute()
    assert isinstance(whole, ComponentStore) and whole.kind == index
    assert as_frame(whole, ["hp"])["hp"].tolist() == last["hp"].tolist()
    out = s.to_dask_dataframe(id="user")
    assert out.npartitions == 3
    computed = out.compute().sort_index()
    assert computed.index.name == "user" and list(computed.columns) == [
        "hp",
        "pos_0",
        "pos_1",
    ]
    assert computed["hp"].tolist() == last["hp"].tolist()
    assert np.allclose(computed["pos_1"], last["p1"])


@pytest.mark.parametrize(("by", "index"), CASES)
def test_add_at_counts_match_value_counts_and_groupby(client, by, index):
    rng = np.random.default_rng(22)
    events = rng.integers(0, 3_000, 20_000)
    spent = rng.random(20_000)
    empty = ShardedStore({"n": "i8", "spent": "f8"}, **options(by, index))
    counts = empty.add_at(dask_ids(events, 4), n=1, spent=dask_ids(spent, 4))
    counts = counts.persist()
    expected = pd.DataFrame({"id": events, "spent": spent}).groupby("id")
    totals = expected["spent"].sum()
    got = as_frame(counts.compute(), ["n", "spent"])
    assert got["n"].tolist() == expected.size().tolist()
    assert (
        got.index.tolist()
        == pd.Series(events).value_counts().sort_index().index.tolist()
    )
    assert np.allclose(got["spent"], totals)
    # More events, in memory this time, onto the counts: they accumulate.
    more = rng.integers(2_000, 4_000, 5_000)
    again = counts.add_at(more, n=np.full(5_000, 2, np.int16))
    both = pd.Series(np.concatenate([events, more, more])).value_counts()
    got = as_frame(again.compute(), ["n"])
    assert got["n"].tolist() == both.sort_index().tolist()
    assert len(counts) == len(expected)  # the old store stays as it was
    # The top counts, on the cluster.
    top = again.to_dask_dataframe().nlargest(5, "n").compute()
    assert top["n"].tolist() == both.nlargest(5).tolist()


def test_update_replaces_rows_and_zero_fills_new_ones(client):
    s = ShardedStore.from_arrays([1, 2, 3], hp=[10, 20, 30], mp=5, shards=2)
    t = s.update([3, 4, 3], hp=[31, 40, 33])  # the last value wins
    rows = t.get([1, 2, 3, 4])
    assert rows["hp"].compute().tolist() == [10, 20, 33, 40]
    assert rows["mp"].compute().tolist() == [5, 5, 5, 0]  # kept; zero on new
    assert s.get([3])["hp"].compute().tolist() == [30]
    u = t.update(np.array([4]), mp=7)
    assert u.get(4)["mp"].compute().item() == 7


def test_from_dask_dataframe_and_parquet_match_pandas(client, tmp_path):
    rng = np.random.default_rng(23)
    users = rng.integers(0, 2**40, 300)
    frame = pd.DataFrame(
        {
            "user": rng.choice(users, 3_000),
            "spent": rng.random(3_000),
            "items": rng.integers(0, 9, 3_000),
        }
    )
    path = tmp_path / "events"
    dd.from_pandas(frame, npartitions=4).to_parquet(path)
    events = dd.read_parquet(path)
    s = ShardedStore.from_dask_dataframe(events, id="user", shards=3).persist()
    last = frame.drop_duplicates("user", keep="last").set_index("user")
    assert s.columns == ("spent", "items") and len(s) == len(last)
    probe = last.index.to_numpy()[::7]
    assert s.get(probe)["items"].compute().tolist() == last.loc[probe, "items"].tolist()
    only = ShardedStore.read_parquet(path, id="user", schema={"items": "u1"}, shards=3)
    assert only.schema == {"items": (np.dtype("u1"), ())}
    assert (
        only.get(probe)["items"].compute().tolist() == last.loc[probe, "items"].tolist()
    )
    counts = ShardedStore({"n": "i8", "spent": "f8"}, layout=s.layout)
    counts = counts.add_at(events["user"], n=1, spent=events["spent"])
    by_user = frame.groupby("user")
    got = as_frame(counts.compute(), ["n", "spent"])
    assert got["n"].tolist() == by_user.size().tolist()
    assert np.allclose(got["spent"], by_user["spent"].sum())
    with pytest.raises(KeyError, match="'who' is not a column"):
        ShardedStore.from_dask_dataframe(events, id="who")


@pytest.mark.parametrize(("by", "index"), CASES)
def test_join_is_shard_by_shard_and_matches_merge(client, by, index):
    rng = np.random.default_rng(24)
    a_ids = rng.permutation(3_000)[:1_500]
    b_ids = rng.permutation(3_000)[:1_500]
    a = ShardedStore.from_arrays(a_ids, age=a_ids % 90, **options(by, index, 3_000))
    b = ShardedStore.from_arrays(b_ids, score=b_ids * 0.5, layout=a.layout)
    joined = a.join(b)
    expected = pd.merge(
        pd.DataFrame({"id": a_ids, "age": a_ids % 90}),
        pd.DataFrame({"id": b_ids, "score": b_ids * 0.5}),
        on="id",
    ).set_index("id")
    got = as_frame(joined.compute(), ["age", "score"])
    assert got.index.tolist() == sorted(expected.index.tolist())
    assert got["score"].tolist() == expected.sort_index()["score"].tolist()
    assert joined.kind == index and joined.columns == ("age", "score")
    graph = joined.__dask_graph__()
    for k in range(3):
        deps = graph.layers[joined.name].get_dependencies((joined.name, k), graph)
        assert set(deps) == {(a.name, k), (b.name, k)}
    other = ShardedStore.from_arrays([1], score=1.0, shards=2)
    with pytest.raises(ValueError) as error:
        a.join(other)
    assert str(a.layout) in str(error.value) and str(other.layout) in str(error.value)
    with pytest.raises(ValueError, match="column 'age'"):
        a.join(a)
    with pytest.raises(TypeError, match="ShardedStore"):
        a.join(ShardedSet([1], layout=a.layout))


def test_save_and_load_round_trip_and_reject_broken_saves(client, tmp_path):
    s = ShardedStore.from_arrays(
        np.arange(0, 300, 3), n=np.arange(100), pos=np.ones((100, 3)), shards=2
    )
    s.save(tmp_path / "store")
    loaded = ShardedStore.load(tmp_path / "store")
    assert loaded.layout == s.layout and loaded.schema == s.schema
    assert loaded.get([297, 3])["n"].compute().tolist() == [99, 1]
    assert np.array_equal(loaded.get([6])["pos"].compute(), np.ones((1, 3)))
    s.add_at([3], n=5).save(tmp_path / "store")  # replaces it whole
    files = sorted(os.listdir(tmp_path / "store"))
    assert len(files) == 3 and "manifest.npz" in files
    assert ShardedStore.load(tmp_path / "store").get(3)["n"].compute() == 6
    with pytest.raises(FileNotFoundError):
        ShardedStore.load(tmp_path / "missing")
    with pytest.raises(FormatError):  # a set's manifest is not a store's
        ShardedSet([1], shards=2).save(tmp_path / "set")
        ShardedStore.load(tmp_path / "set")
    shard = next(f for f in files if f.startswith("shard-00001"))
    path = tmp_path / "store" / shard
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError):
        ShardedStore.load(tmp_path / "store")
    os.unlink(path)
    with pytest.raises(FileNotFoundError, match="shard 1"):
        ShardedStore.load(tmp_path / "store")


def test_bad_input_raises_naming_the_value(client):
    s = ShardedStore({"n": "u1", "flag": "?"}, shards=2)
    with pytest.raises(UnknownColumnError, match="'hp' is not a column"):
        s.update([1], hp=2)
    with pytest.raises(TypeError, match="add_at adds numbers"):
        s.add_at([1], flag=True)
    # In-memory values: now, with the store's own errors.
    with pytest.raises(ValueError, match="300"):
        s.update([1, 2], n=[1, 300])
    with pytest.raises(TypeError, match="cannot cast"):
        s.update([1, 2], n=[1.5, 2.5])
    with pytest.raises(ValueError, match="do not broadcast"):
        s.update([1, 2, 3], n=[1, 2])
    with pytest.raises(ValueError, match=r"ids\[1\] = -4"):
        s.add_at([1, -4], n=1)
    with pytest.raises(TypeError):
        s.get([1.5])
    # Dask values: when computed, naming their block and the value.
    bad = da.from_array(np.array([1, 2, 3, 400]), chunks=2)
    lazy = s.update(da.arange(4, chunks=2), n=bad)
    with pytest.raises(ValueError, match=r"block 1 of the values.*400"):
        len(lazy)
    # A sum that overflows its column: when computed, naming the shard.
    counted = s.add_at([7] * 200, n=1)
    with pytest.raises(ValueError, match=r"shard \d.*the sum .* would be 400"):
        len(counted.add_at([7] * 200, n=1))
    with pytest.raises(KeyError, match="id 9 is not in the store"):
        counted.get([7, 9])["n"].compute()
    with pytest.raises(ValueError, match="space="):
        ShardedStore({"n": "i8"}, shards=2, by="range")
    with pytest.raises(ValueError, match="not both"):
        ShardedStore({"n": "i8"}, shards=2, layout=s.layout)
    with pytest.raises(ValueError, match="unknown"):
        ids = dd.from_pandas(pd.Series([1, 2, 3]), npartitions=2)
        s.update(ids, n=[1, 2, 3])


def test_on_the_synchronous_scheduler(client):
    with dask.config.set(scheduler="sync"):
        counts = ShardedStore({"n": "i8"}, shards=3).add_at(
            np.array([5, 1, 5, 5, 2**40]), n=1
        )
        assert counts.get([5, 1, 2**40])["n"].compute().tolist() == [3, 1, 1]
        assert counts.contains([1, 4]).compute().tolist() == [True, False]


# -- faults --------------------------------------------------------------------


def gate(block, event_name):
    """Hold a block until the test opens the gate (or a minute passes)."""
    Event(event_name).wait(timeout=60)
    return block


def test_worker_lost_in_the_middle_of_add_at_gives_the_exact_counts(client):
    rng = np.random.default_rng(25)
    first = rng.integers(0, 20_000, 30_000)
    later = rng.integers(0, 20_000, 30_000)
    counts = ShardedStore({"n": "i8"}, shards=4).add_at(dask_ids(first, 4), n=1)
    counts = counts.persist()
    wait(counts)
    victim = client.who_has(counts)[(counts.name, 0)][0]
    pids = client.run(os.getpid)
    event = Event(f"sparseset-gate-{uuid.uuid4().hex}")
    gated = dask_ids(later, 4).map_blocks(
        gate, event.name, meta=np.empty(0, later.dtype)
    )
    future = client.compute(counts.add_at(gated, n=1))
    deadline = time.monotonic() + 60
    while not any("gate" in str(k) for ks in client.processing().values() for k in ks):
        assert time.monotonic() < deadline, "the add_at never started"
        time.sleep(0.02)
    os.kill(pids[victim], signal.SIGKILL)
    while victim in client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, "the scheduler never noticed"
        time.sleep(0.02)
    event.set()
    whole = future.result(timeout=120)
    expected = pd.Series(np.concatenate([first, later])).value_counts().sort_index()
    assert as_frame(whole, ["n"])["n"].tolist() == expected.tolist()
