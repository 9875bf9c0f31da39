"""Stateful tests: ComponentStore against a dict of rows, SparseMap against dict.

``StoreMachine`` drives ``ComponentStore({"pos": ("f8", 2), "hp": "i4"})``
with add-or-replace batches (duplicates, a random subset of columns given,
values unique per position so that "last value wins" is observable), set,
discard, remove, get, writes through the column views, clear and reserve.
The model is ``{id: {"pos": (x, y), "hp": int}}`` plus the dense order,
which docs/contract.md#order promises: insertion order, changed only by
sequential swap-and-pop. After every step the columns must line up with
``ids`` row for row.

``MapMachine`` drives ``SparseMap("i8")`` against a plain ``dict``.

Both run once per index kind (flat, paged, hash).
"""

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sparseset import ComponentStore, SparseMap, UnknownColumnError
from sparseset.sets.index_kinds import KINDS

SMALL = 64
LARGE = 3_000
COLUMNS = ("pos", "hp")
ZERO_ROW = {"pos": (0.0, 0.0), "hp": 0}

small_id = st.integers(0, SMALL)
any_id = st.one_of(small_id, small_id, small_id, st.integers(0, LARGE))
id_lists = st.lists(any_id, max_size=10)
# Batches drawn from a few ids: duplicates are the rule, not the exception.
dup_id_lists = st.lists(any_id, min_size=1, max_size=4).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), max_size=10)
)
add_id_lists = st.one_of(id_lists, dup_id_lists)
#: Ids past flat's range, which make an adapting store change kind: a
#: cluster (paged, alone) and ids scattered up to 2**63 (hash).
wide_id_lists = st.lists(
    st.one_of(
        st.integers(2**40, 2**40 + 300),
        st.sampled_from([2**31, 2**47 + 5, 2**62 + 1, 2**63 - 1]),
        small_id,
    ),
    min_size=1,
    max_size=12,
)
layouts = st.sampled_from(["list", "tuple", "i64", "u16", "i32-strided", "scalar"])
column_sets = st.sets(st.sampled_from(COLUMNS))
value_forms = st.sampled_from(["full", "full", "full", "one-row", "scalar"])


def as_input(values, layout):
    """``values`` (a list of ints) in the requested form, and the ids it means."""
    if layout == "scalar" and len(values) == 1:
        return values[0], values
    if layout in ("u16", "i32-strided") and max(values, default=0) >= 2**15:
        layout = "i64"  # an adapting store's wide members do not fit
    if layout == "tuple":
        return tuple(values), values
    if layout == "i64":
        return np.array(values, np.int64), values
    if layout == "u16":
        return np.array(values, np.uint16), values
    if layout == "i32-strided":
        base = np.full(2 * len(values), -1, np.int32)
        base[::2] = values
        return base[::2], values
    return list(values), values


class StoreMachine(RuleBasedStateMachine):
    def __init__(self, kind="flat"):
        super().__init__()
        self.kind = kind
        self.store = ComponentStore({"pos": ("f8", 2), "hp": "i4"}, index=kind)
        # The first id the store cannot take (an adapting store: hash's).
        self.limit = KINDS.get(kind, KINDS["hash"]).limit
        assert self.store.kind == (kind if kind in KINDS else "flat")
        self.model = {}  # id -> {"pos": (x, y), "hp": int}
        self.order = []  # the dense order the contract promises
        self.serial = 0  # makes every value written unique

    # -- helpers ----------------------------------------------------------

    def fresh(self):
        self.serial += 1
        return self.serial

    def draw_values(self, data, count, columns, scalar):
        """Values for ``columns`` and the row each position receives.

        "full" gives every position its own value, so a duplicate id shows
        whether the last one won; "one-row" and "scalar" broadcast one value.
        """
        given, per_position = {}, {}
        for name in columns:
            form = "one-row" if scalar else data.draw(value_forms, label=name)
            if form == "full":
                rows = [self.row_value(name) for _ in range(count)]
                shape = (count, 2) if name == "pos" else (count,)
                given[name] = np.array(rows, np.float64 if name == "pos" else np.int64)
                given[name] = given[name].reshape(shape)
            elif form == "one-row":
                value = self.row_value(name)
                rows = [value] * count
                given[name] = list(value) if name == "pos" else value
            elif name == "pos":  # a float scalar fills both coordinates
                v = float(self.fresh())
                rows = [(v, v)] * count
                given[name] = v
            else:  # an int16 scalar: a same-kind cast into int32
                v = self.fresh() % 30_000
                rows = [v] * count
                given[name] = np.int16(v)
            per_position[name] = rows
        return given, per_position

    def row_value(self, name):
        v = self.fresh()
        return (v + 0.5, -v / 4) if name == "pos" else v

    def pop_model(self, i):
        """Sequential swap-and-pop of ``i`` in the model."""
        k = self.order.index(i)
        last = self.order.pop()
        if last != i:
            self.order[k] = last
        del self.model[i]

    def check_row(self, got, i):
        np.testing.assert_array_equal(got["pos"], self.model[i]["pos"])
        assert got["hp"] == self.model[i]["hp"]

    # -- rules ------------------------------------------------------------

    @rule(values=add_id_lists, layout=layouts, columns=column_sets, data=st.data())
    def add(self, values, layout, columns, data):
        ids, values = as_input(values, layout)
        scalar = not isinstance(ids, list | tuple | np.ndarray)
        given, per_position = self.draw_values(data, len(values), columns, scalar)
        new = 0
        for k, i in enumerate(values):
            if i not in self.model:
                self.model[i] = dict(ZERO_ROW)
                self.order.append(i)
                new += 1
            for name in given:
                self.model[i][name] = per_position[name][k]
        assert self.store.add(ids, **given) == new

    @precondition(lambda self: self.kind == "auto")
    @rule(values=wide_id_lists, columns=column_sets, data=st.data())
    def add_wide(self, values, columns, data):
        # Ids that make an adapting store's index change kind mid-batch:
        # the rows already there stay where they are.
        given, per_position = self.draw_values(data, len(values), columns, False)
        new = 0
        for k, i in enumerate(values):
            if i not in self.model:
                self.model[i] = dict(ZERO_ROW)
                self.order.append(i)
                new += 1
            for name in given:
                self.model[i][name] = per_position[name][k]
        ids = np.array(values, np.uint64 if max(values) >= 2**63 else np.int64)
        assert self.store.add(ids, **given) == new
        assert self.store.kind in KINDS

    @precondition(lambda self: self.model)
    @rule(data=st.data(), columns=column_sets, layout=layouts)
    def set_members(self, data, columns, layout):
        members = sorted(self.model)
        values = data.draw(
            st.lists(st.sampled_from(members), min_size=1, max_size=6, unique=True),
            label="set ids",
        )
        ids, values = as_input(values, layout)
        scalar = not isinstance(ids, list | tuple | np.ndarray)
        given, per_position = self.draw_values(data, len(values), columns, scalar)
        self.store.set(ids, **given)
        for k, i in enumerate(values):
            for name in given:
                self.model[i][name] = per_position[name][k]

    @rule(data=st.data(), absent=any_id)
    def set_with_an_absent_id(self, data, absent):
        if absent in self.model:
            return
        members = sorted(self.model)
        values = (
            data.draw(st.lists(st.sampled_from(members), max_size=4)) if members else []
        )
        where = data.draw(st.integers(0, len(values)), label="where")
        values = [*values[:where], absent, *values[where:]]
        with pytest.raises(KeyError) as info:
            self.store.set(values, hp=self.fresh())
        assert str(absent) in str(info.value)

    @rule(values=id_lists, layout=layouts)
    def discard(self, values, layout):
        ids, values = as_input(values, layout)
        removed = 0
        for i in values:
            if i in self.model:
                self.pop_model(i)
                removed += 1
        assert self.store.discard(ids) == removed

    @rule(data=st.data(), layout=layouts)
    def remove(self, data, layout):
        members = sorted(self.model)
        candidates = st.sampled_from(members) if members else any_id
        values = data.draw(
            st.lists(st.one_of(candidates, candidates, candidates, any_id), max_size=8),
            label="remove ids",
        )
        ids, values = as_input(values, layout)
        absent = [i for i in values if i not in self.model]
        if absent:
            with pytest.raises(KeyError) as info:
                self.store.remove(ids)
            assert str(absent[0]) in str(info.value)
            return
        distinct = len(set(values))
        for i in dict.fromkeys(values):
            self.pop_model(i)
        assert self.store.remove(ids) == distinct

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def get_members(self, data):
        members = sorted(self.model)
        values = data.draw(
            st.lists(st.sampled_from(members), max_size=8), label="get ids"
        )
        got = self.store.get(values)
        assert got["pos"].shape == (len(values), 2)
        assert got["hp"].shape == (len(values),)
        for k, i in enumerate(values):
            self.check_row({"pos": got["pos"][k], "hp": got["hp"][k]}, i)
        one = data.draw(st.sampled_from(members), label="get one")
        got = self.store.get(one)
        assert np.shape(got["pos"]) == (2,)
        assert np.shape(got["hp"]) == ()
        self.check_row(got, one)

    @rule(absent=any_id)
    def get_absent(self, absent):
        if absent in self.model:
            return
        with pytest.raises(KeyError) as info:
            self.store.get([*self.order[:2], absent])
        assert str(absent) in str(info.value)

    @rule()
    def hp_plus_one(self):
        self.store["hp"] += 1
        for row in self.model.values():
            row["hp"] += 1

    @rule()
    def integrate(self):
        self.store["pos"] += self.store["hp"][:, None] * 0.5
        for row in self.model.values():
            x, y = row["pos"]
            row["pos"] = (x + row["hp"] * 0.5, y + row["hp"] * 0.5)

    @rule()
    def assign_hp_column(self):
        value = self.fresh()
        self.store["hp"] = value
        for row in self.model.values():
            row["hp"] = value

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def write_through_view(self, data):
        k = data.draw(st.integers(0, len(self.order) - 1), label="row")
        value = self.row_value("pos")
        view = self.store["pos"]
        view[k] = value
        self.model[self.order[k]]["pos"] = value

    @rule(
        bad=st.sampled_from(
            ["unknown", "shape", "length", "string", "float-ids", "negative", "big"]
        ),
        values=id_lists,
    )
    def bad_add(self, bad, values):
        ids = [*values, 1]
        calls = {
            "unknown": (UnknownColumnError, lambda: self.store.add(ids, mass=1)),
            "shape": (ValueError, lambda: self.store.add(ids, pos=[1.0, 2.0, 3.0])),
            "length": (
                ValueError,
                lambda: self.store.add(ids, hp=[1] * (len(ids) + 1)),
            ),
            "string": (TypeError, lambda: self.store.add(ids, pos="x")),
            "float-ids": (TypeError, lambda: self.store.add([*ids, 0.5])),
            "negative": (ValueError, lambda: self.store.add([*ids, -1])),
            "big": (ValueError, lambda: self.store.add([*ids, self.limit], hp=0)),
        }
        exc, call = calls[bad]
        with pytest.raises(exc):
            call()

    @rule()
    def clear(self):
        self.store.clear()
        self.model.clear()
        self.order.clear()

    @rule(capacity=st.integers(0, 2 * LARGE))
    def reserve(self, capacity):
        self.store.reserve(capacity)
        assert self.store.capacity >= capacity

    # -- invariants -------------------------------------------------------

    @invariant()
    def size_and_members(self):
        assert len(self.store) == len(self.model)
        ids = self.store.ids
        assert set(ids.tolist()) == set(self.model)
        assert ids.tolist() == self.order

    @invariant()
    def columns_aligned_with_ids(self):
        n = len(self.model)
        pos, hp = self.store["pos"], self.store["hp"]
        assert pos.shape == (n, 2)
        assert hp.shape == (n,)
        expected_pos = np.array(
            [self.model[i]["pos"] for i in self.order], np.float64
        ).reshape(n, 2)
        expected_hp = np.array([self.model[i]["hp"] for i in self.order], np.int64)
        np.testing.assert_array_equal(pos, expected_pos)
        np.testing.assert_array_equal(hp, expected_hp)

    @invariant()
    def index_matches_position(self):
        ids = self.store.ids
        np.testing.assert_array_equal(self.store.index(ids), np.arange(ids.shape[0]))
        if self.order:
            assert self.store.index(self.order[-1]) == len(self.order) - 1


class MapMachine(RuleBasedStateMachine):
    def __init__(self, kind="flat"):
        super().__init__()
        self.kind = kind
        self.m = SparseMap("i8", index=kind)
        self.model = {}

    @precondition(lambda self: self.kind == "auto")
    @rule(keys=wide_id_lists, repeat=st.integers(1, 3))
    def add_at_wide(self, keys, repeat):
        # A counter's batch that makes an adapting map change kind.
        batch = np.array(keys * repeat, np.int64)
        new = len({k for k in keys if k not in self.model})
        assert self.m.add_at(batch, 1) == new
        for k in batch.tolist():
            self.model[k] = self.model.get(k, 0) + 1

    @rule(key=any_id, value=st.integers(-(2**40), 2**40))
    def setitem(self, key, value):
        self.m[key] = value
        self.model[key] = value

    @rule(keys=add_id_lists, data=st.data())
    def setitem_batch(self, keys, data):
        values = data.draw(
            st.lists(st.integers(-100, 100), min_size=len(keys), max_size=len(keys))
        )
        as_array = data.draw(st.booleans(), label="values as an int64 array")
        # An empty list of values is inferred as float64 by numpy; that case
        # has its own unit test, this machine passes typed values for it.
        self.m[keys] = np.array(values, np.int64) if as_array or not keys else values
        self.model.update(zip(keys, values, strict=True))

    @rule(keys=id_lists)
    def add_without_values(self, keys):
        new = len({k for k in keys if k not in self.model})
        assert self.m.add(keys) == new
        for k in keys:
            self.model.setdefault(k, 0)

    @rule(key=any_id)
    def delitem(self, key):
        if key in self.model:
            del self.m[key]
            del self.model[key]
        else:
            with pytest.raises(KeyError):
                del self.m[key]

    @rule(key=any_id)
    def getitem(self, key):
        if key in self.model:
            assert self.m[key] == self.model[key]
        else:
            with pytest.raises(KeyError):
                self.m[key]
        assert self.m.get(key, "absent") == self.model.get(key, "absent")

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def getitem_batch(self, data):
        keys = data.draw(st.lists(st.sampled_from(sorted(self.model)), max_size=6))
        assert self.m[keys].tolist() == [self.model[k] for k in keys]

    @rule(key=any_id)
    def pop(self, key):
        assert self.m.pop(key, None) == self.model.pop(key, None)

    @rule(key=any_id, value=st.integers(-100, 100))
    def setdefault(self, key, value):
        assert self.m.setdefault(key, value) == self.model.setdefault(key, value)

    @rule(other=st.dictionaries(any_id, st.integers(-100, 100), max_size=6))
    def update(self, other):
        self.m.update(other)
        self.model.update(other)

    @rule(keys=id_lists)
    def discard(self, keys):
        removed = 0
        for k in keys:
            if k in self.model:
                del self.model[k]
                removed += 1
        assert self.m.discard(keys) == removed

    @rule()
    def data_minus_three(self):
        self.m.data -= 3
        for k in self.model:
            self.model[k] -= 3

    @rule()
    def clear(self):
        self.m.clear()
        self.model.clear()

    @invariant()
    def matches_dict(self):
        assert len(self.m) == len(self.model)
        assert set(self.m) == set(self.model)
        assert self.m == self.model
        assert dict(self.m.items()) == self.model
        pairs = zip(self.m.ids.tolist(), self.m.data.tolist(), strict=True)
        assert dict(pairs) == self.model


@pytest.mark.parametrize("kind", [*KINDS, "auto"])
def test_store_machine(kind):
    run_state_machine_as_test(lambda: StoreMachine(kind))


@pytest.mark.parametrize("kind", [*KINDS, "auto"])
def test_map_machine(kind):
    run_state_machine_as_test(lambda: MapMachine(kind))
