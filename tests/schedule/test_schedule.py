"""Schedule: batches from declared access, the order rules, runs and their errors.

The exact batches of Shipyard's scheduler tests (``src/scheduler/workload.rs``:
``single_immutable``, ``single_mutable``, ``multiple_immutable``,
``multiple_mutable``, ``multiple_mixed``) and of Bevy's ordering
(``before``/``after``, chains, cycles, ambiguities); then runs: arguments,
deferred commands per batch, failures, changes since a system's last run,
real parallelism; and a property: every valid order of a random schedule
leaves the world the run leaves, whatever the threads.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseset import NO_ROW, DeadHandleError, Schedule, World
from sparseset.schedule import Access, conflicts


def nothing(world):
    """A system that does nothing."""


def schedule_of(*systems: dict) -> Schedule:
    sch = Schedule()
    for spec in systems:
        spec = dict(spec)
        sch.add(spec.pop("fn", nothing), **spec)
    return sch


# -- batches: Shipyard's cases ------------------------------------------------


def test_single_immutable():
    assert schedule_of({"name": "s1", "reads": "a"}).batches == [["s1"]]


def test_single_mutable():
    assert schedule_of({"name": "s1", "writes": "a"}).batches == [["s1"]]


def test_multiple_immutable():
    sch = schedule_of({"name": "s1", "reads": "a"}, {"name": "s2", "reads": "a"})
    assert sch.batches == [["s1", "s2"]]
    assert sch.ambiguities() == []


def test_multiple_mutable():
    sch = schedule_of({"name": "s1", "writes": "a"}, {"name": "s2", "writes": "a"})
    assert sch.batches == [["s1"], ["s2"]]
    assert sch.ambiguities() == [("s1", "s2")]


def test_multiple_mixed():
    sch = schedule_of(
        {"name": "s1", "writes": "a"},
        {"name": "s2", "reads": "a"},
        {"name": "s3", "reads": "b"},
        {"name": "s4", "writes": "b"},
        {"name": "s5", "reads": ("a", "b")},
    )
    assert sch.batches == [["s1", "s3"], ["s2", "s4"], ["s5"]]


def test_writing_implies_reading():
    sch = schedule_of({"name": "w", "writes": "a"}, {"name": "r", "reads": "a"})
    assert sch.batches == [["w"], ["r"]]
    assert conflicts(Access("x", writes=frozenset("a")), Access("y")) is False


def test_disjoint_components_share_a_batch():
    sch = schedule_of(
        {"name": "move", "reads": "vel", "writes": "pos"},
        {"name": "age", "writes": "life"},
        {"name": "grid", "reads": "pos", "writes": "cell"},
    )
    assert sch.batches == [["move", "age"], ["grid"]]


def test_structural_is_alone_in_its_batch():
    sch = schedule_of(
        {"name": "a", "reads": "x"},
        {"name": "spawn", "structural": True},
        {"name": "b", "reads": "y"},
    )
    assert sch.batches == [["a"], ["spawn"], ["b"]]
    assert sch.ambiguities() == [("a", "spawn"), ("spawn", "b")]


def test_systems_without_access_run_together():
    sch = schedule_of(*({"name": f"s{k}"} for k in range(8)))
    assert sch.batches == [[f"s{k}" for k in range(8)]]


# -- order: Bevy's before/after --------------------------------------------------


def test_after_and_before_move_systems_past_registration():
    sch = schedule_of(
        {"name": "a", "writes": "x"},
        {"name": "b", "writes": "x", "before": "a"},
    )
    assert sch.batches == [["b"], ["a"]]
    assert sch.ambiguities() == []


def test_after_orders_systems_that_do_not_conflict():
    sch = schedule_of({"name": "a"}, {"name": "b", "after": "a"}, {"name": "c"})
    assert sch.batches == [["a", "c"], ["b"]]


def test_forward_references_resolve_when_batched():
    sch = schedule_of({"name": "late", "after": "early"})
    sch.add(nothing, name="early")
    assert sch.batches == [["early"], ["late"]]


def test_chain_of_afters():
    sch = schedule_of(
        {"name": "c", "after": "b"}, {"name": "b", "after": "a"}, {"name": "a"}
    )
    assert sch.batches == [["a"], ["b"], ["c"]]


def test_each_system_goes_in_the_earliest_batch_it_can():
    sch = schedule_of(
        {"name": "a"},
        {"name": "b", "after": "a"},
        {"name": "c", "after": "b"},
        {"name": "d", "after": "a"},
    )
    assert sch.batches == [["a"], ["b", "d"], ["c"]]


def test_explicit_order_wins_over_a_chain_of_registrations():
    # a, b, c each conflict with the next; "c before a" turns the chain.
    sch = schedule_of(
        {"name": "a", "writes": "x"},
        {"name": "b", "writes": ("x", "y")},
        {"name": "c", "writes": "y", "before": "a"},
    )
    assert sch.batches == [["c"], ["a"], ["b"]]


def test_ambiguities_exclude_pairs_ordered_through_other_systems():
    sch = schedule_of(
        {"name": "a", "writes": "x"},
        {"name": "m", "after": "a"},
        {"name": "b", "reads": "x", "after": "m"},
    )
    assert sch.ambiguities() == []
    assert sch.batches == [["a"], ["m"], ["b"]]


def test_unknown_name_raises_value_error_naming_it():
    sch = schedule_of({"name": "a", "after": "nope"})
    with pytest.raises(ValueError, match="'nope'"):
        _ = sch.batches
    with pytest.raises(ValueError, match="'nope'"):
        sch.run(World())


@pytest.mark.parametrize(
    "systems, cycle",
    [
        ([{"name": "a", "after": "a"}], "'a' -> 'a'"),
        ([{"name": "a", "after": "b"}, {"name": "b", "after": "a"}], "'a'"),
        (
            [
                {"name": "a", "before": "b"},
                {"name": "b", "before": "c"},
                {"name": "c", "before": "a"},
            ],
            "'a' -> 'b' -> 'c' -> 'a'",
        ),
    ],
)
def test_cycles_raise_value_error_naming_them(systems, cycle):
    sch = schedule_of(*systems)
    with pytest.raises(ValueError, match="cycle") as raised:
        _ = sch.batches
    assert cycle in str(raised.value)


def test_batches_are_deterministic():
    specs = [
        {"name": f"s{k}", "reads": ("abc"[k % 3],), "writes": ("abc"[k * 7 % 3],)}
        for k in range(12)
    ]
    assert len({repr(schedule_of(*specs).batches) for _ in range(5)}) == 1


# -- building errors ----------------------------------------------------------------


def test_duplicate_names_raise():
    sch = schedule_of({"name": "a"})
    with pytest.raises(ValueError, match="already"):
        sch.add(nothing, name="a")
    assert sch.names == ["a"]


def test_bad_declarations_raise_and_add_nothing():
    sch = Schedule()
    with pytest.raises(TypeError, match="not a name"):
        sch.add(nothing, reads=("pos", 3))
    with pytest.raises(ValueError, match="twice"):
        sch.add(nothing, writes=("pos", "pos"))
    with pytest.raises(TypeError, match="positional"):
        sch.add(lambda: None, name="no_world")
    with pytest.raises(TypeError, match="not callable"):
        sch.add(3, name="three")  # type: ignore[arg-type]
    assert len(sch) == 0


def test_decorator_returns_the_function_and_names_the_system():
    sch = Schedule()

    @sch.system(reads=("a",))
    def show(world):
        return "shown"

    assert show(None) == "shown" and sch.names == ["show"]


# -- running ------------------------------------------------------------------------


def test_each_system_gets_the_arguments_it_names():
    seen = {}
    sch = Schedule()
    sch.add(lambda world, dt: seen.setdefault("a", dt), name="a")
    sch.add(lambda world, *, gravity=1.0: seen.setdefault("b", gravity), name="b")
    sch.add(lambda world, **kw: seen.setdefault("c", sorted(kw)), name="c")
    sch.add(lambda world: seen.setdefault("d", world), name="d")
    w = World()
    sch.run(w, dt=0.5, gravity=-9.8)
    assert seen == {"a": 0.5, "b": -9.8, "c": ["dt", "gravity"], "d": w}


def test_a_missing_argument_raises_before_anything_runs():
    ran = []
    sch = Schedule()
    sch.add(lambda world: ran.append("first"), name="first")
    sch.add(lambda world, dt: ran.append("second"), name="second")
    with pytest.raises(TypeError, match="'second' needs 'dt'"):
        sch.run(World())
    assert ran == []


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_bad_thread_counts_raise(threads):
    with pytest.raises(ValueError, match="threads"):
        schedule_of({"name": "a"}).run(World(), threads=threads)


def test_the_schedules_arguments_are_not_run_arguments():
    with pytest.raises(ValueError, match="'commands'"):
        schedule_of({"name": "a"}).run(World(), commands=None)


def test_systems_of_a_batch_run_at_the_same_time():
    # Each waits for the other: only a parallel run gets past the barrier.
    barrier = threading.Barrier(2, timeout=10)
    sch = Schedule()
    sch.add(lambda world: barrier.wait(), name="a", reads="x")
    sch.add(lambda world: barrier.wait(), name="b", reads="x")
    w = World()
    w.register("x")
    sch.run(w, threads=2)
    assert barrier.n_waiting == 0 and not barrier.broken


def test_batches_run_in_order():
    order = []
    sch = schedule_of(
        {"name": "late", "fn": lambda world: order.append("late"), "after": "mid"},
        {"name": "mid", "fn": lambda world: order.append("mid"), "after": "early"},
        {"name": "early", "fn": lambda world: order.append("early")},
    )
    for threads in (1, 2):
        order.clear()
        sch.run(World(), threads=threads)
        assert order == ["early", "mid", "late"]


def world_with_hp(values):
    w = World()
    w.register("hp", "i4")
    w.register("corpse")
    e = w.create(len(values))
    w.add("hp", e, hp=values)
    return w, e


def test_deferred_commands_apply_when_the_batch_ends():
    w, e = world_with_hp([5, 0, 7])
    seen = {}
    sch = Schedule()

    @sch.system(reads=("hp",))
    def reap(world, commands):
        store = world["hp"]
        commands.destroy(store.ids[store["hp"] <= 0])
        seen["reap"] = len(world)

    @sch.system(reads=("hp",))
    def count(world):  # same batch: the destroy has not happened yet
        seen["count"] = len(world)

    @sch.system(writes=("hp",))
    def later(world):  # the next batch: it has
        seen["later"] = len(world)

    assert sch.batches == [["reap", "count"], ["later"]]
    sch.run(w, threads=2)
    assert seen == {"reap": 3, "count": 3, "later": 2}
    assert w.alive(e).tolist() == [True, False, True]


def test_a_failing_system_stops_the_run_after_its_batch():
    w, e = world_with_hp([1, 2, 3])
    ran = []
    sch = Schedule()

    @sch.system(reads=("hp",))
    def spawn(world, commands):
        commands.add("corpse", e[0])
        commands.create(2)
        ran.append("spawn")

    @sch.system(reads=("hp",))
    def broken(world):
        raise ZeroDivisionError("boom")

    @sch.system(writes=("hp",))
    def after(world):
        ran.append("after")

    for threads in (1, 2):
        ran.clear()
        with pytest.raises(ZeroDivisionError, match="boom") as raised:
            sch.run(w, threads=threads)
        notes = "\n".join(raised.value.__notes__)
        assert "'broken'" in notes and "no deferred command" in notes
        assert ran == ["spawn"]  # the batch finished, the next did not run
        assert len(w) == 3 and not w.has("corpse", e[0])
    # The created entities died unused: their indexes are free again.
    assert int(w.create(1)[0]) & 0xFFFFFFFF in (3, 4)


def test_every_failing_system_of_a_batch_is_named():
    def fail(world):
        raise RuntimeError("x")

    sch = schedule_of({"name": "one", "fn": fail}, {"name": "two", "fn": fail})
    with pytest.raises(RuntimeError) as raised:
        sch.run(World(), threads=2)
    notes = "\n".join(raised.value.__notes__)
    assert "'one'" in notes and "'two'" in notes


def test_a_failing_command_names_it_and_drops_the_rest():
    w, e = world_with_hp([1, 2])
    sch = Schedule()

    @sch.system()
    def bad(world, commands):
        commands.destroy(e[0])
        commands.destroy(e[0])  # one run of destroys: counted once
        commands.remove("corpse", e[1])  # e[1] has no corpse: KeyError

    @sch.system()
    def good(world, commands):
        commands.create(1)

    with pytest.raises(KeyError) as raised:
        sch.run(w)
    assert any("remove('corpse'" in note for note in raised.value.__notes__)
    assert w.alive(e).tolist() == [False, True]
    assert len(w) == 1  # good's entity was dropped


def test_changes_since_the_systems_previous_run():
    w = World()
    w.register("pos", "f8", track=True)
    w.register("vel", "f8")
    e = w.create(4)
    w.add("pos", e[:3])
    seen = []
    sch = Schedule()

    @sch.system(reads=("pos", "vel"))
    def grid(world, changes):
        r = changes["pos"]
        seen.append(
            (
                sorted(r.added().tolist()),
                sorted(r.changed().tolist()),
                sorted(r.removed().tolist()),
            )
        )
        with pytest.raises(KeyError, match="not tracked"):
            changes["vel"]
        with pytest.raises(KeyError, match="not one the system"):
            changes["other"]

    sch.run(w)  # the first run sees everything present
    w.touch("pos", e[1])
    w.add("pos", e[3])
    w.remove("pos", e[0])
    sch.run(w)
    sch.run(w)
    a, b, c, d = (int(h) for h in e)
    assert seen == [
        ([a, b, c], [a, b, c], []),
        ([d], [b, d], [a]),
        ([], [], []),
    ]


def test_changes_are_not_committed_when_the_system_raises():
    w = World()
    w.register("pos", "f8", track=True)
    e = w.create(2)
    w.add("pos", e)
    seen = []
    fail = [True]
    sch = Schedule()

    @sch.system(reads=("pos",))
    def regrid(world, changes):
        seen.append(len(changes["pos"].changed()))
        if fail[0]:
            raise RuntimeError("not now")

    with pytest.raises(RuntimeError):
        sch.run(w)
    fail[0] = False
    sch.run(w)
    sch.run(w)
    assert seen == [2, 2, 0]


def test_a_systems_own_writes_are_not_its_changes():
    w = World()
    w.register("pos", "f8", track=True)
    w.add("pos", w.create(3))
    seen = []
    sch = Schedule()

    @sch.system(writes=("pos",))
    def move(world, changes):
        seen.append(len(changes["pos"].changed()))
        world.touch("pos", world["pos"].ids)

    sch.run(w)
    sch.run(w)
    assert seen == [3, 0]


def test_each_world_has_its_own_changes():
    sch = Schedule()
    seen = []

    @sch.system(reads=("pos",))
    def count(world, changes):
        seen.append(len(changes["pos"].added()))

    worlds = []
    for n in (2, 5):
        w = World()
        w.register("pos", "f8", track=True)
        w.add("pos", w.create(n))
        worlds.append(w)
    for w in worlds:
        sch.run(w)
    assert seen == [2, 5]


# -- views with optional components ---------------------------------------------------


def test_view_with_optional_components():
    w = World()
    w.register("pos", "f8")
    w.register("vel", "f8")
    w.register("frozen")
    e = w.create(4)
    w.add("pos", e, pos=[0.0, 1.0, 2.0, 3.0])
    w.add("vel", e[[1, 3]], vel=[10.0, 30.0])
    w.add("frozen", e[2])
    v = w.view("pos", exclude=("frozen",), optional=("vel",))
    assert v.ids.tolist() == [e[0], e[1], e[3]]
    rows = v.rows("vel")
    assert rows.dtype == np.uint32
    assert (rows == NO_ROW).tolist() == [True, False, False]
    has = v.has("vel")
    assert has.tolist() == [False, True, True]
    assert w["vel"]["vel"][rows[has]].tolist() == [10.0, 30.0]
    assert v.has("pos").all() and not v.has("frozen").any()
    assert v.optional == ("vel",)
    # The view answers for the current world.
    w.remove("vel", e[1])
    assert v.has("vel").tolist() == [False, False, True]
    with pytest.raises(KeyError, match="frozen"):
        v.rows("frozen")
    with pytest.raises(KeyError):
        v.has("nope")


def test_optional_touch_marks_only_the_entities_that_have_it():
    w = World()
    w.register("pos", "f8")
    w.register("vel", "f8", track=True)
    e = w.create(3)
    w.add("pos", e)
    w.add("vel", e[1])
    r = w.reader("vel")
    w.view("pos", optional=("vel",)).touch("vel")
    assert r.changed().tolist() == [e[1]]


def test_optional_names_are_checked():
    w = World()
    w.register("a")
    w.register("b")
    with pytest.raises(ValueError, match="one role"):
        w.view("a", optional=("a",))
    with pytest.raises(ValueError, match="one role"):
        w.view("a", exclude=("b",), optional=("b",))
    with pytest.raises(KeyError, match="'c'"):
        w.view("a", optional=("c",))


def test_components_of_and_get_all():
    w = World()
    w.register("hp", "i4")
    w.register("boss")
    w.register("pos", "f8", shape=(2,))
    e = w.create(2)
    w.add("hp", e, hp=[3, 4])
    w.add("boss", e[1])
    assert w.components_of(e[0]) == ("hp",)
    assert w.components_of(int(e[1])) == ("hp", "boss")
    everything = w.get_all(e[1])
    assert list(everything) == ["hp", "boss"]
    assert everything["hp"]["hp"] == 4 and everything["boss"] == {}
    w.destroy(e[0])
    with pytest.raises(DeadHandleError):
        w.components_of(e[0])
    with pytest.raises(DeadHandleError):
        w.get_all(e[0])
    with pytest.raises(ValueError, match="one handle"):
        w.get_all(e)


# -- the property: any valid order, any threads, one world --------------------

COMPONENTS = ("a", "b", "c", "d")


@st.composite
def random_schedules(draw):
    count = draw(st.integers(1, 7))
    specs = []
    for k in range(count):
        reads = draw(st.sets(st.sampled_from(COMPONENTS), max_size=2))
        writes = draw(st.sets(st.sampled_from(COMPONENTS), max_size=2))
        after = draw(st.sets(st.integers(0, k - 1), max_size=2)) if k else set()
        specs.append(
            {
                "name": f"s{k}",
                "reads": tuple(sorted(reads)),
                "writes": tuple(sorted(writes)),
                "after": tuple(f"s{j}" for j in sorted(after)),
                "factor": k + 2,
            }
        )
    return specs


def system_for(spec):
    def system(world):
        # Not commutative: the result depends on the order of conflicting
        # systems. Writes go through the world (kernels and all).
        total = sum(
            (world.get(name, world[name].ids)[name] for name in spec["reads"]),
            np.zeros(4),
        )
        for name in spec["writes"]:
            store = world[name]
            store.set(store.ids, **{name: store[name] * spec["factor"] + total + 1})

    return system


def fresh_world():
    w = World()
    e = w.create(4)
    for k, name in enumerate(COMPONENTS):
        w.register(name, "f8")
        w.add(name, e, **{name: np.arange(4.0) + k})
    return w


@pytest.mark.boundscheck
@given(random_schedules(), st.randoms(use_true_random=False))
def test_every_valid_order_gives_the_world_of_the_run(specs, random):
    sch = Schedule()
    for spec in specs:
        sch.add(
            system_for(spec),
            reads=spec["reads"],
            writes=spec["writes"],
            after=spec["after"],
            name=spec["name"],
        )
    by_name = {spec["name"]: system_for(spec) for spec in specs}
    results = []
    for threads in (1, 2):
        w = fresh_world()
        sch.run(w, threads=threads)
        results.append(w)
    # ``after`` names earlier systems only: registration order is valid.
    w = fresh_world()
    for spec in specs:
        by_name[spec["name"]](w)
    results.append(w)
    # Another valid order: batch by batch, each batch in any order.
    w = fresh_world()
    for batch in sch.batches:
        for name in random.sample(batch, len(batch)):
            by_name[name](w)
    results.append(w)
    for w in results[1:]:
        for name in COMPONENTS:
            np.testing.assert_array_equal(w[name][name], results[0][name][name])


def test_a_systems_own_deferred_blocks_wait_for_the_batch_end():
    w, e = world_with_hp([5, 0, 7])
    seen = {}
    sch = Schedule()

    @sch.system(reads=("hp",))
    def reap(world):
        store = world["hp"]
        with world.deferred() as cmd:  # no `commands` argument: the same buffer
            cmd.destroy(store.ids[store["hp"] <= 0])
        seen["reap"] = len(world)  # the block ended, nothing applied yet

    @sch.system(reads=("hp",))
    def count(world):
        seen["count"] = len(world)

    @sch.system(writes=("hp",))
    def later(world):
        seen["later"] = len(world)

    for threads in (1, 2):
        seen.clear()
        sch.run(w, threads=threads)
        assert seen == {"reap": 3, "count": 3, "later": 2}
        assert len(w) == 2
        w, e = world_with_hp([5, 0, 7])
    # Outside a schedule, a block applies at its end, as always.
    with w.deferred() as cmd:
        cmd.destroy(e[0])
    assert len(w) == 2


def test_hooks_inside_a_system_apply_after_their_call_not_the_batch():
    w, e = world_with_hp([1, 2])
    w.on_remove("hp", lambda handles: w.add("corpse", handles))
    seen = []
    sch = Schedule()

    @sch.system(structural=True)
    def strip(world):
        world.remove("hp", e[0])
        seen.append(bool(world.has("corpse", e[0])))  # the hook's add is done

    sch.run(w)
    assert seen == [True]
