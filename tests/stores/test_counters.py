"""Counters: ``add_at`` on stores, maps and World stores.

Every occurrence accumulates (``np.add.at``'s rule), missing ids start at
zero, and an integer sum that would not fit raises with nothing changed,
against a plain dict model on every index kind.
"""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import ComponentStore, SparseMap, UnknownColumnError, World

KINDS = ["flat", "paged", "hash"]


def spied(monkeypatch, name):
    """The calls of ``sparseset.kernels.<name>`` from here on, each its
    arguments; every call still runs."""
    import sparseset.kernels as kernels_module

    real = getattr(kernels_module, name)
    calls = []

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(kernels_module, name, spy)
    return calls


def rows_of(store):
    return {
        int(i): tuple(np.asarray(store[c][k]).tolist() for c in store.columns)
        for k, i in enumerate(store.ids.tolist())
    }


@pytest.mark.boundscheck
@pytest.mark.parametrize("kind", KINDS)
@given(
    start=st.lists(st.integers(0, 40), max_size=10),
    ids=st.lists(st.integers(0, 40), max_size=40),
    data=st.data(),
)
def test_add_at_matches_a_dict_model(kind, start, ids, data):
    store = ComponentStore({"n": "i4", "w": "f8", "v": ("i2", 2)}, index=kind)
    store.add(start, n=5, w=0.5, v=[1, -1])
    n = data.draw(st.lists(st.integers(-50, 50), min_size=len(ids), max_size=len(ids)))
    w = [float(x) / 4 for x in n]
    model = {x: [5, 0.5, [1, -1]] for x in start}
    for x, a, b in zip(ids, n, w, strict=True):
        row = model.setdefault(x, [0, 0.0, [0, 0]])
        row[0] += a
        row[1] += b
        row[2] = [row[2][0] + a, row[2][1] - a]
    new = store.add_at(ids, n=n, w=w, v=np.stack([n, [-x for x in n]], axis=1))
    assert new == len(set(ids) - set(start))
    # Quarters add up exactly in float64: the sums compare as they are.
    assert rows_of(store) == {x: tuple(row) for x, row in model.items()}


def test_a_scalar_value_counts_every_occurrence():
    store = ComponentStore({"n": "u4"})
    assert store.add_at([3, 3, 9, 3], n=1) == 2
    assert store.get([3, 9])["n"].tolist() == [3, 1]
    assert store.add_at(9, n=4) == 0 and store.get(9)["n"] == 5
    assert store.add_at([], n=1) == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("dtype", "start", "occurrences"),
    [
        ("u1", 250, [3, 3]),  # 256
        ("i1", -120, [-5, -5]),  # -130
        ("i8", 2**63 - 10, [5, 5, 1]),  # past 2**63 - 1
        ("u8", 2**64 - 3, [1, 1, 1]),
        ("i4", 0, [2**30, 2**30]),  # the bound fails, so does the exact sum
    ],
)
def test_an_integer_sum_that_does_not_fit_raises_and_changes_nothing(
    kind, dtype, start, occurrences
):
    store = ComponentStore({"n": dtype, "m": "f8"}, index=kind)
    store.add([1, 2], n=[start, 0], m=1.0)
    token = store._engine.checkpoint()
    before = (store.ids.tolist(), store["n"].tolist(), store["m"].tolist())
    ids = [1] * len(occurrences) + [5]
    with pytest.raises(ValueError, match=r"column 'n': the sum for .*= 1 would be"):
        store.add_at(ids, n=[*occurrences, 1], m=2.0)
    assert (store.ids.tolist(), store["n"].tolist(), store["m"].tolist()) == before
    store._engine.rollback(token)  # still live: nothing was added


def test_sums_that_only_the_exact_check_accepts_are_kept():
    """Large values that cancel: the bound cannot tell, the exact sum fits."""
    store = ComponentStore({"n": "i1"})
    store.add_at([1, 1, 2, 2], n=[100, -100, 127, 0])
    store.add_at([1, 1, 1], n=[127, -127, 27])
    assert store.get([1, 2])["n"].tolist() == [27, 127]


@pytest.mark.parametrize("kind", KINDS)
def test_a_short_batch_into_a_large_counter_is_bounded_by_the_rows_it_touches(
    kind, monkeypatch
):
    """A batch far shorter than the store bounds its sums by the rows it
    touches (no pass over the whole column): a full row it does not touch
    needs no exact check, one it does still raises with nothing changed."""
    store = ComponentStore({"n": "i1"}, index=kind)
    store.add(np.arange(2_000), n=0)
    store.set([7], n=127)
    exact = []
    check = ComponentStore._check_sums_exactly

    def spy(self, *args):
        exact.append(args[3])
        return check(self, *args)

    monkeypatch.setattr(ComponentStore, "_check_sums_exactly", spy)
    assert store.add_at([3, 3, 2_500], n=40) == 1
    assert store.get([3, 2_500, 7])["n"].tolist() == [80, 40, 127] and not exact
    before = store["n"].tolist()
    with pytest.raises(ValueError, match=r"the sum for ids\[0\] = 3 would be 180"):
        store.add_at([3, 9_000, 3], n=50)
    assert exact == ["n"]
    assert store["n"].tolist() == before and 9_000 not in store


def test_bad_input_raises_and_changes_nothing():
    store = ComponentStore({"n": "i4", "name": "U4", "ok": "?"})
    store.add([1])
    cases = [
        (lambda: store.add_at([2, -1], n=1), ValueError),
        (lambda: store.add_at([2], name="x"), TypeError),
        (lambda: store.add_at([2], ok=True), TypeError),
        (lambda: store.add_at([2], mass=1), UnknownColumnError),
        (lambda: store.add_at([2], n=1.5), TypeError),
        (lambda: store.add_at([2, 3], n=[1, 2, 3]), ValueError),
        (lambda: store.add_at([2], n=2**40), ValueError),
        (lambda: store.add_at(["a"], n=1), TypeError),
    ]
    for call, error in cases:
        with pytest.raises(error):
            call()
        assert store.ids.tolist() == [1] and store["n"].tolist() == [0]


@given(st.lists(st.integers(0, 2**40), max_size=60))
def test_a_map_counts_as_a_counter(keys):
    counts = SparseMap("i8", index="paged")
    counts.add_at(keys, 1)
    counts.add_at(np.array(keys[::2], np.int64), 1)
    want = Counter(keys) + Counter(keys[::2])
    assert dict(counts.items()) == dict(want)


def test_a_world_store_counts_handles_runs_hooks_and_defers():
    w = World()
    w.register("hits", "i4")
    e = w.create(3)
    added = []
    w.on_add("hits", lambda h: added.append(sorted(h.tolist())))
    assert w["hits"].add_at(e[[0, 0, 2]], hits=1) == 2
    assert w["hits"].add_at(e[[0, 1]], hits=[5, 1]) == 1
    assert w.get("hits", e)["hits"].tolist() == [7, 1, 1]
    assert added == [[e[0], e[2]], [e[1]]]
    with w.deferred() as cmd:
        cmd.add_at("hits", e[[1, 1]], hits=1)
        cmd.add_at("hits", e[1], hits=10)
    assert w.get("hits", e[1])["hits"] == 13
    w.destroy(e[0])
    with pytest.raises(ValueError, match="dead"):
        w["hits"].add_at(e[0], hits=1)


#: Ids each kind takes, wide enough to spread over its index.
ID_RANGE = {"flat": 10**5, "paged": 2**47, "hash": 2**62}


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_a_counter_growing_mid_batch_counts_in_first_seen_order(kind, data):
    """Batches of repeated keys, many of them new: the counter grows while
    it counts (dense, then the index), and ends as the model says, its new
    keys in the order the batch first saw them."""
    pool = data.draw(
        st.lists(st.integers(0, ID_RANGE[kind]), min_size=1, max_size=200, unique=True)
    )
    keys = st.sampled_from(pool)
    start = data.draw(st.lists(keys, max_size=20))
    ids = data.draw(st.lists(keys, max_size=600))
    counts = SparseMap("i8", index=kind)
    counts.add_at(start, 1)
    new = counts.add_at(np.array(ids, np.int64), 1)
    assert new == len(set(ids) - set(start))
    assert dict(counts.items()) == dict(Counter(start) + Counter(ids))
    assert counts.ids.tolist() == list(dict.fromkeys([*start, *ids]))


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_keys_cleared_or_discarded_count_from_zero_again(kind, data):
    """A hash table keeps the entries of keys gone by ``clear``: they are
    never taken for members, in a batch that grows the counter (and
    rebuilds its index) mid-way or in one that does not."""
    pool = data.draw(
        st.lists(st.integers(0, ID_RANGE[kind]), min_size=1, max_size=150, unique=True)
    )
    keys = st.sampled_from(pool)
    first = data.draw(st.lists(keys, max_size=300))
    counts = SparseMap("i8", index=kind)
    counts.add_at(first, 1)
    model = Counter(first)
    if data.draw(st.booleans()):
        counts.clear()
        model = Counter()
    else:
        gone = data.draw(st.lists(keys, max_size=20))
        counts.discard(gone)
        for x in gone:
            model.pop(x, None)
    ids = data.draw(st.lists(keys, max_size=600))
    assert counts.add_at(ids, 1) == len(set(ids) - set(model))
    assert dict(counts.items()) == dict(model + Counter(ids))


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_batch_changes_nothing_after_many_new_ids(kind):
    """The ids and the sums are checked before the first is counted: a bad
    id or an overflowing sum at a batch's end leaves the map as it was,
    with none of the batch's new ids in it."""
    counts = SparseMap("i2", index=kind)
    counts.add_at([5, 6, 5], [1, 2, 3])
    before = (counts.ids.tolist(), counts.data.tolist())
    fresh = np.arange(1_000, 3_000)
    past = {"flat": 2**31, "paged": 2**48, "hash": 2**63}[kind]
    bad_batches = [
        (np.r_[fresh, -1], 1, ValueError),
        (np.array([*fresh.tolist(), past], np.uint64), 1, ValueError),
        (np.r_[fresh, 5, 5], np.r_[np.ones(2_000, np.int64), 2**14, 2**14], ValueError),
        (np.r_[fresh, 5], 1.5, TypeError),
        (np.r_[fresh, 5], [1, 2], ValueError),
    ]
    for ids, values, error in bad_batches:
        with pytest.raises(error):
            counts.add_at(ids, values)
        assert (counts.ids.tolist(), counts.data.tolist()) == before
        assert 1_000 not in counts and not counts.contains(fresh).any()
    assert counts.add_at(fresh, 1) == 2_000
    assert counts[[5, 6, 1_000, 2_999]].tolist() == [4, 2, 1, 1]


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_counter_validates_a_long_batch_in_the_pass_that_estimates_it(
    kind, monkeypatch
):
    """A new counter's long batch of many distinct ids is estimated before
    it is counted, and that one pass also finds its bounds: no second pass
    validates it, and a bad id anywhere in it still raises with nothing
    counted."""
    bounds = spied(monkeypatch, "id_bounds")
    rng = np.random.default_rng(11)
    fresh = rng.permutation(20_000) * 7 + 1
    past = {"flat": 2**31, "paged": 2**48, "hash": 2**63}[kind]
    bad_batches = [
        (np.r_[fresh, -1], "ids\\[20000\\] = -1"),
        (np.r_[-3, fresh], "ids\\[0\\] = -3"),
        (np.array([*fresh.tolist(), past], np.uint64), f"ids\\[20000\\] = {past}"),
    ]
    for ids, message in bad_batches:
        counts = SparseMap("i8", index=kind)
        with pytest.raises(ValueError, match=message):
            counts.add_at(ids, 1)
        assert len(counts) == 0 and not counts.contains(fresh).any()
    batch = np.r_[fresh, fresh[:5_000]]
    assert counts.add_at(batch, 2) == 20_000
    assert counts[fresh[:3]].tolist() == [4, 4, 4]
    assert counts[fresh[-3:]].tolist() == [2, 2, 2]
    assert batch.shape[0] not in [ids.shape[0] for (ids,) in bounds]


@pytest.mark.boundscheck
@pytest.mark.parametrize("kind", KINDS)
def test_a_large_batch_counts_as_pandas_does(kind):
    """Enough events and keys that the kernel's prefetch pipeline runs
    full and the counter grows several times within the one call."""
    rng = np.random.default_rng(28)
    keys = rng.choice(ID_RANGE[kind], 20_000, replace=False)
    ids = keys[rng.integers(0, keys.shape[0], 100_000)]
    counts = ComponentStore({"n": "i4", "w": ("f8", 2)}, index=kind)
    counts.add_at(ids[:10], n=1)
    counts.add_at(ids, n=1, w=np.stack([np.ones(ids.shape[0]), ids % 4], axis=1))
    want = Counter(ids.tolist()) + Counter(ids[:10].tolist())
    assert counts.ids.tolist() == list(dict.fromkeys(ids.tolist()))
    assert counts["n"].tolist() == [want[k] for k in counts.ids.tolist()]
    w = {k: [0.0, 0.0] for k in want}
    for k in ids.tolist():
        w[k][0] += 1.0
        w[k][1] += k % 4
    assert counts["w"].tolist() == [w[k] for k in counts.ids.tolist()]


@pytest.mark.boundscheck
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("members_before", [0, 300])
def test_a_batch_of_repeated_keys_counts_one_row_of_integers_exactly(
    kind, members_before
):
    """One integer value for every occurrence, the batch's keys repeating:
    a hash counter counts in its table's slots and writes each new row
    once (see ``upsert_accumulate``; its kernel test covers several and
    wider columns), a new counter after starting the batch again past its
    first room; members from before add to their rows. The counts and the
    order of the keys come out as a Counter says, and every key is found
    at its row."""
    rng = np.random.default_rng(5)
    keys = rng.choice(ID_RANGE[kind], 12_000, replace=False)
    ids = keys[rng.integers(0, keys.shape[0], 60_000)]
    counts = SparseMap("i8", index=kind)
    before = keys[:members_before]
    counts.add_at(before, 7)
    new = counts.add_at(ids, 3)
    order = list(dict.fromkeys([*before.tolist(), *ids.tolist()]))
    assert new == len(order) - members_before
    assert counts.ids.tolist() == order
    seen = Counter(ids.tolist())
    first = set(before.tolist())
    assert counts.data.tolist() == [7 * (x in first) + 3 * seen[x] for x in order]
    assert counts.index(np.array(order)).tolist() == list(range(len(order)))


@pytest.mark.boundscheck
@pytest.mark.parametrize("cleared", [False, True])
def test_a_batch_longer_than_a_hash_counter_has_slots_counts_members_in_them(
    cleared, monkeypatch
):
    """A counter with members, hash-indexed, counts a batch at least as long
    as its table has slots in the slots from the start, its members'
    occurrences too; the keys a ``clear`` left in the table count as new,
    from zero. A shorter batch adds to rows."""
    passes = spied(monkeypatch, "upsert_accumulate")
    rng = np.random.default_rng(3)
    keys = rng.choice(2**40, 1_500, replace=False)
    counts = SparseMap("i8", index="hash")
    counts.add_at(keys[:1_000], 5)
    model = Counter({int(k): 5 for k in keys[:1_000]})
    if cleared:
        counts.clear()
        model = Counter()
    for short, tallies in ((1, False), (0, True)):
        passes.clear()
        slots = counts._store._state().sparse.table.size // 2
        ids = keys[rng.integers(0, 1_500, slots - short)]
        new = counts.add_at(ids, 2)
        assert new == len(set(ids.tolist()) - set(model))
        model.update({k: 2 * c for k, c in Counter(ids.tolist()).items()})
        assert passes[0][8] is tallies  # the pass's tallies
        assert dict(counts.items()) == dict(model)
        assert counts.index(counts.ids).tolist() == list(range(len(counts)))


@pytest.mark.boundscheck
@pytest.mark.parametrize("span", [20_000, 400_000])
def test_a_flat_counter_trusts_its_index_where_it_filled_it(span, monkeypatch):
    """A flat counter whose index has no more slots than the batch has ids
    fills it with NOWHERE when it grows, and counts trusting it (no read
    of ``dense`` per id), across a first room, a fresh start and growth
    for ids past the index; one whose index is longer than the batch
    confirms every candidate as before. Both count exactly."""
    passes = spied(monkeypatch, "upsert_accumulate")
    rng = np.random.default_rng(4)
    keys = rng.choice(span, 6_000, replace=False)
    # Small ids first (a small index), the largest last (it must grow).
    ids = np.r_[np.sort(keys)[rng.integers(0, 3_000, 40_000)], keys]
    counts = SparseMap("i8", index="flat")
    before = rng.choice(span, 100, replace=False)
    counts.add_at(before, 5)
    passes.clear()
    assert counts.add_at(ids, 1) == len(set(ids.tolist()) - set(before.tolist()))
    want = Counter(ids.tolist())
    want.update({int(k): 5 for k in before})
    assert dict(counts.items()) == dict(want)
    assert counts.index(counts.ids).tolist() == list(range(len(counts)))
    assert any(args[7] for args in passes) == (span < ids.shape[0])  # exact


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_batch_of_few_keys_is_counted_without_an_estimate(kind, monkeypatch):
    """A new counter first grows for a few thousand keys: a long batch that
    holds fewer never pays for the pass that estimates its distinct ids
    (only its first ids are sketched); one that holds more is estimated
    once and counted the same."""
    from sparseset.stores.component_store import _PROBE

    estimates = spied(monkeypatch, "distinct_estimate")
    rng = np.random.default_rng(7)
    # The first ids of the second batch overfill the first room; of the
    # third, they do not, but the batch does.
    for distinct, draws in ((50, 30_000), (9_000, 30_000), (4_500, 300_000)):
        estimates.clear()
        keys = rng.choice(ID_RANGE[kind], distinct, replace=False)
        ids = keys[rng.integers(0, distinct, draws)]
        counts = SparseMap("i8", index=kind)
        assert counts.add_at(ids, 1) == len(set(ids.tolist()))
        spans = [stop - start for _, start, stop in estimates]
        assert spans[0] == _PROBE
        assert spans[1:] == ([] if distinct == 50 else [draws])
        want = Counter(ids.tolist())
        assert counts.ids.tolist() == list(dict.fromkeys(ids.tolist()))
        assert counts.data.tolist() == [want[k] for k in counts.ids.tolist()]


@pytest.mark.parametrize("kind", KINDS)
def test_a_short_batch_grows_for_every_id_it_holds_without_an_estimate(
    kind, monkeypatch
):
    """A batch of at most a first room's ids costs no sketch: a new counter
    grows for all of them, and one with members for all it has left."""
    import sparseset.kernels as kernels_module

    calls = []
    monkeypatch.setattr(
        kernels_module, "distinct_estimate", lambda *args: calls.append(args)
    )
    rng = np.random.default_rng(9)
    keys = rng.choice(ID_RANGE[kind], 5_000, replace=False)
    counts = SparseMap("i8", index=kind)
    for batch in (keys[:4_096], keys[rng.integers(0, 5_000, 4_000)]):
        counts.add_at(batch, 1)
    assert not calls
    want = Counter(keys[:4_096].tolist())
    want.update(batch.tolist())
    assert dict(counts.items()) == dict(want)


def test_values_read_from_the_column_itself_are_read_as_they_were():
    store = ComponentStore({"n": "i8"})
    store.add([1, 2, 3], n=[10, 20, 30])
    store.add_at([3, 2, 1], n=store["n"])
    # Row 3 adds row 1's 10 as it was, not as the batch left it.
    assert store["n"].tolist() == [40, 40, 40]


def test_a_tracked_store_stamps_exactly_the_rows_add_at_wrote():
    w = World()
    w.register("hits", "i4", track=True)
    e = w.create(6)
    w.add("hits", e[[0, 1]], hits=1)
    r = w.reader("hits")
    assert w["hits"].add_at(e[[4, 1, 4, 3]], hits=1) == 2
    assert sorted(r.added().tolist()) == sorted(e[[4, 3]].tolist())
    assert sorted(r.changed().tolist()) == sorted(e[[1, 3, 4]].tolist())
    r.commit()
    assert w["hits"].add_at(e[[0, 0]], hits=2) == 0
    assert r.added().tolist() == [] and r.changed().tolist() == [e[0]]
    assert w.get("hits", e[[0, 1, 3, 4]])["hits"].tolist() == [5, 2, 1, 2]
