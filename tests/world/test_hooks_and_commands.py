"""Batch hooks (on_add / on_remove) and deferred commands on a World.

Hooks get arrays, once per call, never empty; on_remove runs while the rows
are still there and, if it raises, the world is unchanged; structural calls
a hook makes wait until the triggering call completes. Deferred commands
apply in order, as batches, at the end of their block; a block that raises
applies nothing. A state machine holds both to a plain Python model.
"""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from sparseset import World
from sparseset.world.hooks import Subscription
from stress import run_threads


class Recorder:
    """Every hook call of a world, as (event, component, handles)."""

    def __init__(self, world, names):
        self.calls = []
        self.subscriptions = []
        for name in names:
            for event in ("add", "remove"):
                subscribe = world.on_add if event == "add" else world.on_remove
                self.subscriptions.append(subscribe(name, self.hook(event, name)))

    def hook(self, event, name):
        def record(handles):
            assert handles.dtype == np.int64 and handles.shape[0] > 0
            assert not handles.flags.writeable
            self.calls.append((event, name, sorted(handles.tolist())))

        return record

    def take(self):
        calls, self.calls = self.calls, []
        return calls


def world_of(*names):
    w = World()
    for name in names:
        w.register(name, "i4")
    return w


# -- hooks ---------------------------------------------------------------------


def test_on_add_sees_each_call_once_with_its_new_members_only():
    w = world_of("hp")
    seen = Recorder(w, ["hp"])
    e = w.create(4)
    assert w.add("hp", e[:2], hp=1) == 2
    assert seen.take() == [("add", "hp", e[:2].tolist())]
    assert w.add("hp", e[[1, 2, 2, 3]], hp=5) == 2  # e[1] is replaced
    assert seen.take() == [("add", "hp", e[2:].tolist())]
    assert w.add("hp", e[:2], hp=9) == 0  # replacements only: no call
    assert w.add("hp", e[:0]) == 0
    assert seen.take() == []


def test_on_remove_runs_before_the_rows_go_for_every_removing_call():
    w = world_of("hp", "mass")
    e = w.create(6)
    w.add("hp", e, hp=np.arange(6))
    w.add("mass", e[::2], mass=7)
    read = []
    w.on_remove("hp", lambda h: read.append(sorted(w.get("hp", h)["hp"].tolist())))
    seen = Recorder(w, ["hp", "mass"])
    w.remove("hp", e[0])
    w["hp"].discard(e[[1, 1, 0]])  # e[0] is gone: only e[1]
    w.destroy(e[2:4])
    assert seen.take() == [
        ("remove", "hp", [e[0]]),
        ("remove", "hp", [e[1]]),
        ("remove", "hp", e[2:4].tolist()),
        ("remove", "mass", [e[2]]),
    ]
    w["hp"].clear()
    assert seen.take() == [("remove", "hp", e[4:].tolist())]
    assert read == [[0], [1], [2, 3], [4, 5]]
    w.discard("hp", e[4:])  # nobody has it now: no call
    assert seen.take() == []


def test_a_raising_on_remove_hook_leaves_the_world_unchanged():
    w = world_of("hp", "mass")
    e = w.create(3)
    w.add("hp", e, hp=1)
    w.add("mass", e, mass=2)
    w.on_remove("hp", lambda h: w.add("mass", h, mass=99))  # deferred, then dropped

    def refuse(handles):
        raise RuntimeError("no")

    w.on_remove("mass", refuse)
    before = (w.entities.tolist(), w["hp"].ids.tolist(), w["mass"]["mass"].tolist())
    for call in (lambda: w.destroy(e[1]), lambda: w["mass"].clear()):
        with pytest.raises(RuntimeError, match="no"):
            call()
        after = (w.entities.tolist(), w["hp"].ids.tolist(), w["mass"]["mass"].tolist())
        assert after == before


def test_a_raising_on_add_hook_keeps_the_addition_and_drops_its_changes():
    w = world_of("hp", "tag")

    def fail(handles):
        w.add("tag", handles)  # deferred: dropped with the error
        raise ValueError("bad hook")

    w.on_add("hp", fail)
    e = w.create(2)
    with pytest.raises(ValueError, match="bad hook"):
        w.add("hp", e, hp=3)
    assert w.has("hp", e).all() and len(w["tag"]) == 0


def test_structural_calls_in_a_hook_wait_for_the_triggering_call():
    w = world_of("pos", "cell")
    during = []

    def place(handles):
        assert w.add("cell", handles, cell=1) == 0  # deferred
        spawned = w.create(1)  # handles now, alive after the call
        during.append((len(w["cell"]), bool(w.alive(spawned[0]))))
        w.add("cell", spawned, cell=2)

    w.on_add("pos", place)
    e = w.create(2)
    w.add("pos", e, pos=0)
    assert during == [(0, False)]
    assert len(w) == 3 and len(w["cell"]) == 3
    assert sorted(w["cell"]["cell"].tolist()) == [1, 1, 2]


def test_hooks_close_and_subscriptions_are_independent():
    w = world_of("hp")
    calls = []
    first = w.on_add("hp", calls.append)
    second = w.on_add("hp", calls.append)
    assert isinstance(first, Subscription) and not first.closed
    w.add("hp", w.create(1))
    first.close()
    first.close()
    w.add("hp", w.create(1))
    with second:
        pass
    w.add("hp", w.create(1))
    assert len(calls) == 3 and first.closed and second.closed


def test_hook_arguments_are_checked():
    w = world_of("hp")
    with pytest.raises(KeyError, match="no component 'x'"):
        w.on_add("x", print)
    with pytest.raises(TypeError, match="callable"):
        w.on_remove("hp", 3)


# -- deferred commands ------------------------------------------------------------


def test_deferred_commands_apply_in_order_as_batches():
    w = world_of("hp", "tag")
    calls = Recorder(w, ["hp", "tag"])
    e = w.create(4)
    w.add("tag", e)
    calls.take()
    with w.deferred() as cmd:
        new = cmd.create(3)
        for h in new:
            cmd.add("hp", h, hp=int(h) + 1)  # a run: one batch
        cmd.remove("tag", e[0])
        cmd.remove("tag", e[1])
        cmd.destroy(e[3])
        cmd.destroy(new[0])  # created, given hp, then destroyed: in order
        assert len(cmd) == 8 and len(w) == 4 and not w.alive(new).any()
    assert calls.take() == [
        ("add", "hp", new.tolist()),
        ("remove", "tag", e[:2].tolist()),
        # The two destroys are one: each component's hooks, in the order
        # the components were registered.
        ("remove", "hp", [new[0]]),
        ("remove", "tag", [e[3]]),
    ]
    assert w.alive(new).tolist() == [False, True, True]
    assert w.get("hp", new[1:])["hp"].tolist() == [int(h) + 1 for h in new[1:]]
    assert len(w) == 5 and w["tag"].ids.tolist() == [e[2]]


def test_a_block_that_raises_applies_nothing_and_its_entities_die_unused():
    w = world_of("hp")
    e = w.create(2)
    with pytest.raises(ZeroDivisionError), w.deferred() as cmd:
        new = cmd.create(2)
        cmd.add("hp", e, hp=1)
        cmd.destroy(e[0])
        raise ZeroDivisionError
    assert len(w) == 2 and len(w["hp"]) == 0 and not w.alive(new).any()
    again = w.create(2)  # the held indexes come back with new generations
    assert sorted(again.tolist()) != sorted(new.tolist())
    assert not w.alive(new).any()


def test_bad_commands_raise_at_once_and_a_failing_one_stops_the_rest():
    w = world_of("hp")
    e = w.create(2)
    with w.deferred() as cmd:
        with pytest.raises(KeyError, match="no component 'x'"):
            cmd.add("x", e)
        with pytest.raises(ValueError, match="outside the range"):
            cmd.add("hp", e, hp=2**40)
        assert len(cmd) == 0
    with pytest.raises(KeyError) as info, w.deferred() as cmd:
        cmd.add("hp", e[0], hp=1)
        cmd.remove("hp", e[1])  # e[1] has no hp: fails when applied
        late = cmd.create(1)
    assert any("remove('hp', ...)" in note for note in info.value.__notes__)
    assert w.has("hp", e).tolist() == [True, False]
    assert not w.alive(late[0]) and len(w) == 2


def test_held_handles_are_dead_until_applied_and_a_save_meanwhile_loads(tmp_path):
    w = world_of("hp")
    cmd = w.deferred()
    held = cmd.create(2)
    assert not w.alive(held).any() and len(w) == 0
    with pytest.raises(ValueError):
        w.add("hp", held)
    w.save(tmp_path / "w.npz")
    back = World.load(tmp_path / "w.npz")
    assert len(back) == 0 and len(back.create(3)) == 3
    cmd.apply()
    assert w.alive(held).all() and len(w) == 2


def test_deferred_adds_keep_a_group_packed():
    w = world_of("a", "b")
    g = w.group("a", "b")
    e = w.create(5)
    with w.deferred() as cmd:
        cmd.add("a", e, a=1)
        cmd.add("b", e[::2], b=2)
    assert len(g) == 3 and sorted(g.ids.tolist()) == e[::2].tolist()


def test_threads_deferring_into_one_world_lose_nothing():
    w = world_of("hp")

    def worker(k):
        def body():
            mine = []
            for _ in range(50):
                with w.deferred() as cmd:
                    h = cmd.create(2)
                    cmd.add("hp", h, hp=k)
                mine.extend(h.tolist())
            return mine

        return body

    made = run_threads([worker(k) for k in range(3)])
    handles = [h for hs in made for h in hs]
    assert len(set(handles)) == len(handles) == 300 == len(w) == len(w["hp"])
    assert w.alive(np.array(handles)).all()


# -- a state machine against a model --------------------------------------------


class HooksAndCommands(RuleBasedStateMachine):
    """Structural calls, direct and deferred, on a world with hooks on both
    of its components, against a model of members and expected hook calls."""

    def __init__(self):
        super().__init__()
        self.w = world_of("a", "b")
        self.recorder = Recorder(self.w, ["a", "b"])
        self.alive = []
        self.members = {"a": set(), "b": set()}
        self.expected = []

    # The model's effect of each command, with the hook calls it makes.
    def model_add(self, name, handles):
        new = [h for h in dict.fromkeys(handles) if h not in self.members[name]]
        self.members[name].update(new)
        if new:
            self.expected.append(("add", name, sorted(new)))

    def model_drop(self, name, handles):
        gone = [h for h in dict.fromkeys(handles) if h in self.members[name]]
        self.members[name].difference_update(gone)
        if gone:
            self.expected.append(("remove", name, sorted(gone)))

    def model_destroy(self, handles):
        for name in ("a", "b"):
            gone = [h for h in dict.fromkeys(handles) if h in self.members[name]]
            if gone:
                self.expected.append(("remove", name, sorted(gone)))
        for name in ("a", "b"):
            self.members[name].difference_update(handles)
        self.alive = [h for h in self.alive if h not in set(handles)]

    def some(self, data):
        return data.draw(st.lists(st.sampled_from(self.alive), max_size=5))

    @rule(n=st.integers(0, 4))
    def create(self, n):
        self.alive.extend(self.w.create(n).tolist())

    @precondition(lambda self: self.alive)
    @rule(data=st.data(), name=st.sampled_from("ab"))
    def add(self, data, name):
        handles = self.some(data)
        self.w.add(name, handles)
        self.model_add(name, handles)

    @precondition(lambda self: self.alive)
    @rule(data=st.data(), name=st.sampled_from("ab"))
    def discard(self, data, name):
        handles = self.some(data)
        self.w.discard(name, handles)
        self.model_drop(name, handles)

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def destroy(self, data):
        handles = self.some(data)
        self.w.destroy(handles)
        self.model_destroy(handles)

    @rule(name=st.sampled_from("ab"))
    def clear(self, name):
        self.w[name].clear()
        self.model_drop(name, list(self.members[name]))

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def deferred(self, data):
        ops = data.draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["add", "discard", "destroy"]),
                    st.sampled_from("ab"),
                    st.lists(st.sampled_from(self.alive), max_size=3),
                ),
                max_size=6,
            )
        )
        dead = set()  # a command never names an entity the buffer destroyed
        for k, (op, name, handles) in enumerate(ops):
            ops[k] = (op, name, [h for h in handles if h not in dead])
            if op == "destroy":
                dead.update(handles)
        with self.w.deferred() as cmd:
            for op, name, handles in ops:
                if op == "destroy":
                    cmd.destroy(handles)
                else:
                    getattr(cmd, op)(name, handles)
        # The model applies runs of one command on one component as one
        # batch, in order.
        k = 0
        while k < len(ops):
            op, name, _ = ops[k]
            stop = k + 1
            while (
                stop < len(ops)
                and ops[stop][0] == op
                and (op == "destroy" or ops[stop][1] == name)
            ):
                stop += 1
            batch = [h for run in ops[k:stop] for h in run[2]]
            if op == "destroy":
                self.model_destroy(batch)
            elif op == "add":
                self.model_add(name, batch)
            else:
                self.model_drop(name, batch)
            k = stop

    @invariant()
    def hooks_saw_exactly_the_model_events(self):
        assert self.recorder.take() == self.expected
        self.expected = []

    @invariant()
    def members_match(self):
        for name in "ab":
            assert set(self.w[name].ids.tolist()) == self.members[name]
        assert sorted(self.w.entities.tolist()) == sorted(self.alive)


HooksAndCommands.TestCase.settings = settings(max_examples=60, deadline=None)
test_hooks_and_commands_match_the_model = HooksAndCommands.TestCase
