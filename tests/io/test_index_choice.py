"""Which index kind a table reader picks when ``index=`` is not given
(issue 28, item 2).

``choose_kind`` is the one rule: ``flat`` if the largest id is below
``2**16`` or below 8 times the number of ids (and below ``2**31``); else
``paged`` if every id is below ``2**48`` and ``max - min + 1`` is at most
8 times their number; else ``hash``. Here: each case of the rule and its
boundaries, every reader (``ComponentStore.from_arrow``/``from_pandas``/
``read_parquet``, ``SparseMap.from_arrow``/``from_pandas``) taking it,
a Parquet file pandas wrote with ids up to 2**40, an explicit ``index=``
and a kind the table recorded winning over it, and memory staying small
for a few ids near 2**30.
"""

import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sparseset import ComponentStore, FormatError, SparseMap
from sparseset.sets.index_kinds import FLAT_ALWAYS, SPAN_PER_ID, choose_kind

NEAR_2_30 = 2**30 + np.array([0, 3, 17, 29], np.int64)
WIDE = np.random.default_rng(28).integers(0, 2**40, 5000, dtype=np.int64)


@pytest.mark.parametrize(
    ("ids", "kind"),
    [
        ([], "flat"),
        (np.arange(1000), "flat"),
        ([3, FLAT_ALWAYS - 1], "flat"),  # below 2**16: flat however few
        ([3, FLAT_ALWAYS], "hash"),  # two ids spanning 65534: neither spans
        (np.arange(0, 8 * 1000, 8), "flat"),  # largest 7992 < 8 * 1000
        (np.arange(100_000) * 8, "flat"),  # largest 799992 < 800000
        (np.arange(100_000) * 8 + 8, "paged"),  # largest 800000: not flat
        (NEAR_2_30, "paged"),  # span 30 <= 8 * 4
        (2**30 + np.array([0, 10**6]), "hash"),
        (2**31 - 50 + np.arange(100), "paged"),  # dense, but past flat's range
        (2**40 + np.arange(0, 80_000, 8), "paged"),  # span 79993 < 80000
        (2**40 + np.arange(0, 80_000, 9), "hash"),  # one in 9: too sparse
        (WIDE, "hash"),
        (2**48 - 10 + np.arange(10), "paged"),  # the last ids paged takes
        (2**48 - 5 + np.arange(10), "hash"),  # past 2**48: hash, dense or not
        (np.array([2**62, 2**62 + 1]), "hash"),
    ],
)
def test_the_rule_case_by_case(ids, kind):
    assert choose_kind(ids) == kind
    # The chosen kind takes the ids (the rule never picks one that refuses).
    store = ComponentStore.from_arrow(pa.table({"id": pa.array(ids, pa.int64())}))
    assert store.kind == kind
    assert sorted(store.ids.tolist()) == sorted(set(np.asarray(ids).tolist()))


def test_the_rule_is_stated_once_with_its_constants():
    assert (SPAN_PER_ID, FLAT_ALWAYS) == (8, 2**16)
    # Duplicates count as ids, and input may be any id batch.
    assert choose_kind([70_000] * 8751) == "flat"  # 70000 < 8 * 8751
    assert choose_kind([70_000] * 8750) == "paged"  # span 1
    assert choose_kind(pa.chunked_array([[2**40, 2**40 + 1], [2**40 + 2]])) == "paged"
    assert choose_kind(pd.Index([2**40, 2**41])) == "hash"
    # Ids no kind takes get a kind whose add then says why.
    with pytest.raises(ValueError, match="ids\\[0\\] = -1"):
        ComponentStore.from_arrow(pa.table({"id": [-1, 5]}))
    with pytest.raises(ValueError, match="2\\*\\*63"):
        ComponentStore.from_arrow(pa.table({"id": pa.array([2**63], pa.uint64())}))


READERS = {
    "store.from_arrow": lambda ids, **kw: ComponentStore.from_arrow(
        pa.table({"id": ids, "v": np.arange(len(ids), dtype="f8")}), **kw
    ),
    "store.from_pandas": lambda ids, **kw: ComponentStore.from_pandas(
        pd.DataFrame({"v": np.arange(len(ids), dtype="f8")}, index=ids), **kw
    ),
    "store.from_pandas(id=)": lambda ids, **kw: ComponentStore.from_pandas(
        pd.DataFrame({"user": ids, "v": np.arange(len(ids), dtype="f8")}),
        id="user",
        **kw,
    ),
    "map.from_arrow": lambda ids, **kw: SparseMap.from_arrow(
        pa.table({"id": ids, "v": np.arange(len(ids), dtype="f8")}), **kw
    ),
    "map.from_pandas": lambda ids, **kw: SparseMap.from_pandas(
        pd.DataFrame({"v": np.arange(len(ids), dtype="f8")}, index=ids), **kw
    ),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("ids", "kind"),
    [(np.arange(50), "flat"), (NEAR_2_30, "paged"), (WIDE, "hash")],
)
def test_every_reader_takes_the_rule(reader, ids, kind):
    out = READERS[reader](ids)
    assert out.kind == kind
    values = out["v"] if isinstance(out, ComponentStore) else out.data
    assert dict(zip(out.ids.tolist(), values.tolist(), strict=True)) == dict(
        zip(ids.tolist(), np.arange(len(ids), dtype="f8").tolist(), strict=True)
    )


@pytest.mark.parametrize("reader", READERS)
def test_an_explicit_index_wins(reader):
    assert READERS[reader](np.arange(50), index="hash").kind == "hash"
    assert READERS[reader](NEAR_2_30, index="hash").kind == "hash"
    assert READERS[reader](WIDE, index="paged").kind == "paged"
    # An explicit kind that cannot take the ids raises as before.
    with pytest.raises(ValueError, match="index='paged'"):
        READERS[reader](WIDE, index="flat")


def test_a_recorded_kind_wins_over_the_rule(tmp_path):
    store = ComponentStore({"v": "f8"}, index="hash")
    store.add(np.arange(50), v=1.0)  # the rule would say flat
    assert ComponentStore.from_arrow(store.to_arrow()).kind == "hash"
    store.to_parquet(tmp_path / "s.parquet")
    assert ComponentStore.read_parquet(tmp_path / "s.parquet").kind == "hash"
    assert ComponentStore.read_parquet(tmp_path / "s.parquet", index="flat").kind == (
        "flat"
    )


def adapts(container):
    """Whether a store or map adapts: what its pickle says it was made as."""
    return container.__getstate__()["index"] == "auto"


@pytest.mark.parametrize("ids", [np.arange(50), WIDE], ids=["dense", "wide"])
def test_a_store_that_adapts_is_read_back_adapting(tmp_path, ids):
    """A user who never chose a kind gets an adapting store back from a
    table or file the default store wrote, not the kind it used then."""
    store = ComponentStore({"v": "f8"})  # index="auto"
    store.add(ids, v=1.0)
    assert store.to_arrow().schema.metadata[b"sparseset"] == b'{"index": "auto"}'
    path = tmp_path / "s.parquet"
    store.to_parquet(path)
    for out in (
        ComponentStore.from_arrow(store.to_arrow()),
        ComponentStore.read_parquet(path),
    ):
        assert adapts(out) and out.kind == store.kind
        assert out.ids.tolist() == store.ids.tolist()
        out.add([2**62], v=2.0)  # adapts on: takes any id
        assert out.kind == "hash"
    # An explicit index= still wins; a fixed store's kind is recorded.
    pinned = ComponentStore.read_parquet(path, index="hash")
    assert not adapts(pinned) and pinned.kind == "hash"
    counts = SparseMap("i8")
    counts.add_at(ids, 1)
    again = SparseMap.from_arrow(counts.to_arrow())
    assert again.kind == counts.kind and adapts(again.store)
    assert dict(again.items()) == dict(counts.items())


def test_a_parquet_file_pandas_wrote_with_ids_up_to_2_40(tmp_path):
    rng = np.random.default_rng(40)
    users = rng.integers(0, 2**40, 20_000, dtype=np.int64)
    users[0] = 2**40 - 1
    counts = rng.integers(0, 100, users.size).astype(np.int32)
    path = tmp_path / "events.parquet"
    pd.DataFrame({"user": users, "count": counts}).to_parquet(path)
    store = ComponentStore.read_parquet(path, id="user")
    assert store.kind == "hash"
    last = dict(zip(users.tolist(), counts.tolist(), strict=True))
    assert dict(zip(store.ids.tolist(), store["count"].tolist(), strict=True)) == last
    # A frame indexed by user: pandas writes the index as a column.
    path = tmp_path / "indexed.parquet"
    pd.DataFrame({"count": counts}, index=pd.Index(users, name="user")).to_parquet(path)
    assert ComponentStore.read_parquet(path, id="user").kind == "hash"
    # Dense ids past 2**31 page.
    dense = 2**40 + np.arange(20_000, dtype=np.int64)
    pd.DataFrame({"id": dense, "count": counts}).to_parquet(path)
    store = ComponentStore.read_parquet(path)
    assert store.kind == "paged"
    assert store.ids.tolist() == dense.tolist()
    # An explicit index still wins, and a wrong one is the file's fault.
    with pytest.raises(FormatError, match="index='paged'"):
        ComponentStore.read_parquet(path, index="flat")


@pytest.mark.parametrize("reader", READERS)
def test_a_few_ids_near_2_30_stay_small(reader):
    tracemalloc.start()
    try:
        out = READERS[reader](NEAR_2_30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.kind == "paged"
    assert out.nbytes < 100_000
    # A flat index there would be 4 GiB; nothing near it was allocated,
    # not even for a moment.
    assert peak < 20_000_000
