"""Stateful test: SparseSet driven against a Python ``set`` model.

The machine runs once per index kind (flat, paged, hash): same rules, same
model, same invariants. On paged and hash sets it also adds ids far past
the flat range (page directories several levels deep, 64-bit hash keys).

The model keeps the members (a ``set``) and the dense order where
docs/contract.md#order promises one (append on add, sequential swap-and-pop on
discard/remove); after operations whose order is not promised (keep_only,
rollback, in-place algebra, pop) the machine first checks the members as
a set, then adopts the set's order.

Checkpoint tokens are tracked in three states:

- ``live``: docs/contract.md#checkpoints promises that rollback succeeds;
- ``dead``: it promises that rollback raises ``ValueError`` (an add of a
  new id, clear, sort, growth, or a rollback to an older token happened);
- ``maybe``: it does not say (after an add that added nothing, after
  removals it does not list, or a token that was just rolled back to);
  such tokens are never rolled back to, but become ``dead`` on the next
  invalidation.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reference import INT_DTYPES
from sparseset import SparseSet, kernels
from sparseset.sets.index_kinds import KINDS

LAYOUTS = ["list", "tuple", "array", "strided", "reversed", "readonly", "scalar"]
SMALL = 200
LARGE = 5_000
UNIVERSE = np.arange(0, SMALL + 56, dtype=np.int64)
OUT_OF_RANGE = [10**6, 2**31 - 1, 2**31, 2**40, 2**63 - 1]
#: Ids past the flat range, for the kinds that take them (each kind keeps
#: the ones below its limit): page directory edges, hash keys near 2**63.
WIDE = [2**31, 2**31 + 4_095, 2**36 + 7, 2**40 - 1, 2**47 + 2**24, 2**48 - 1]
WIDE += [2**48, 2**62 + 1, 2**63 - 2, 2**63 - 1]
#: The first id past each kind's range (add must raise, queries say absent).
PAST_RANGE = {name: kind.limit for name, kind in KINDS.items()}
# The kind that adapts takes what hash takes, and names hash in messages.
PAST_RANGE["auto"] = KINDS["hash"].limit
WIDEST = {**{name: name for name in KINDS}, "auto": "hash"}
#: Clustered ids past flat's range: an adapting set of them alone is paged.
CLUSTER = 2**40

small_id = st.integers(0, SMALL)
any_id = st.one_of(small_id, small_id, small_id, st.integers(0, LARGE))
id_lists = st.lists(any_id, max_size=12)
dtypes = st.sampled_from(INT_DTYPES)
layouts = st.sampled_from(LAYOUTS)


def fits(values, dtype):
    info = np.iinfo(dtype)
    return all(info.min <= v <= info.max for v in values)


def make_input(values, dtype, layout):
    """Return ``(argument, ids it stands for)`` in the requested shape."""
    if not fits(values, dtype):
        dtype = np.int64 if fits(values, np.int64) else np.uint64
    if layout == "scalar":
        if not values:
            return [], []
        x = values[0]
        return (x if dtype is np.int64 else dtype(x)), [x]
    if layout == "list":
        return list(values), list(values)
    if layout == "tuple":
        return tuple(values), list(values)
    if layout == "array":
        return np.array(values, dtype=dtype), list(values)
    if layout == "strided":
        base = np.zeros(2 * len(values), dtype=dtype)
        base[::2] = values
        return base[::2], list(values)
    if layout == "reversed":
        return np.array(values[::-1], dtype=dtype)[::-1], list(values)
    assert layout == "readonly"
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr, list(values)


def swap_and_pop(order, batch):
    """Sequential swap-and-pop of ``batch`` from ``order`` (in place)."""
    removed = 0
    for x in batch:
        try:
            p = order.index(x)
        except ValueError:
            continue
        order[p] = order[-1]
        order.pop()
        removed += 1
    return removed


@dataclass
class Token:
    token: object
    snap: frozenset
    seq: int
    state: str = "live"


class SparseSetMachine(RuleBasedStateMachine):
    def __init__(self, kind="flat"):
        super().__init__()
        self.kind = kind
        self.wide = [x for x in WIDE if x < PAST_RANGE[kind] and x >= 2**31]
        self.s = SparseSet(index=kind)
        self.model = set()
        self.order = []
        self.tokens = []
        self.seq = 0
        self.ever_added = set()

    # ----------------------------------------------------------- helpers

    def _tokens(self, state):
        return [t for t in self.tokens if t.state == state]

    def _kill_tokens(self):
        for t in self.tokens:
            t.state = "dead"

    def _blur_tokens(self):
        for t in self.tokens:
            if t.state == "live":
                t.state = "maybe"

    def _adopt_order(self):
        got = self.s.ids.tolist()
        assert set(got) == self.model
        self.order = got

    def _assert_exactly(self, order):
        assert self.s.ids.tolist() == order
        assert len(self.s) == len(order)

    # ----------------------------------------------------------- rules

    @initialize(
        capacity=st.sampled_from([0, 1, 16, 256, 4_096]),
        values=id_lists,
    )
    def start(self, capacity, values):
        self.s = SparseSet(capacity=capacity, index=self.kind)
        assert self.s.kind == (self.kind if self.kind in KINDS else "flat")
        assert self.s.add(values) == len(set(values))
        self.order = list(dict.fromkeys(values))
        self.model = set(values)
        self.ever_added.update(values)

    @rule(values=id_lists, dtype=dtypes, layout=layouts)
    def add(self, values, dtype, layout):
        arg, vals = make_input(values, dtype, layout)
        new = [x for x in dict.fromkeys(vals) if x not in self.model]
        assert self.s.add(arg) == len(new)
        self.order.extend(new)
        self.model.update(new)
        self.ever_added.update(vals)
        if new:
            self._kill_tokens()
        else:
            self._blur_tokens()

    @precondition(lambda self: self.wide)
    @rule(data=st.data(), values=id_lists)
    def add_wide(self, data, values):
        wide = data.draw(st.lists(st.sampled_from(self.wide), min_size=1, max_size=4))
        batch = data.draw(st.permutations(values + wide))
        dtype = np.uint64 if max(batch) >= 2**63 else np.int64
        new = [x for x in dict.fromkeys(batch) if x not in self.model]
        assert self.s.add(np.array(batch, dtype=dtype)) == len(new)
        self.order.extend(new)
        self.model.update(new)
        self.ever_added.update(batch)
        if new:
            self._kill_tokens()
        else:
            self._blur_tokens()

    @precondition(lambda self: self.kind == "auto")
    @rule(
        offsets=st.lists(st.integers(0, 200), min_size=1, max_size=60),
        base=st.sampled_from([CLUSTER, 2**31 - 100, 0]),
    )
    def restart_clustered(self, offsets, base):
        # A new adapting set of clustered ids: paged past flat's range (a
        # cluster near 2**40), flat below it; later rules widen it (hash).
        self.s = SparseSet()
        batch = [base + k for k in offsets]
        assert self.s.add(np.array(batch, np.int64)) == len(set(batch))
        self.order = list(dict.fromkeys(batch))
        self.model = set(batch)
        self.ever_added.update(batch)
        self._kill_tokens()
        if base == CLUSTER and len(self.model) >= 17:
            assert self.s.kind == "paged"
        if base == 0:
            assert self.s.kind == "flat"

    @rule(values=id_lists, layout=st.sampled_from(["list", "array"]))
    def add_past_range(self, values, layout):
        past = PAST_RANGE[self.kind]
        batch = [*values, past, *values]
        arg = np.array(batch, dtype=np.uint64) if layout == "array" else batch
        before = list(self.order)
        with pytest.raises(ValueError, match=str(past)) as info:
            self.s.add(arg)
        message = str(info.value)
        assert WIDEST[self.kind] in message
        if WIDEST[self.kind] != "hash":
            assert "index=" in message  # suggests the kind that takes it
        self._assert_exactly(before)

    @rule(values=id_lists, dtype=dtypes, layout=layouts)
    def discard(self, values, dtype, layout):
        arg, vals = make_input(values, dtype, layout)
        removed = swap_and_pop(self.order, vals)
        assert self.s.discard(arg) == removed
        self.model.difference_update(vals)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), dtype=dtypes, layout=layouts)
    def remove_present(self, data, dtype, layout):
        batch = data.draw(
            st.lists(st.sampled_from(sorted(self.model)), min_size=1, max_size=8)
        )
        arg, vals = make_input(batch, dtype, layout)
        removed = swap_and_pop(self.order, vals)
        assert removed == len(set(vals))
        assert self.s.remove(arg) == removed
        self.model.difference_update(vals)

    @rule(data=st.data(), dtype=dtypes, layout=st.sampled_from(LAYOUTS[:-1]))
    def remove_with_absent(self, data, dtype, layout):
        present = sorted(self.model)
        head = (
            data.draw(st.lists(st.sampled_from(present), max_size=4)) if present else []
        )
        absent = data.draw(st.integers(0, LARGE).filter(lambda x: x not in self.model))
        tail = data.draw(st.lists(any_id, max_size=3))
        arg, _ = make_input([*head, absent, *tail], dtype, layout)
        before = list(self.order)
        with pytest.raises(KeyError) as info:
            self.s.remove(arg)
        assert str(absent) in str(info.value)
        self._assert_exactly(before)

    @rule(
        values=id_lists,
        extra=st.lists(st.sampled_from(OUT_OF_RANGE), max_size=2),
        dtype=dtypes,
        layout=layouts,
    )
    def queries(self, values, extra, dtype, layout):
        arg, vals = make_input(values + extra, dtype, layout)
        pos = {x: k for k, x in enumerate(self.order)}
        got = self.s.contains(arg)
        idx = self.s.index(arg)
        if layout == "scalar" and vals:
            assert isinstance(got, (bool, np.bool_))
            assert bool(got) == (vals[0] in self.model)
            assert int(idx) == pos.get(vals[0], -1)
        else:
            assert isinstance(got, np.ndarray)
            assert got.dtype == np.bool_
            np.testing.assert_array_equal(got, [x in self.model for x in vals])
            np.testing.assert_array_equal(idx, [pos.get(x, -1) for x in vals])
        for x in vals[:3]:
            assert (x in self.s) == (x in self.model)

    @rule(values=id_lists, dtype=dtypes, layout=layouts)
    def keep_only(self, values, dtype, layout):
        arg, vals = make_input(values, dtype, layout)
        keep = self.model & set(vals)
        assert self.s.keep_only(arg) == len(self.model) - len(keep)
        self.model = keep
        self._adopt_order()

    @rule()
    def clear(self):
        assert self.s.clear() is None
        self.model.clear()
        self.order.clear()
        self._kill_tokens()

    @rule()
    def sort(self):
        assert self.s.sort() is None
        self.order.sort()
        self._kill_tokens()

    @rule()
    def checkpoint(self):
        tok = self.s.checkpoint()
        self.seq += 1
        self.tokens.append(Token(tok, frozenset(self.model), self.seq))

    @precondition(lambda self: any(t.state == "live" for t in self.tokens))
    @rule(data=st.data())
    def rollback(self, data):
        rec = data.draw(st.sampled_from(self._tokens("live")))
        before = len(self.order)
        self.s.rollback(rec.token)
        self.model = set(rec.snap)
        self._adopt_order()
        for t in self.tokens:
            if t.seq > rec.seq:
                t.state = "dead"
        rec.state = "maybe"
        restored = len(self.order) - before
        if restored and data.draw(st.booleans(), label="then as many discarded"):
            # At once, with no query between (the invariants' queries would
            # make anything kept about the members anew): as many removals
            # as the rollback restored bring back the size and epoch the
            # set had before it, with other members.
            gone = data.draw(
                st.lists(
                    st.sampled_from(self.order),
                    min_size=restored,
                    max_size=restored,
                    unique=True,
                ),
                label="discarded",
            )
            swap_and_pop(self.order, gone)
            assert self.s.discard(gone) == restored
            self.model.difference_update(gone)

    @precondition(lambda self: any(t.state == "dead" for t in self.tokens))
    @rule(data=st.data())
    def rollback_dead(self, data):
        rec = data.draw(st.sampled_from(self._tokens("dead")))
        before = list(self.order)
        with pytest.raises(ValueError):
            self.s.rollback(rec.token)
        self._assert_exactly(before)

    @rule(data=st.data(), victims=st.lists(small_id, max_size=4))
    def invalidate_by_add_then_rollback(self, data, victims):
        tok = self.s.checkpoint()
        self.seq += 1
        self.tokens.append(Token(tok, frozenset(self.model), self.seq))
        self.s.discard(victims)
        swap_and_pop(self.order, victims)
        self.model.difference_update(victims)
        fresh = data.draw(st.integers(0, LARGE).filter(lambda x: x not in self.model))
        assert self.s.add(fresh) == 1
        self.order.append(fresh)
        self.model.add(fresh)
        self.ever_added.add(fresh)
        self._kill_tokens()
        before = list(self.order)
        with pytest.raises(ValueError):
            self.s.rollback(tok)
        self._assert_exactly(before)

    @rule(
        op=st.sampled_from(["discard", "remove", "keep_only", "add", "contains"]),
        start=st.integers(0, 5),
        step=st.sampled_from([1, 2, 3, -1, -2]),
    )
    def own_ids_view(self, op, start, step):
        """Pass a view of the set's own ``ids`` back to it (aliasing)."""
        view = self.s.ids[start::step]
        vals = view.tolist()
        if op == "discard" or op == "remove":
            removed = swap_and_pop(self.order, vals)
            assert getattr(self.s, op)(view) == removed == len(vals)
            self.model.difference_update(vals)
        elif op == "keep_only":
            keep = self.model & set(vals)
            assert self.s.keep_only(view) == len(self.model) - len(keep)
            self.model = keep
            self._adopt_order()
        elif op == "add":
            assert self.s.add(view) == 0
            self._blur_tokens()
        else:
            assert self.s.contains(view).all()

    @rule(values=id_lists)
    def copy_is_independent(self, values):
        c = self.s.copy()
        assert isinstance(c, SparseSet)
        assert set(c.ids.tolist()) == self.model
        assert c == self.s
        c.add(values)
        c.discard(self.order[:3])
        c.add(LARGE + 1)
        self._assert_exactly(self.order)

    @rule(
        values=id_lists,
        capacity=st.sampled_from([0, 8, 300, 6_000]),
        form=st.sampled_from(["sparseset", "set", "array", "list"]),
    )
    def algebra(self, values, capacity, form):
        # Half the time the other set is of another kind.
        other_kind = self.kind if capacity in (0, 300) else "flat"
        t = SparseSet.from_ids(values, capacity=capacity, index=other_kind)
        other = set(values)
        if form == "sparseset":
            b = t
        elif form == "set":
            b = set(values)
        elif form == "array":
            b = np.array(values, dtype=np.int64)
        else:
            b = list(values)
        s, m = self.s, self.model
        if form in ("sparseset", "set"):
            assert set((s | b).ids.tolist()) == m | other
            assert set((s & b).ids.tolist()) == m & other
            assert set((s - b).ids.tolist()) == m - other
            assert set((s ^ b).ids.tolist()) == m ^ other
            assert (s <= b) == (m <= other)
            assert (s >= b) == (m >= other)
            assert (s == b) == (m == other)
        assert set(s.union(b).ids.tolist()) == m | other
        assert set(s.intersection(b).ids.tolist()) == m & other
        assert set(s.difference(b).ids.tolist()) == m - other
        assert set(s.symmetric_difference(b).ids.tolist()) == m ^ other
        assert s.issubset(b) == (m <= other)
        assert s.issuperset(b) == (m >= other)
        assert s.isdisjoint(b) == m.isdisjoint(other)
        assert set(t.ids.tolist()) == other
        if self.kind in KINDS:
            assert s.copy().kind == s.union(b).kind == self.kind
        else:  # results adapt too
            assert s.copy().kind == s.kind
            assert s.copy()._engine.index_name == s.union(b)._engine.index_name
            assert s.union(b)._engine.index_name == self.kind
        self._assert_exactly(self.order)

    @rule(
        values=id_lists,
        op=st.sampled_from(["|=", "&=", "-=", "^=", "update", "difference_update"]),
        use_sparseset=st.booleans(),
    )
    def in_place_algebra(self, values, op, use_sparseset):
        other = set(values)
        b = SparseSet.from_ids(values, index=self.kind) if use_sparseset else other
        s = self.s
        if op == "|=":
            s |= b
            want = self.model | other
        elif op == "&=":
            s &= b
            want = self.model & other
        elif op == "-=":
            s -= b
            want = self.model - other
        elif op == "^=":
            s ^= b
            want = self.model ^ other
        elif op == "update":
            s.update(values)
            want = self.model | other
        else:
            s.difference_update(values)
            want = self.model - other
        assert s is self.s
        adds_new = bool(want - self.model)
        self.model = want
        self.ever_added.update(want)
        self._adopt_order()
        if adds_new:
            self._kill_tokens()
        else:
            self._blur_tokens()

    @precondition(lambda self: self.model)
    @rule()
    def pop(self):
        x = self.s.pop()
        assert int(x) in self.model
        self.model.remove(int(x))
        self._adopt_order()
        self._blur_tokens()

    @precondition(lambda self: not self.model)
    @rule()
    def pop_empty(self):
        with pytest.raises(KeyError):
            self.s.pop()

    @rule(capacity=st.one_of(st.integers(0, 2 * LARGE), st.integers(0, 20)))
    def reserve(self, capacity):
        self.s.reserve(capacity)
        self._assert_exactly(self.order)
        # n distinct ids need sparse and dense of at least n slots, so a
        # reserve up to n cannot grow; beyond that it may (and growth
        # invalidates checkpoints), so the tokens' fate is unknown.
        if capacity > len(self.model):
            self._blur_tokens()

    # ----------------------------------------------------------- invariants

    @invariant()
    def matches_model(self):
        s = self.s
        ids = s.ids
        assert not ids.flags.writeable
        assert len(s) == len(self.model)
        assert set(ids.tolist()) == self.model
        assert ids.tolist() == self.order
        assert len(np.unique(ids)) == len(ids)

    @invariant()
    def index_and_contains_agree(self):
        s = self.s
        ids = s.ids
        n = len(ids)
        np.testing.assert_array_equal(s.index(ids), np.arange(n))
        assert s.contains(ids).all()
        for k in {0, n // 2, n - 1} if n else ():
            assert s.index(ids[k]) == k
            assert s.index(int(ids[k])) == k
        probe = np.concatenate(
            [UNIVERSE, np.array(sorted(self.ever_added), dtype=np.int64)]
        )
        want = np.array([x in self.model for x in probe.tolist()], dtype=bool)
        np.testing.assert_array_equal(s.contains(probe), want)
        idx = s.index(probe)
        assert (idx[~want] == -1).all()
        np.testing.assert_array_equal(ids[idx[want]], probe[want])

    @invariant()
    def index_holds_the_members(self):
        index = self.s._engine.state.sparse
        kind = self.s.kind  # what an adapting set uses now
        assert kind in KINDS and (kind == self.kind or self.kind == "auto")
        if kind == "hash":
            table, used = index.table, int(index.meta[0])
            keys = kernels.hashed.entries(index)[1]
            # No tombstones: every used slot is a key, each key once.
            assert keys.shape[0] == used
            assert np.unique(keys).shape[0] == used
            # never past the load limit (an adapting set's is its own)
            load = int(index.meta[kernels.hashed.LOAD])
            assert load == (50 if self.kind == "hash" else 80)
            assert used * 100 <= kernels.hashed.slots_of(table) * load
            assert set(self.model) <= set(keys.tolist())
        if kind == "paged":
            paged, used = kernels.paged, index.used
            # the pools hold what they handed out, and the live part of it
            live = paged.FIRST_NODE + used[paged.USED_LIVE_NODES]
            assert live <= used[paged.USED_NODES] <= index.directory.shape[0]
            live = paged.FIRST_SLOT + used[paged.USED_LIVE_SLOTS]
            assert live <= used[paged.USED_SLOTS] <= index.pages.shape[0]
            # the directory is deep enough for every member (it never shrinks)
            depth = int(used[paged.USED_DEPTH])
            assert 1 <= depth <= 3
            assert max(self.model, default=0) < 2 ** (12 * (depth + 1))
            # the null node stays empty
            assert index.directory[0] == 0
        assert self.s.nbytes >= sum(
            array.nbytes for array in (index if isinstance(index, tuple) else [index])
        )
        for k, x in enumerate(self.order[:5]):
            assert int(kernels.kinds.lookup(index, x)) == k


@pytest.mark.parametrize("kind", [*KINDS, "auto"])
def test_sparse_set_machine(kind):
    run_state_machine_as_test(lambda: SparseSetMachine(kind))
