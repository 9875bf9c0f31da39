"""Change tracking: readers' added / changed / removed, exact, against a model.

A state machine drives a world with a tracked component through every
Python mutation path (create, destroy, add, replace, add_at, set, touch,
remove, discard, clear, deferred commands, hooks, sorts, a group's
packing) with several readers that commit at their own pace, and checks
each reader's three answers after every step.
"""

import gc
import json
import pickle

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import settings
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    precondition,
    rule,
)
from numba import njit

from sparseset import FormatError, World
from sparseset.world import persistence, tracking

pytestmark = pytest.mark.boundscheck


def test_an_untracked_component_has_no_reader_and_touch_does_nothing():
    w = World()
    w.register("pos", "f8")
    e = w.create(1)
    with pytest.raises(ValueError, match=r"not tracked.*track=True"):
        w.reader("pos")
    w.touch("pos", e)  # nothing, not even a check
    assert "_stamps" not in w["pos"]._stored


@pytest.mark.parametrize("track", [False, True])
def test_touch_is_no_column_a_component_may_have(track):
    w = World()
    with pytest.raises(ValueError, match="'touch' is reserved"):
        w.register("body", {"mass": "f8", "touch": "i8"}, track=track)
    with pytest.raises(ValueError, match="'touch' is reserved"):
        w.register("touch", "f8", track=track)  # one column named like it
    assert w.components == ()
    w.register("touch", {"count": "i8"}, track=track)  # the component may
    assert w.components == ("touch",)


def test_touch_checks_its_handles_and_marks_nothing_on_error():
    w = World()
    w.register("pos", "f8", track=True)
    e = w.create(3)
    w.add("pos", e[:2], pos=0.0)
    r = w.reader("pos")
    with pytest.raises(KeyError, match="no 'pos' component"):
        w.touch("pos", e[[0, 2]])
    w.destroy(e[1])
    with pytest.raises(ValueError, match="dead"):
        w["pos"].touch(e[[0, 1]])
    assert r.changed().tolist() == []


def test_each_event_reaches_each_reader_exactly_once():
    w = World()
    w.register("hp", "i4", track=True)
    early = w.reader("hp")
    e = w.create(3)
    w.add("hp", e)
    late = w.reader("hp")  # sees what happens after it is made
    w.set("hp", e[0], hp=5)
    assert sorted(early.added().tolist()) == e.tolist()
    assert late.added().tolist() == [] and late.changed().tolist() == [e[0]]
    early.commit()
    assert early.changed().tolist() == []
    w.destroy(e[2])
    assert early.removed().tolist() == [e[2]] == late.removed().tolist()
    late.commit()
    assert late.removed().tolist() == [] and early.removed().tolist() == [e[2]]


def test_a_destroyed_handle_is_removed_even_once_its_index_is_reused():
    w = World()
    w.register("hp", "i4", track=True)
    r = w.reader("hp")
    old = w.create(1)
    w.add("hp", old)
    r.commit()
    w.destroy(old)
    new = w.create(1)  # the same index, the next generation
    w.add("hp", new)
    assert r.removed().tolist() == [old[0]] and r.added().tolist() == [new[0]]


def test_removal_records_live_until_every_open_reader_has_read_them():
    w = World()
    w.register("hp", "i4", track=True)
    log = w._tracker.log("hp")
    e = w.create(100)
    w.add("hp", e)
    w["hp"].remove(e[:10])
    assert len(log) == 0  # no reader: nothing kept
    a, b = w.reader("hp"), w.reader("hp")
    w["hp"].remove(e[10:20])
    a.commit()
    assert len(log) == 10  # b has not read them
    b.close()
    assert len(log) == 0
    w["hp"].remove(e[20:30])
    del a
    gc.collect()
    w["hp"].remove(e[30:100])  # a growth prunes: nobody reads any more
    c = w.reader("hp")
    c.commit()
    assert len(log) == 0
    with pytest.raises(ValueError, match="closed"):
        b.added()


def test_nbytes_counts_four_bytes_per_tracked_row():
    plain, tracked = World(), World()
    plain.register("pos", "f8")
    tracked.register("pos", "f8", track=True)
    for w in (plain, tracked):
        w.add("pos", w.create(1000), pos=0.0)
    grown = tracked["pos"].nbytes - plain["pos"].nbytes
    assert grown == 4 * tracked["pos"]._array("_stamps").shape[0]


def test_the_clock_rebases_without_losing_an_event(monkeypatch):
    monkeypatch.setattr(tracking, "TICK_LIMIT", 20)
    w = World()
    w.register("hp", "i4", track=True)
    slow, fast = w.reader("hp"), w.reader("hp")
    e = w.create(4)
    w.add("hp", e[:2])
    for k in range(50):
        fast.commit()
        w.set("hp", e[k % 2], hp=k)
    w.add("hp", e[2:])
    w.remove("hp", e[0])
    assert w._tracker.tick <= 21  # renumbered, whoever never commits
    assert sorted(slow.added().tolist()) == e[1:].tolist()
    assert sorted(slow.changed().tolist()) == e[1:].tolist()
    assert slow.removed().tolist() == [e[0]]
    assert sorted(fast.added().tolist()) == e[2:].tolist()
    assert sorted(fast.changed().tolist()) == [e[1], e[2], e[3]]


def test_stamps_fit_their_type_across_the_clock_s_real_limit():
    # The clock taken to its last ticks: stamps written at them fit uint16,
    # and the renumbering at the limit loses no event.
    w = World()
    w.register("hp", "i4", track=True)
    e = w.create(3)
    reader = w.reader("hp")
    w._tracker.tick = tracking.TICK_LIMIT - 2
    w.add("hp", e[:2])
    for k in range(4):
        reader.commit()
        w.set("hp", e[k % 2], hp=k)
        assert sorted(reader.changed().tolist()) == [e[k % 2]]
        stamps = w["hp"]._array("_stamps")[: len(w["hp"])]
        assert stamps.dtype == np.uint16 and int(stamps.max()) <= w._tracker.tick
    assert w._tracker.tick < 10  # renumbered once the limit was reached
    w.add("hp", e[2])
    assert reader.added().tolist() == [e[2]]


def test_a_reader_opened_at_the_clock_s_limit_starts_after_the_renumbering():
    w = World()
    w.register("hp", "i4", track=True)
    e = w.create(2)
    old = w.reader("hp")
    w.add("hp", e[0])
    w._tracker.tick = tracking.TICK_LIMIT
    new = w.reader("hp")  # sets off the renumbering
    w.add("hp", e[1])
    assert w._tracker.tick < 10
    assert sorted(old.added().tolist()) == e.tolist()
    assert new.added().tolist() == [e[1]]


def test_a_world_holds_a_bounded_number_of_open_readers(monkeypatch):
    monkeypatch.setattr(tracking, "MAX_READERS", 3)
    w = World()
    w.register("hp", "i4", track=True)
    w.register("mp", "i4", track=True)
    held = [w.reader("hp"), w.reader("mp"), w.reader("hp")]
    with pytest.raises(RuntimeError, match="3 open readers"):
        w.reader("mp")
    held.pop().close()
    assert w.reader("mp").name == "mp"


def test_group_and_view_touch_mark_their_rows():
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(4)
    w.add("pos", e, pos=0.0)
    w.add("vel", e[1:3], vel=1.0)
    g = w.group("pos", "vel")
    r = w.reader("pos")
    g.touch("pos")
    assert sorted(r.changed().tolist()) == e[1:3].tolist()
    r.commit()
    w.view("pos", exclude=("vel",)).touch("pos")
    assert sorted(r.changed().tolist()) == [e[0], e[3]]
    with pytest.raises(KeyError):
        g.touch("mass")
    with pytest.raises(KeyError):
        w.view("pos", exclude=("vel",)).touch("vel")


def test_a_group_touch_stays_exact_as_rows_move_after_it():
    # A whole group's touch is noted as one range of rows; the rows that
    # move out of it or into it later must keep what happened to them.
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(6)
    w.add("pos", e, pos=0.0)
    w.add("vel", e[:4], vel=1.0)
    g = w.group("pos", "vel")
    early, late = w.reader("pos"), None
    g.touch("pos")  # e[0:4]
    late = w.reader("pos")
    w.touch("pos", e[5])  # not in the group; after the range
    g.touch("pos")  # covers the held range: replaces it
    w.remove("vel", e[1])  # e[1] leaves the group: its row moves out
    w.add("vel", e[4], vel=1.0)  # e[4] joins: its row moves in, unwritten
    assert sorted(early.changed().tolist()) == [e[0], e[1], e[2], e[3], e[5]]
    assert sorted(late.changed().tolist()) == [e[0], e[1], e[2], e[3], e[5]]
    early.commit()
    g.touch("pos")
    w.remove("pos", e[0])  # swap-and-pop inside the range
    assert sorted(early.changed().tolist()) == [e[2], e[3], e[4]]
    assert early.removed().tolist() == [e[0]]


def test_a_range_of_rows_touched_is_settled_before_a_twin_exists():
    # A twin could move rows unseen: handing it out writes the noted range
    # into the stamps, and touches while it exists are stamped row by row.
    w = World()
    w.register("hp", "i4", track=True)
    e = w.create(4)
    w.add("hp", e, hp=1)
    r = w.reader("hp")
    w["hp"].touch_rows(slice(0, 2))  # e[0], e[1]
    twin = w["hp"].jit
    assert twin_apply(twin, 1, e[:1]) == 1  # e[3]'s row moves into row 0
    assert sorted(r.changed().tolist()) == [e[1]]
    assert r.removed().tolist() == [e[0]]
    r.commit()
    w["hp"].touch_rows(slice(0, 1))  # e[3], now in row 0
    assert twin_apply(twin, 1, e[3:]) == 1
    assert r.changed().tolist() == []
    assert r.removed().tolist() == [e[3]]


def test_a_write_scope_marks_at_exit_and_refuses_moved_rows():
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(4)
    w.add("pos", e, pos=0.0)
    w.add("vel", e[:3], vel=2.0)
    g = w.group("pos", "vel")
    r = w.reader("pos")
    with g.write("pos") as pos:
        assert r.changed().tolist() == []  # marked at the end
        pos += 1.0
    assert sorted(r.changed().tolist()) == e[:3].tolist()
    r.commit()
    with pytest.raises(ZeroDivisionError), g.write("pos", "vel") as (pos, vel):
        pos += vel
        raise ZeroDivisionError
    assert sorted(r.changed().tolist()) == e[:3].tolist()  # written before
    r.commit()
    with pytest.raises(RuntimeError, match="rows moved"), g.write("pos") as pos:
        w.remove("vel", e[0])  # the group's rows move under the array
        pos[0] = 9.0
    assert r.changed().tolist() == []
    with pytest.raises(TypeError), g.write():
        pass


@njit
def twin_apply(twin, op, handles):
    """``op`` (0 add, 1 remove, 2 touch) of each handle, in @njit code."""
    done = 0
    for h in handles:
        if op == 0:
            done += twin.add(h)
        elif op == 1:
            done += twin.remove(h)
        else:
            done += twin.touch(h)
    return done


def test_twins_changes_are_recorded_like_any_other():
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(4)
    w.add("pos", e[:2], pos=0.0)
    w.add("vel", e, vel=1.0)
    r = w.reader("pos")
    twin = w["pos"].jit
    assert twin_apply(twin, 0, e[2:]) == 2
    assert twin_apply(twin, 2, e[[0, 3]]) == 2
    assert twin_apply(twin, 1, e[[1, 1]]) == 1
    assert sorted(r.added().tolist()) == e[2:].tolist()
    assert sorted(r.changed().tolist()) == [e[0], e[2], e[3]]
    assert r.removed().tolist() == [e[1]]
    r.commit()
    assert r.changed().tolist() == [] == r.removed().tolist()
    # An untracked component's twin touches nothing, and answers the same.
    assert twin_apply(w["vel"].jit, 2, e[:2]) == 2
    many = w.create(100)
    assert twin_apply(twin, 0, many) == 100
    assert twin_apply(twin, 1, many) == 100  # the twin's log grows
    assert sorted(r.removed().tolist()) == sorted(many.tolist())


def test_a_twins_touch_of_a_dead_or_absent_handle_marks_nothing():
    """A twin's touch answers whether the handle has the component, and
    marks nothing when it has not: a dead handle, one without the
    component, a handle never created, a negative number."""
    w = World()
    w.register("pos", "f8", track=True)
    e = w.create(4)
    w.add("pos", e[:2], pos=0.0)
    w.destroy(e[1])
    r = w.reader("pos")
    twin = w["pos"].jit
    strays = np.array([e[1], e[2], e[3] + 2**40, -5])
    assert twin_apply(twin, 2, strays) == 0
    assert r.changed().tolist() == []
    assert twin_apply(twin, 2, e[:1]) == 1
    assert r.changed().tolist() == [e[0]]


# -- the state machine ---------------------------------------------------------


class Tracking(RuleBasedStateMachine):
    """A tracked component ``pos`` (and an untracked ``vel``) driven through
    every Python mutation path; readers checked against a model."""

    readers = Bundle("readers")

    @initialize()
    def start(self):
        self.w = World()
        self.w.register("pos", "i8", track=True)
        self.w.register("vel", "i8")
        self.alive = []
        self.members = set()
        self.models = {}  # reader -> [got, wrote, lost]
        self.group = None

    # The model's events.
    def got(self, handles):
        handles = list(dict.fromkeys(handles))
        new = [h for h in handles if h not in self.members]
        self.members.update(new)
        for got, wrote, _ in self.models.values():
            got.update(new)
            wrote.update(handles)

    def wrote(self, handles):
        for _, wrote, _ in self.models.values():
            wrote.update(handles)

    def lost(self, handles):
        gone = [h for h in dict.fromkeys(handles) if h in self.members]
        self.members.difference_update(gone)
        for _, _, lost in self.models.values():
            lost.update(gone)

    def some(self, data, pool):
        return data.draw(st.lists(st.sampled_from(sorted(pool)), max_size=6))

    @staticmethod
    def shaped(data, handles):
        """``handles`` as a call may get them: a list, an array of another
        dtype, or one numpy scalar."""
        form = data.draw(st.sampled_from(["list", "int64", "uint64", "scalar"]))
        if form == "scalar" and len(handles) == 1:
            return np.int64(handles[0])
        if form in ("int64", "uint64"):
            return np.array(handles, dtype=form)
        return handles

    @rule(target=readers)
    def new_reader(self):
        r = self.w.reader("pos")
        self.models[r] = [set(), set(), set()]
        return r

    @rule(r=readers)
    def commit(self, r):
        if not r.closed:
            r.commit()
            self.models[r] = [set(), set(), set()]

    @rule(r=consumes(readers))
    def close(self, r):
        r.close()
        self.models.pop(r, None)

    @rule(n=st.integers(0, 4))
    def create(self, n):
        self.alive.extend(self.w.create(n).tolist())

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def add(self, data):
        handles = self.some(data, self.alive)
        self.w.add("pos", handles, pos=1)
        self.got(handles)

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def add_vel(self, data):
        self.w.add("vel", self.some(data, self.alive), vel=1)

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def add_at(self, data):
        handles = self.some(data, self.alive)
        self.w["pos"].add_at(handles, pos=1)
        self.got(handles)

    @precondition(lambda self: self.members)
    @rule(data=st.data(), touch=st.booleans())
    def write(self, data, touch):
        handles = self.some(data, self.members)
        if touch:
            self.w.touch("pos", handles)
        else:
            self.w.set("pos", handles, pos=2)
        self.wrote(handles)

    @precondition(lambda self: self.alive)
    @rule(data=st.data(), strict=st.booleans())
    def remove(self, data, strict):
        if strict and self.members:
            handles = self.some(data, self.members)
            self.w.remove("pos", self.shaped(data, handles))
        else:
            handles = self.some(data, self.alive)
            self.w.discard("pos", self.shaped(data, handles))
        self.lost(handles)

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def destroy(self, data):
        handles = self.some(data, self.alive)
        self.w.destroy(self.shaped(data, handles))
        self.lost(handles)
        self.alive = [h for h in self.alive if h not in set(handles)]

    @rule()
    def clear(self):
        self.w["pos"].clear()
        self.lost(list(self.members))

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def deferred(self, data):
        adds = self.some(data, self.alive)
        drops = self.some(data, self.alive)
        with self.w.deferred() as cmd:
            fresh = cmd.create(2).tolist()
            cmd.add("pos", adds + fresh, pos=3)
            cmd.discard("pos", drops)
        self.alive.extend(fresh)
        self.got(adds + fresh)
        self.lost(drops)

    @rule(left=st.integers(0, 3))
    def near_the_clock_s_limit(self, left):
        # The clock taken to its last ticks: the next commits renumber every
        # stamp (uint16) and every reader's mark, which must lose nothing.
        tracker = self.w._tracker
        tracker.tick = max(tracker.tick, tracking.TICK_LIMIT - left)

    @rule()
    def reorder(self):
        # A sort moves rows (an owned store cannot be sorted: then the
        # group's packing has moved them already).
        if self.group is None:
            self.w["pos"].sort()

    @precondition(lambda self: self.group is None)
    @rule()
    def group(self):
        self.group = self.w.group("pos", "vel")  # packs: rows move

    @precondition(lambda self: self.group is not None)
    @rule(scope=st.booleans())
    def group_write(self, scope):
        if scope:
            with self.group.write("pos") as pos:
                pos += 1
        else:
            self.group.touch("pos")
        self.wrote(self.group.ids.tolist())

    @rule()
    def view_touch(self):
        v = self.w.view("pos", "vel")
        v.touch("pos")
        self.wrote(v.ids.tolist())

    @precondition(lambda self: self.alive and self.group is None)
    @rule(data=st.data(), op=st.sampled_from(["add", "remove", "touch"]))
    def twin(self, data, op):
        # @njit code through the twin (an owned store has none).
        pool = self.members if op == "touch" and self.members else self.alive
        handles = self.some(data, pool)
        code = ["add", "remove", "touch"].index(op)
        twin_apply(self.w["pos"].jit, code, np.array(handles, np.int64))
        if op == "add":
            # A twin's add of a member writes nothing (it answers False).
            self.got([h for h in handles if h not in self.members])
        elif op == "remove":
            self.lost(handles)
        else:
            self.wrote([h for h in handles if h in self.members])

    @invariant()
    def readers_answer_as_the_model(self):
        for r, (got, wrote, lost) in self.models.items():
            assert sorted(r.added().tolist()) == sorted(got & self.members)
            assert sorted(r.changed().tolist()) == sorted(wrote & self.members)
            assert sorted(r.removed().tolist()) == sorted(lost - self.members)
        assert set(self.w["pos"].ids.tolist()) == self.members


# At least 80 runs of 40 steps whatever the profile: more under thorough.
Tracking.TestCase.settings = settings(
    max_examples=max(80, settings.default.max_examples),
    stateful_step_count=max(40, settings.default.stateful_step_count),
    deadline=None,
)
test_tracking_matches_the_model = Tracking.TestCase


@pytest.mark.parametrize("way", ["npz", "parquet", "pickle"])
def test_saving_keeps_which_components_are_tracked(tmp_path, way):
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(3)
    w.add("pos", e, pos=1.0)
    if way == "pickle":
        back = pickle.loads(pickle.dumps(w))
    else:
        path = tmp_path / f"w.{way}"
        w.save(path, format=way)
        back = World.load(path)
    assert back["pos"].tracked and not back["vel"].tracked
    r = back.reader("pos")  # readers are not saved: a new one starts now
    assert r.added().tolist() == [] and r.changed().tolist() == []
    back.touch("pos", e[1])
    assert r.changed().tolist() == [e[1]]


def test_a_file_naming_an_unknown_tracked_component_is_refused():
    w = World()
    w.register("pos", "f8", track=True)
    arrays = persistence.to_arrays(w._state())
    meta = json.loads(str(arrays["meta"]))
    assert meta["tracked"] == ["pos"]
    for bad in (["vel"], ["pos", "pos"]):
        meta["tracked"] = bad
        arrays["meta"] = np.array(json.dumps(meta))
        with pytest.raises(FormatError, match="tracked"):
            persistence.from_arrays(arrays, "a test")
    del meta["tracked"]  # a file from before tracking: nothing tracked
    arrays["meta"] = np.array(json.dumps(meta))
    assert persistence.from_arrays(arrays, "a test").tracked == []
