"""The sharded collections' default index, ``"auto"``: each shard adapts.

``ShardedSet`` and ``ShardedStore`` take ``index="auto"`` and default to it,
as every container does: each shard is a set or store whose index adapts
to the ids it holds (``kind`` of a shard says what it uses now), and what
is built from a shard (copies, algebra, joins, the gathered whole, a
loaded file) adapts too.
"""

import numpy as np
import pytest

from sparseset import ComponentStore, SparseSet
from sparseset.distributed import ShardedSet, ShardedStore
from sparseset.distributed.shards import build
from sparseset.distributed.store_shards import copy_store, join


def adapts(container):
    """Whether a set or store adapts: what its pickle says it was made as."""
    return container.__getstate__()["index"] == "auto"


def test_the_default_is_auto_and_takes_any_id(client):
    ids = np.array([5, 2**62, 7, 5, 2**40 + 3])
    s = ShardedSet(ids, shards=2).persist()
    assert s.kind == "auto" and "index='auto'" in repr(s)
    assert sorted(s.ids().compute().tolist()) == sorted(set(ids.tolist()))
    whole = s.compute()
    assert adapts(whole) and whole.kind == "hash"
    assert whole == SparseSet.from_ids(ids)
    store = ShardedStore({"n": "i8"}, shards=2)
    assert store.kind == "auto"
    counted = store.add_at(ids, n=1).persist()
    assert counted.kind == "auto"
    gathered = counted.compute()
    assert adapts(gathered)
    assert gathered.get(5)["n"].item() == 2
    with pytest.raises(ValueError, match="non-negative"):
        ShardedSet([3, -1], shards=2)
    with pytest.raises(ValueError, match="'auto'"):
        ShardedSet([1], index="tree")


def test_each_shard_picks_its_kind_from_its_ids():
    dense = [np.arange(0, 5_000, 2)]
    scattered = [np.random.default_rng(3).integers(0, 2**40, 3_000)]
    flat, wide = build("auto", None, dense), build("auto", None, scattered)
    assert adapts(flat) and flat.kind == "flat"
    assert adapts(wide) and wide.kind == "hash"
    assert len(wide) == np.unique(scattered[0]).shape[0]


def test_algebra_files_and_joins_keep_adapting(client, tmp_path):
    rng = np.random.default_rng(4)
    a_ids, b_ids = rng.integers(0, 2**40, 2_000), rng.integers(0, 3_000, 2_000)
    a = ShardedSet(a_ids, shards=2).persist()
    b = ShardedSet(b_ids, layout=a.layout).persist()
    union = (a | b).persist()
    assert union.kind == "auto" and adapts(union.compute())
    assert union.compute() == SparseSet.from_ids(np.concatenate([a_ids, b_ids]))
    a.save(tmp_path / "a")
    loaded = ShardedSet.load(tmp_path / "a")
    assert loaded.kind == "auto" and loaded.compute() == a.compute()
    assert adapts(loaded.compute())
    hp = ShardedStore.from_arrays(b_ids, hp=1, layout=a.layout).persist()
    pos = ShardedStore.from_arrays(b_ids, pos=2.0, layout=a.layout).persist()
    both = hp.join(pos).persist()
    assert both.kind == "auto" and adapts(both.compute())
    hp.save(tmp_path / "hp")
    assert ShardedStore.load(tmp_path / "hp").kind == "auto"


def test_shard_copies_and_joins_keep_adapting():
    store = ComponentStore({"n": "i8"})
    store.add([3, 2**50], n=[1, 2])
    assert store.kind == "hash"
    copied = copy_store(store)
    assert adapts(copied) and copied.ids.tolist() == [3, 2**50]
    assert copied["n"].tolist() == [1, 2]
    copied.add([9], n=3)
    assert len(store) == 2
    other = ComponentStore({"x": "f8"})
    other.add([2**50], x=0.5)
    joined = join(store, other, 0)
    assert adapts(joined) and joined.ids.tolist() == [2**50]
    pinned = join(store, other, 0, "hash")
    assert not adapts(pinned) and pinned.kind == "hash"
