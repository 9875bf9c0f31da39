"""ShardedSet's remove, ^, ==, <=, isdisjoint against Python sets, on the
folder's LocalCluster and on dask's synchronous scheduler
(docs/contract.md#shardedset); unique's order, as documented; warm().

Python ``set`` gives every expected answer. Comparisons answer a bool
(computed when called); ``remove`` returns a new lazy set that raises
``KeyError`` naming an absent id when it is computed.
"""

import dask
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparseset import SparseSet
from sparseset.distributed import ShardedSet, first_seen, unique
from sparseset.distributed.inputs import active_client

CASES = [("hash", "hash"), ("range", "flat"), ("range", "paged")]


def members(s):
    return set(s.ids().compute().tolist())


@pytest.fixture(params=["cluster", "sync"])
def scheduler(request, client):
    """Each test once on the cluster, once on the synchronous scheduler."""
    if request.param == "cluster":
        yield request.param
    else:
        with dask.config.set(scheduler="sync"):
            assert active_client() is None
            yield request.param


@pytest.mark.parametrize(("by", "index"), CASES)
def test_parity_matches_python_sets(scheduler, by, index):
    rng = np.random.default_rng(11)
    a_ids, b_ids = rng.integers(0, 900, 700), rng.integers(600, 1_500, 700)
    space = {"space": 1_500} if by == "range" else {}
    a = ShardedSet(a_ids, shards=3, by=by, index=index, **space).persist()
    b = ShardedSet(b_ids, layout=a.layout).persist()
    sa, sb = set(a_ids.tolist()), set(b_ids.tolist())
    assert members(a ^ b) == members(a.symmetric_difference(b_ids)) == sa ^ sb
    assert (a ^ b).kind == index
    low = ShardedSet(sorted(sa)[:50], layout=a.layout)
    assert low <= a and low.issubset(a) and low.issubset(a_ids)
    assert not a <= low and not a.issubset(b)
    assert a >= low and a.issuperset(sorted(sa)[:50]) and not low >= a
    assert not a.isdisjoint(b) and not a.isdisjoint(b_ids)
    apart = ShardedSet(np.arange(2_000, 2_100), layout=a.layout)
    assert a.isdisjoint(apart) and a.isdisjoint([5_000])
    assert a == ShardedSet(a_ids[::-1], layout=a.layout) and a == a
    assert (a != ShardedSet(a_ids, layout=a.layout)) is False
    assert a != b and a != low
    assert a == sa and a == frozenset(sa) and a == SparseSet.from_ids(a_ids)
    assert a != sa | {10_000} and a != {*sa, "x"} and a != {-1}
    assert (a == [1, 2]) is False  # a list is no set, as for set
    gone = a_ids[:200]
    assert members(a.remove(gone)) == sa - set(gone.tolist())
    assert members(a) == sa  # a new set; this one stays


def test_remove_raises_key_error_naming_the_absent_id_when_computed(client):
    a = ShardedSet([1, 5, 9], shards=2, by="range", space=10)
    removed = a.remove([5, 5, 9])  # repeated ids count once
    assert members(removed) == {1}
    lazy = a.remove([1, 7])  # nothing raises until it is computed
    with pytest.raises(KeyError, match="7 is not a member"):
        len(lazy)
    with pytest.raises(KeyError, match="7 is not a member"):
        lazy.compute()
    assert members(a) == {1, 5, 9}
    with pytest.raises(ValueError, match=r"ids\[1\] = -2"):
        a.remove([1, -2])  # negative: now, as SparseSet.remove
    with pytest.raises(TypeError):
        a.remove([1.5])


def test_combining_different_layouts_raises_naming_both(client):
    a = ShardedSet([1, 2], shards=2, by="range", space=10)
    b = ShardedSet([1], shards=3)
    for call in (a.__xor__, a.issubset, a.isdisjoint, a.__eq__):
        with pytest.raises(ValueError) as error:
            call(b)
        assert str(a.layout) in str(error.value) and str(b.layout) in str(error.value)
    with pytest.raises(TypeError):
        a <= [1, 2]  # noqa: B015  (an operator takes sets only, as for set)
    with pytest.raises(ValueError, match="ids must be non-negative"):
        a ^ [-1]  # an operand that needs new members raises


@given(
    a=st.lists(st.integers(0, 200), max_size=40),
    b=st.lists(st.integers(0, 200), max_size=40),
    shards=st.integers(1, 4),
)
@settings(max_examples=min(10, settings().max_examples))
def test_random_parity_on_the_synchronous_scheduler(client, a, b, shards):
    with dask.config.set(scheduler="sync"):
        x = ShardedSet(a, shards=shards)
        y = ShardedSet(b, layout=x.layout)
        sa, sb = set(a), set(b)
        assert members(x ^ y) == sa ^ sb
        assert (x == y) == (sa == sb)
        assert (x <= y) == (sa <= sb)
        assert x.isdisjoint(y) == sa.isdisjoint(sb)
        if sb <= sa:
            assert members(x.remove(b)) == sa - sb
        else:
            with pytest.raises(KeyError):
                len(x.remove(b))


# -- unique's order, as documented ---------------------------------------------


def test_unique_is_first_seen_within_each_shard_and_first_seen_gives_input_order(
    client,
):
    rng = np.random.default_rng(12)
    ids = rng.integers(0, 3_000, 5_000)
    distinct = unique(ids, shards=3)
    blocks = [distinct.blocks[k].compute() for k in range(3)]
    layout_shard = ShardedSet([], shards=3).layout.shard_of
    # Each block is one shard's ids, in the order of their first occurrence.
    for k, block in enumerate(blocks):
        mine = ids[layout_shard(ids) == k]
        assert block.tolist() == pd.unique(mine).tolist()
    # Not the input's order across shards; ids[first_seen(ids)] is.
    assert ids[first_seen(ids, shards=3).compute()].tolist() == pd.unique(ids).tolist()


# -- clusters ------------------------------------------------------------------


def test_every_worker_has_the_warm_plugin_and_kernels_loaded(client):
    from sparseset.distributed import warm

    def plugins(dask_worker):
        return sorted(dask_worker.plugins)

    assert all(
        "sparseset-warm-kernels" in names for names in client.run(plugins).values()
    )
    answers = warm(client)  # again: harmless, answers every worker
    assert set(answers) == set(client.scheduler_info()["workers"])
    assert all(answer["status"] == "OK" for answer in answers.values())


def test_large_in_memory_ids_are_scattered_not_sent_in_the_graph(client, monkeypatch):
    import warnings

    from sparseset.distributed import inputs

    ids = np.arange(2_000_000, dtype=np.int64)[::-1].copy()  # 16 MB

    def build_and_count():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = ShardedSet(ids, shards=2)
            assert len(s) == ids.shape[0]
        return [w for w in caught if "large graph" in str(w.message)]

    assert build_and_count() == []
    # The same ids in the graph: dask warns (so the check above can fail).
    monkeypatch.setattr(inputs, "SCATTER_BYTES", 1 << 62)
    assert build_and_count() != []
    # Without a client (the synchronous scheduler), ids ride in the graph.
    monkeypatch.undo()
    with dask.config.set(scheduler="sync"):
        small = ShardedSet(ids, shards=2)
        assert active_client() is None and len(small) == ids.shape[0]
