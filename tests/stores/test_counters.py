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

pytestmark = pytest.mark.boundscheck


def rows_of(store):
    return {
        int(i): tuple(np.asarray(store[c][k]).tolist() for c in store.columns)
        for k, i in enumerate(store.ids.tolist())
    }


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
