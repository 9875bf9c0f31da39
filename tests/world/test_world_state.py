"""Stateful test: World against a Python model of entities and their components.

The machine drives a ``World`` with components ``pos`` (f8, 2), ``vel``
(f8, 2) and the tag ``frozen``, optionally with an owning group over
``pos`` and ``vel``: create, destroy, add, remove, discard, group updates,
views, save/load and pickle round trips, and operations on dead handles.

The model is ``{handle: {component: row}}`` for live entities plus every
handle that ever died. After every step:

- the group invariant: the entities having both owned components fill rows
  ``[0, len(group))`` of both stores, in the same order;
- every store holds exactly the model's entities and values;
- the stale-handle rule: every dead handle is reported dead and absent, and
  no live entity's handle equals a dead one.
"""

import pickle

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

from sparseset import DeadHandleError, World
from sparseset.sets.index_kinds import KINDS

COMPONENTS = ("pos", "vel", "frozen")
VALUED = ("pos", "vel")

pytestmark = pytest.mark.filterwarnings("error")


class WorldMachine(RuleBasedStateMachine):
    def __init__(self, kind="flat"):
        super().__init__()
        self.kind = kind
        self.world = World(index=kind)
        self.world.register("pos", "f8", shape=(2,))
        self.world.register("vel", "f8", shape=(2,))
        self.world.register("frozen")
        self.model = {}  # live handle -> {component: (x, y) or None}
        self.dead = set()
        self.group = None
        self.serial = 0

    # -- helpers ----------------------------------------------------------

    def fresh_row(self):
        self.serial += 1
        return (float(self.serial), float(-self.serial))

    def live(self):
        return sorted(self.model)

    def pick(self, data, pool, max_size=6):
        if not pool:
            return []
        return data.draw(st.lists(st.sampled_from(pool), max_size=max_size))

    def assert_unchanged(self, before):
        assert self.snapshot() == before

    def snapshot(self):
        w = self.world
        state = {"alive": sorted(w.entities.tolist())}
        for name in COMPONENTS:
            store = w[name]
            state[name] = store.ids.tolist()
            for column in store.columns:
                state[name + "." + column] = store[column].tolist()
        return state

    # -- rules ------------------------------------------------------------

    @initialize(
        grouped=st.sampled_from([True, True, False]),
        count=st.integers(0, 12),
        data=st.data(),
    )
    def populate(self, grouped, count, data):
        # Most runs own pos and vel by a group (the riskiest bookkeeping),
        # and start with entities holding both, so removals hit the group.
        if grouped:
            self.group = self.world.group("vel", "pos")
        self.create(count)
        for name in VALUED:
            handles = self.pick(data, self.live(), max_size=count)
            self.add_rows(name, handles)

    @rule(count=st.integers(0, 8))
    def create(self, count):
        handles = self.world.create(count)
        assert handles.dtype == np.int64 and handles.shape == (count,)
        for h in handles.tolist():
            assert h not in self.model and h not in self.dead
            self.model[h] = {}

    @rule(data=st.data())
    def destroy(self, data):
        handles = self.pick(data, self.live())
        killed = self.world.destroy(np.array(handles, np.int64))
        assert killed == len(set(handles))
        for h in set(handles):
            del self.model[h]
            self.dead.add(h)

    @precondition(lambda self: self.dead)
    @rule(data=st.data())
    def destroy_with_a_dead_handle(self, data):
        handles = self.pick(data, self.live(), max_size=3)
        stale = data.draw(st.sampled_from(sorted(self.dead)))
        position = data.draw(st.integers(0, len(handles)))
        handles.insert(position, stale)
        before = self.snapshot()
        with pytest.raises(ValueError, match=r"dead|never created"):
            self.world.destroy(handles)
        self.assert_unchanged(before)

    @rule(data=st.data(), name=st.sampled_from(COMPONENTS))
    def add(self, data, name):
        handles = self.pick(data, self.live())
        self.add_rows(name, handles)

    def add_rows(self, name, handles):
        if name == "frozen":
            added = self.world.add(name, handles)
            rows = [None] * len(handles)
        else:
            rows = [self.fresh_row() for _ in handles]
            values = np.array(rows, np.float64).reshape(len(handles), 2)
            added = self.world.add(name, handles, **{name: values})
        new = {h for h in handles if name not in self.model[h]}
        assert added == len(new)
        for h, row in zip(handles, rows, strict=True):
            self.model[h][name] = row  # the last value wins

    @rule(data=st.data(), name=st.sampled_from(COMPONENTS))
    def remove_or_discard(self, data, name):
        handles = self.pick(data, self.live())
        holders = {h for h in handles if name in self.model[h]}
        if data.draw(st.booleans()):
            removed = self.world.discard(name, handles)
        elif holders == set(handles):
            removed = self.world.remove(name, handles)
        else:
            before = self.snapshot()
            with pytest.raises(KeyError, match="has no"):
                self.world.remove(name, handles)
            self.assert_unchanged(before)
            return
        assert removed == len(holders)
        for h in holders:
            del self.model[h][name]

    @precondition(lambda self: self.dead)
    @rule(data=st.data(), name=st.sampled_from(COMPONENTS))
    def change_through_a_dead_handle(self, data, name):
        stale = data.draw(st.sampled_from(sorted(self.dead)))
        handles = [*self.pick(data, self.live(), max_size=2), stale]
        before = self.snapshot()
        kwargs = {} if name == "frozen" else {name: 1.0}
        action = data.draw(st.sampled_from(["add", "remove", "discard", "get"]))
        with pytest.raises(DeadHandleError):
            if action == "add":
                self.world.add(name, handles, **kwargs)
            else:
                getattr(self.world, action)(name, handles)
        self.assert_unchanged(before)

    @precondition(lambda self: self.group is not None)
    @rule(dt=st.sampled_from([0.5, 2.0, -1.0]))
    def group_update(self, dt):
        g = self.group
        g["pos"] += g["vel"] * dt
        for components in self.model.values():
            if "pos" in components and "vel" in components:
                (x, y), (vx, vy) = components["pos"], components["vel"]
                components["pos"] = (x + vx * dt, y + vy * dt)

    @rule(
        include=st.lists(st.sampled_from(COMPONENTS), min_size=1, unique=True),
        excluded=st.sampled_from(COMPONENTS),
        use_exclude=st.booleans(),
    )
    def view_matches(self, include, excluded, use_exclude):
        exclude = (excluded,) if use_exclude and excluded not in include else ()
        view = self.world.view(*include, exclude=exclude)
        expected = {
            h
            for h, components in self.model.items()
            if all(name in components for name in include)
            and not any(name in components for name in exclude)
        }
        ids = view.ids.tolist()
        assert len(ids) == len(set(ids)) == len(view)
        assert set(ids) == expected
        for name in include:
            store = self.world[name]
            assert store.ids[view.rows(name)].tolist() == ids

    @precondition(lambda self: self.group is None)
    @rule(
        first=st.sampled_from(VALUED),
        by=st.sampled_from(["id", "as_other", "key"]),
    )
    def sort(self, first, by):
        store = self.world[first]
        if by == "id":
            store.sort()
            assert store.ids.tolist() == sorted(store.ids.tolist())
        elif by == "as_other":
            other = self.world["vel" if first == "pos" else "pos"]
            store.sort_as(other)
            shared = [h for h in other.ids.tolist() if h in store]
            assert store.ids[: len(shared)].tolist() == shared
        else:
            store.sort(key=store[first][:, 0])
            keys = store[first][:, 0]
            assert (np.diff(keys) >= 0).all()

    @rule(how=st.sampled_from(["save", "pickle"]))
    def round_trip(self, how):
        if how == "pickle":
            world = pickle.loads(pickle.dumps(self.world))
        else:
            path = self.tmp_dir / "world.npz"
            self.world.save(path)
            world = World.load(str(path))
        before = self.snapshot()
        self.world = world
        assert self.snapshot() == before
        assert world.kind == self.kind
        assert all(world[name].kind == self.kind for name in COMPONENTS)
        if self.group is not None:
            assert len(world.groups) == 1
            self.group = world.group("pos", "vel")

    # -- invariants -------------------------------------------------------

    @invariant()
    def group_is_packed(self):
        if self.group is None:
            return
        pos, vel = self.world["pos"], self.world["vel"]
        length = len(self.group)
        assert pos.ids[:length].tolist() == vel.ids[:length].tolist()
        both = {h for h, c in self.model.items() if "pos" in c and "vel" in c}
        assert set(pos.ids[:length].tolist()) == both
        assert self.group.ids.tolist() == pos.ids[:length].tolist()
        block = self.group["pos"]
        assert block.flags.c_contiguous and block.shape == (length, 2)

    @invariant()
    def stores_match_the_model(self):
        w = self.world
        assert len(w) == len(self.model)
        assert sorted(w.entities.tolist()) == self.live()
        for name in COMPONENTS:
            store = w[name]
            expected = {h: c[name] for h, c in self.model.items() if name in c}
            ids = store.ids.tolist()
            assert sorted(ids) == sorted(expected)
            for column in store.columns:
                rows = [tuple(row) for row in store[column].tolist()]
                assert rows == [expected[h] for h in ids]

    @invariant()
    def dead_handles_stay_dead(self):
        if not self.dead:
            return
        dead = np.array(sorted(self.dead), np.int64)
        assert not self.world.alive(dead).any()
        for name in COMPONENTS:
            assert not self.world.has(name, dead).any()
            assert (self.world[name].index(dead) == -1).all()
        assert not self.dead & set(self.model)


@pytest.mark.parametrize("kind", list(KINDS))
def test_world_state_machine(tmp_path, kind):
    # Save/load round trips write here; one file, overwritten each time.
    WorldMachine.tmp_dir = tmp_path
    run_state_machine_as_test(lambda: WorldMachine(kind))
