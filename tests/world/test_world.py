"""World: entity handles, components, views, owning groups and sorting.

Persistence and pickling are in ``test_io.py``; the state machine that
drives all of it against a model is in ``test_world_state.py``.
"""

import numpy as np
import pytest
from numba import njit

from sparseset import (
    ComponentStore,
    DeadHandleError,
    EntityStore,
    Group,
    UnknownColumnError,
    UnknownComponentError,
    View,
    World,
)
from sparseset.kernels import LIVE
from sparseset.world import entities, entity_store
from sparseset.world.world import LAST_GENERATION

GEN = 2**32  # one generation step in a handle


def make_world(n=6):
    """A world with pos/vel (f8, 2), hp (i4) and the tag frozen, n entities."""
    w = World()
    w.register("pos", "f8", shape=(2,))
    w.register("vel", "f8", shape=(2,))
    w.register("hp", "i4")
    w.register("frozen")
    return w, w.create(n)


def snapshot(w):
    """Everything observable about a world, to prove a failed call changed nothing."""
    state = {"entities": w.entities.tolist(), "len": len(w)}
    for name in w.components:
        store = w[name]
        state[name] = store.ids.tolist()
        for column in store.columns:
            state[f"{name}.{column}"] = store[column].tolist()
    state["groups"] = [(g.components, len(g)) for g in w.groups]
    return state


# -- entities ---------------------------------------------------------------


def test_create_returns_int64_handles_index_in_low_bits():
    w = World()
    e = w.create(4)
    assert e.dtype == np.int64 and e.tolist() == [0, 1, 2, 3]
    assert len(w) == 4 and w.alive(e).all()


def test_create_zero_is_an_empty_int64_array():
    e = World().create(0)
    assert e.dtype == np.int64 and e.shape == (0,)


@pytest.mark.parametrize("count", [np.int32(3), np.uint8(3), 3])
def test_create_takes_any_integer_count(count):
    assert World().create(count).shape == (3,)


@pytest.mark.parametrize(
    ("count", "error", "match"),
    [
        (-1, ValueError, "count >= 0"),
        (2.0, TypeError, "integer count"),
        (True, TypeError, "integer count"),
        ("3", TypeError, "integer count"),
        (None, TypeError, "integer count"),
    ],
)
def test_create_rejects_bad_counts(count, error, match):
    w = World()
    with pytest.raises(error, match=match):
        w.create(count)
    assert len(w) == 0


def test_destroyed_indexes_are_recycled_with_the_next_generation():
    w = World()
    e = w.create(3)
    w.destroy(e[[1, 0]])
    again = w.create(3)
    # LIFO: the last destroyed index comes back first.
    assert again.tolist() == [0 + GEN, 1 + GEN, 3]
    assert w.alive(e).tolist() == [False, False, True]
    assert w.alive(again).all()


def test_a_handle_stays_dead_through_many_recycles():
    w = World()
    first = w.create(1)
    handles = [int(first[0])]
    for _ in range(5):
        w.destroy(handles[-1])
        handles.append(int(w.create(1)[0]))
    assert [h >> 32 for h in handles] == [0, 1, 2, 3, 4, 5]
    assert w.alive(handles).tolist() == [False] * 5 + [True]


def test_destroy_returns_the_count_and_counts_repeats_once():
    w = World()
    e = w.create(3)
    assert w.destroy([e[0], e[2], e[0]]) == 2
    assert len(w) == 1 and w.entities.tolist() == [e[1]]


def test_destroy_removes_the_entity_from_every_store():
    w, e = make_world(4)
    w.add("pos", e, pos=[[0, 0], [1, 1], [2, 2], [3, 3]])
    w.add("hp", e[1:], hp=[1, 2, 3])
    w.add("frozen", e[1])
    w.destroy(e[1])
    assert w["pos"].ids.tolist() == [e[0], e[3], e[2]]
    assert w["pos"]["pos"].tolist() == [[0, 0], [3, 3], [2, 2]]
    assert sorted(w["hp"].ids.tolist()) == [e[2], e[3]]
    assert len(w["frozen"]) == 0


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda e: e[0], id="destroyed"),
        pytest.param(lambda e: 99, id="never-created-index"),
        pytest.param(lambda e: e[2] + 7 * GEN, id="future-generation"),
        pytest.param(lambda e: 2**63 + 5, id="uint64-past-int64"),
    ],
)
def test_destroy_of_a_dead_handle_raises_and_destroys_nothing(bad):
    w, e = make_world(3)
    w.add("hp", e, hp=[1, 2, 3])
    w.destroy(e[0])
    before = snapshot(w)
    with pytest.raises(DeadHandleError) as info:
        w.destroy([e[1], bad(e), e[2]])
    assert isinstance(info.value, ValueError) and isinstance(info.value, KeyError)
    message = str(info.value)
    assert "handles[1]" in message and "nothing was destroyed" in message
    assert snapshot(w) == before


def test_dead_handle_messages_say_why_and_what_to_do():
    w = World()
    e = w.create(2)
    w.destroy(e[0])
    with pytest.raises(DeadHandleError, match=r"world\.alive\(handles\)"):
        w.destroy(e[0])
    with pytest.raises(DeadHandleError, match="was destroyed"):
        w.destroy(e[0])
    with pytest.raises(DeadHandleError, match="never created"):
        w.destroy(50)
    with pytest.raises(DeadHandleError, match="never created"):
        w.destroy(int(e[1]) + 3 * GEN)


def test_negative_handles_raise_everywhere():
    w, _ = make_world(2)
    for call in (
        lambda: w.destroy(-1),
        lambda: w.alive([0, -1]),
        lambda: w.has("hp", -1),
        lambda: w["hp"].contains([-3]),
        lambda: w["hp"].index(-3),
        lambda: w.add("hp", -1, hp=1),
    ):
        with pytest.raises(ValueError, match="non-negative"):
            call()


def test_alive_answers_a_bool_for_one_handle_and_an_array_for_a_batch():
    w = World()
    e = w.create(2)
    w.destroy(e[1])
    assert w.alive(e[0]) is True and w.alive(int(e[1])) is False
    assert w.alive([]).shape == (0,)
    assert w.alive(np.array([e[0], 2**40, 2**62], np.uint64)).tolist() == [
        True,
        False,
        False,
    ]


@pytest.mark.parametrize("bad", [1.5, "a", [True], None])
def test_alive_rejects_non_integer_handles(bad):
    with pytest.raises(TypeError):
        World().alive(bad)


def test_an_index_at_the_last_generation_is_retired_not_reused():
    w = World()
    e = w.create(2)
    w._entities.generations[0] = LAST_GENERATION | LIVE  # alive, at the last one
    last = LAST_GENERATION << 32
    assert w.alive(last) and not w.alive(e[0])
    w.destroy(last)
    fresh = w.create(2)
    assert fresh.tolist() == [2, 3]  # index 0 is retired for good
    assert not w.alive(last) and len(w) == 3
    with pytest.raises(DeadHandleError):
        w.destroy(last)


def test_entities_lists_the_live_handles():
    w = World()
    e = w.create(4)
    w.destroy(e[1])
    again = w.create(1)
    assert w.entities.tolist() == [e[0], again[0], e[2], e[3]]


def test_capacity_is_a_hint_and_must_be_sane():
    w = World(capacity=10)
    assert w.create(25).shape == (25,)
    with pytest.raises(ValueError):
        World(capacity=-1)
    with pytest.raises(TypeError):
        World(capacity=2.5)


# -- components -----------------------------------------------------------


def test_register_forms():
    w = World()
    w.register("pos", "f8", shape=3)
    w.register("body", {"mass": "f4", "radius": ("f4", 2)})
    w.register("rec", np.dtype([("a", "i4"), ("b", "f8")]))
    w.register("tag")
    assert w.components == ("pos", "body", "rec", "tag")
    assert w["pos"].schema == {"pos": (np.dtype("f8"), (3,))}
    assert w["body"].columns == ("mass", "radius")
    assert w["rec"].columns == ("a", "b")
    assert w["tag"].columns == ()
    assert isinstance(w["pos"], EntityStore) and isinstance(w["pos"], ComponentStore)
    assert w["pos"].name == "pos"


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("pos", "f8"), ValueError, "already registered"),
        ((3, "f8"), TypeError, "non-empty str"),
        (("", "f8"), TypeError, "non-empty str"),
        (("t", None, (2,)), ValueError, "needs a dtype"),
        (("s", {"a": "f4"}, (2,)), ValueError, "inside the schema"),
        (("_size", "f8"), ValueError, "underscore"),
        (("o", object), TypeError, "object"),
    ],
)
def test_register_rejects_bad_definitions(args, error, match):
    w = World()
    w.register("pos", "f8")
    with pytest.raises(error, match=match):
        w.register(*args)
    assert w.components == ("pos",)


def test_an_unknown_component_names_itself_and_what_to_do():
    w, e = make_world(1)
    for call in (
        lambda: w["nope"],
        lambda: w.add("nope", e),
        lambda: w.has("nope", e),
        lambda: w.view("pos", "nope"),
        lambda: w.group("nope"),
    ):
        with pytest.raises(UnknownComponentError, match=r"'nope'.*register"):
            call()


def test_add_get_has_remove_discard():
    w, e = make_world(3)
    assert w.add("pos", e[:2], pos=[[1, 2], [3, 4]]) == 2
    assert w.add("pos", e[1], pos=[5, 6]) == 0  # replaces
    assert w.get("pos", e[1])["pos"].tolist() == [5, 6]
    assert w.get("pos", e[:2])["pos"].tolist() == [[1, 2], [5, 6]]
    assert w.has("pos", e).tolist() == [True, True, False]
    assert w.has("pos", e[2]) is False
    assert w.remove("pos", e[0]) == 1
    assert w.discard("pos", e) == 1
    assert len(w["pos"]) == 0


def test_store_ids_iteration_and_membership_speak_handles():
    w = World()
    w.register("hp", "i4")
    e = w.create(3)
    w.destroy(e[0])
    again = w.create(1)  # index 0, generation 1
    w.add("hp", [again[0], e[2]], hp=[7, 9])
    store = w["hp"]
    assert store.ids.tolist() == [again[0], e[2]]
    assert list(store) == [again[0], e[2]]
    assert again[0] in store and e[0] not in store
    assert store.index([e[2], e[0], again[0]]).tolist() == [1, -1, 0]
    assert store.index(e[0]) == -1
    assert not store.ids.flags.writeable
    with pytest.raises(TypeError, match="one handle"):
        [again[0]] in store  # noqa: B015


def test_missing_component_on_get_or_remove_names_the_handle():
    w, e = make_world(2)
    w.add("hp", e[0], hp=1)
    with pytest.raises(KeyError, match=r"handles\[1\] = 1 has no 'hp' component"):
        w.get("hp", e)
    before = snapshot(w)
    with pytest.raises(KeyError, match="nothing was removed"):
        w.remove("hp", e)
    assert snapshot(w) == before


def test_bad_column_values_change_nothing():
    w, e = make_world(2)
    w.add("pos", e[0], pos=[1, 1])
    before = snapshot(w)
    with pytest.raises(UnknownColumnError):
        w.add("pos", e, velocity=1.0)
    with pytest.raises(ValueError, match="broadcast"):
        w.add("pos", e, pos=[[1, 2, 3]])
    with pytest.raises(TypeError, match="cast"):
        w.add("hp", e, hp=["a", "b"])
    assert snapshot(w) == before


def test_set_replaces_values_of_members_only():
    w, e = make_world(2)
    w.add("hp", e, hp=[1, 2])
    w["hp"].set(e[1], hp=5)
    assert w["hp"]["hp"].tolist() == [1, 5]


# -- the stale-handle rule ---------------------------------------------------


@pytest.fixture
def recycled():
    """A world where e[0] was destroyed and its index reused by ``new``."""
    w, e = make_world(3)
    w.add("hp", e, hp=[10, 20, 30])
    w.destroy(e[0])
    new = w.create(1)[0]
    w.add("hp", new, hp=99)
    return w, e[0], new


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda w, h: w.add("hp", h, hp=0), id="add"),
        pytest.param(lambda w, h: w["hp"].set(h, hp=0), id="set"),
        pytest.param(lambda w, h: w.remove("hp", h), id="remove"),
        pytest.param(lambda w, h: w.discard("hp", h), id="discard"),
        pytest.param(lambda w, h: w.get("hp", h), id="get"),
        pytest.param(lambda w, h: w.destroy(h), id="destroy"),
        pytest.param(lambda w, h: w.add("frozen", [h]), id="add-tag"),
    ],
)
def test_a_stale_handle_never_reaches_the_entity_that_reuses_its_index(recycled, call):
    w, stale, new = recycled
    before = snapshot(w)
    with pytest.raises(DeadHandleError, match="dead"):
        call(w, stale)
    assert snapshot(w) == before
    assert w.get("hp", new)["hp"] == 99


def test_queries_report_a_stale_handle_absent(recycled):
    w, stale, new = recycled
    assert w.alive(stale) is False and w.alive(new) is True
    assert w.has("hp", stale) is False
    assert w["hp"].contains([stale, new]).tolist() == [False, True]
    assert w["hp"].index(stale) == -1
    assert stale not in w["hp"]


# -- views --------------------------------------------------------------------


def test_view_joins_includes_and_excludes():
    w, e = make_world(6)
    w.add("pos", e, pos=np.arange(12).reshape(6, 2))
    w.add("vel", e[[5, 1, 3, 2]], vel=1.0)
    w.add("frozen", e[3])
    v = w.view("pos", "vel", exclude=("frozen",))
    assert isinstance(v, View)
    assert v.ids.tolist() == [e[5], e[1], e[2]]  # in vel's (the smaller) order
    assert len(v) == 3 and list(v) == v.ids.tolist()
    assert w["pos"].ids[v.rows("pos")].tolist() == v.ids.tolist()
    assert w["vel"].ids[v.rows("vel")].tolist() == v.ids.tolist()
    assert v.components == ("pos", "vel") and v.exclude == ("frozen",)


def test_view_rows_let_a_system_update_exactly_the_matches():
    w, e = make_world(5)
    w.add("pos", e, pos=0.0)
    w.add("vel", e[1::2], vel=[[1, 2], [3, 4]])
    v = w.view("pos", "vel")
    pos, vel = w["pos"]["pos"], w["vel"]["vel"]
    pos[v.rows("pos")] += vel[v.rows("vel")]
    assert w.get("pos", e)["pos"].tolist() == [[0, 0], [1, 2], [0, 0], [3, 4], [0, 0]]


@pytest.mark.parametrize("threaded", [False, True])
def test_view_rows_are_uint32_and_the_same_on_either_lookup_path(monkeypatch, threaded):
    # Big batches join through the threaded lookup, small ones through the
    # one-pass kernel: both must answer alike, in the documented dtype. The
    # handles are made in spans too.
    monkeypatch.setattr(entity_store, "shared", lambda count: threaded)
    monkeypatch.setattr(entities, "shared", lambda count: threaded)
    w, e = make_world(40)
    rng = np.random.default_rng(7)
    w.add("pos", rng.permutation(e), pos=0.0)
    w.add("vel", rng.permutation(e)[:25], vel=1.0)
    w.add("hp", rng.permutation(e)[:30], hp=1)
    w.add("frozen", e[::3])
    v = w.view("pos", "vel", "hp", exclude="frozen")
    ids = v.ids
    # in the order of the smallest included store, vel
    want = [h for h in w["vel"].ids.tolist() if h in w["pos"] and h in w["hp"]]
    assert ids.tolist() == [h for h in want if h not in w["frozen"]]
    for name in ("pos", "vel", "hp"):
        rows = v.rows(name)
        assert rows.dtype == np.uint32
        assert w[name].ids[rows].tolist() == ids.tolist()
    assert len(v) == len(ids)


@pytest.mark.parametrize("threaded", [False, True])
def test_calls_by_handle_find_rows_in_one_pass_or_say_which_handle_fails(
    monkeypatch, threaded
):
    # get/set/touch find the rows of a batch of handles in one pass (in
    # spans on threads when big); a dead or absent handle anywhere in it,
    # in a late span too, raises what the two-step path says, changing
    # nothing.
    monkeypatch.setattr(entities, "shared", lambda count: threaded)
    w, e = make_world(60)
    w.register("hp2", "i4", track=True)
    rng = np.random.default_rng(11)
    holders = rng.permutation(e)[:45]
    w.add("hp2", holders, hp2=np.arange(45))
    reader = w.reader("hp2")
    picked = rng.permutation(holders)[:40]
    want = {int(h): int(k) for k, h in enumerate(holders)}
    assert w.get("hp2", picked)["hp2"].tolist() == [want[int(h)] for h in picked]
    w.set("hp2", picked, hp2=-np.arange(40))
    assert w.get("hp2", picked)["hp2"].tolist() == (-np.arange(40)).tolist()
    w.touch("hp2", picked[:30])
    assert sorted(reader.changed().tolist()) == sorted(picked.tolist())
    reader.commit()
    lacking = np.setdiff1d(e, holders)[0]
    dead = np.setdiff1d(holders, picked)[0]
    w.destroy(dead)
    before = snapshot(w)
    for bad, error in ((lacking, KeyError), (dead, DeadHandleError), (-1, ValueError)):
        batch = np.concatenate([picked[:35], [bad], picked[35:]])
        with pytest.raises(error) as info:
            w.set("hp2", batch, hp2=7)
        assert "[35] = " in str(info.value)
        with pytest.raises(error):
            w.touch("hp2", batch)
        with pytest.raises(error):
            w.get("hp2", batch)
    assert snapshot(w) == before
    assert reader.changed().size == 0


def test_a_view_reflects_later_changes_when_asked_again():
    w, e = make_world(4)
    w.add("pos", e, pos=1.0)
    v = w.view("pos", exclude="frozen")
    assert len(v) == 4
    w.add("frozen", e[0])
    assert sorted(v.ids.tolist()) == sorted(e[1:].tolist())
    w.destroy(e[1])
    assert sorted(v) == sorted(e[2:].tolist())
    w["pos"].sort_as(e[::-1])
    assert w["pos"].ids[v.rows("pos")].tolist() == v.ids.tolist()
    w.discard("frozen", e[0])
    assert len(v) == 3


def test_a_view_sees_rows_moved_by_a_group_on_another_store():
    w, e = make_world(4)
    w.add("pos", e, pos=1.0)
    w.add("hp", e, hp=[1, 2, 3, 4])
    v = w.view("hp", "pos")
    assert len(v) == 4
    w.group("pos", "vel")
    w.add("vel", e[3], vel=1.0)  # moves e[3] to row 0 of pos
    assert w["pos"].ids[v.rows("pos")].tolist() == v.ids.tolist()


def test_view_results_are_read_only():
    w, e = make_world(2)
    w.add("pos", e)
    v = w.view("pos")
    assert not v.ids.flags.writeable and not v.rows("pos").flags.writeable


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((), {}, ValueError, "at least one"),
        (("pos", "pos"), {}, ValueError, "twice"),
        (("pos",), {"exclude": ("pos",)}, ValueError, "both included and excluded"),
        (("pos",), {"exclude": ("nope",)}, UnknownComponentError, "nope"),
    ],
)
def test_view_rejects_bad_arguments(args, kwargs, error, match):
    w, _ = make_world(1)
    with pytest.raises(error, match=match):
        w.view(*args, **kwargs)


def test_view_rows_of_an_excluded_component_raise():
    w, _ = make_world(1)
    with pytest.raises(KeyError, match="excluded"):
        w.view("pos", exclude=("vel",)).rows("vel")


def test_an_empty_view():
    w, _ = make_world(3)
    v = w.view("pos", "vel")
    assert len(v) == 0 and v.ids.shape == (0,) and v.rows("vel").shape == (0,)


# -- groups -------------------------------------------------------------------


def assert_packed(g, w):
    """Group invariant: rows [0, len) of every owned store are the entities
    having all owned components, in one order."""
    stores = [w[name] for name in g.components]
    length = len(g)
    front = stores[0].ids[:length].tolist()
    for store in stores:
        assert store.ids[:length].tolist() == front
    having_all = set(stores[0].ids.tolist())
    for store in stores[1:]:
        having_all &= set(store.ids.tolist())
    assert set(front) == having_all
    assert g.ids.tolist() == front


def test_a_group_packs_existing_members_and_keeps_rows_with_ids():
    w, e = make_world(6)
    w.add("pos", e, pos=np.arange(12).reshape(6, 2))
    w.add("vel", e[[4, 1, 5]], vel=[[40, 40], [10, 10], [50, 50]])
    g = w.group("pos", "vel")
    assert isinstance(g, Group) and len(g) == 3
    assert_packed(g, w)
    for h, pos, vel in zip(g.ids, g["pos"], g["vel"], strict=True):
        index = int(h) & 0xFFFFFFFF
        assert pos.tolist() == [2 * index, 2 * index + 1]
        assert vel.tolist() == [10 * index, 10 * index]


def test_group_update_touches_exactly_the_members():
    w, e = make_world(5)
    w.add("pos", e, pos=1.0)
    w.add("vel", e[[0, 3]], vel=2.0)
    g = w.group("pos", "vel")
    g["pos"] += g["vel"] * 0.5
    assert w.get("pos", e)["pos"][:, 0].tolist() == [2, 1, 1, 2, 1]
    assert g["pos"].flags.c_contiguous and g["vel"].flags.c_contiguous
    assert g["pos"].shape == g["vel"].shape == (2, 2)
    g["pos"] = 0.0
    assert w.get("pos", e)["pos"][:, 0].tolist() == [0, 1, 1, 0, 1]


def test_a_group_stays_packed_through_adds_removals_and_destroys():
    w, e = make_world(8)
    g = w.group("pos", "vel")
    w.add("pos", e, pos=np.arange(16).reshape(8, 2))
    assert len(g) == 0
    w.add("vel", e[[6, 2, 7, 2]], vel=1.0)
    assert len(g) == 3
    assert_packed(g, w)
    w.add("vel", e[:2], vel=1.0)
    w.remove("pos", e[2])
    assert_packed(g, w)
    w.destroy(e[[0, 5]])
    assert_packed(g, w)
    w.discard("vel", e[[6, 1]])
    assert_packed(g, w)
    assert sorted(g.ids.tolist()) == [e[7]]
    w["vel"].clear()
    assert len(g) == 0
    assert_packed(g, w)
    w.add("vel", w.entities, vel=3.0)
    assert_packed(g, w)
    for h, pos in zip(g.ids, g["pos"], strict=True):
        index = int(h) & 0xFFFFFFFF
        assert pos.tolist() == [2 * index, 2 * index + 1]


def test_group_with_the_same_components_is_the_same_group():
    w, _ = make_world(1)
    g = w.group("pos", "vel")
    assert w.group("vel", "pos") is g
    assert w.groups == (g,)
    assert w["pos"].group is g and w["hp"].group is None


def test_a_store_can_be_owned_by_one_group_only():
    w, _ = make_world(1)
    w.group("pos", "vel")
    with pytest.raises(ValueError, match="'vel' is already owned"):
        w.group("vel", "hp")
    with pytest.raises(ValueError, match="already owned"):
        w.group("pos")
    assert len(w.groups) == 1 and w["hp"].group is None


def test_an_owned_store_refuses_to_be_reordered_or_twinned():
    w, e = make_world(3)
    w.add("pos", e)
    w.group("pos", "vel")
    for call in (
        lambda: w["pos"].sort(),
        lambda: w["pos"].sort_as(e[::-1]),
        lambda: w["pos"].jit,
    ):
        with pytest.raises(ValueError, match="owns 'pos'"):
            call()


def test_group_columns_by_column_or_component_name():
    w = World()
    w.register("body", {"mass": "f4", "radius": "f4"})
    w.register("shape", {"radius": "f4", "sides": "i4"})
    w.register("hp", "i4")
    w.register("tag")
    e = w.create(3)
    w.add("body", e, mass=[1, 2, 3])
    w.add("shape", e[1:], sides=[4, 5])
    w.add("hp", e, hp=7)
    w.add("tag", e)
    g = w.group("body", "shape", "hp", "tag")
    assert len(g) == 2
    assert sorted(g["mass"].tolist()) == [2, 3]
    assert g["hp"].tolist() == [7, 7]
    assert g["sides"].shape == (2,)
    with pytest.raises(KeyError, match="several owned components"):
        g["radius"]
    with pytest.raises(UnknownColumnError, match="columns: mass"):
        g["nope"]
    with pytest.raises(UnknownColumnError):
        g["body"]  # two columns: name one


def test_group_rejects_bad_arguments():
    w, _ = make_world(1)
    with pytest.raises(ValueError, match="at least one"):
        w.group()
    with pytest.raises(ValueError, match="twice"):
        w.group("pos", "pos")


# -- sorting world stores -----------------------------------------------------


def test_store_sort_orders_by_handle_and_moves_rows():
    w, e = make_world(4)
    w.destroy(e[1])
    again = w.create(1)[0]  # index 1, generation 1: the largest handle
    w.add("hp", [again, e[3], e[0]], hp=[1, 3, 0])
    w["hp"].sort()
    assert w["hp"].ids.tolist() == [e[0], e[3], again]
    assert w["hp"]["hp"].tolist() == [0, 3, 1]
    w["hp"].sort(key="hp")
    assert w["hp"]["hp"].tolist() == [0, 1, 3]


def test_sort_as_another_store_a_view_a_group_or_handles():
    w, e = make_world(5)
    w.add("hp", e, hp=np.arange(5))
    w.add("pos", e[[3, 1, 4]])
    w["hp"].sort_as(w["pos"])
    assert w["hp"].ids[:3].tolist() == [e[3], e[1], e[4]]
    assert w["hp"]["hp"][:3].tolist() == [3, 1, 4]
    w["hp"].sort_as(w.view("pos", exclude=("frozen",)))
    assert w["hp"].ids[:3].tolist() == [e[3], e[1], e[4]]
    w["hp"].sort_as(e[::-1])
    assert w["hp"].ids.tolist() == e[::-1].tolist()
    w.destroy(e[0])
    w["hp"].sort_as([e[0], e[2]])  # the dead handle is skipped
    assert w["hp"].ids[0] == e[2]


def test_sort_as_refuses_stores_it_cannot_read_as_entities():
    w, _ = make_world(2)
    other, _ = make_world(2)
    with pytest.raises(ValueError, match="another world"):
        w["hp"].sort_as(other["hp"])
    with pytest.raises(TypeError, match="plain ids"):
        w["hp"].sort_as(ComponentStore({}))


# -- a World store's jit twin takes handles ------------------------------------


@njit
def _twin_probe(js, h):
    return js.contains(h), js.index(h)


@njit
def _twin_add(js, h):
    return js.add(h)


@njit
def _twin_remove(js, h):
    return js.remove(h)


@njit
def _twin_handles(js):
    out = np.empty(js.size, np.int64)
    for k in range(js.size):
        out[k] = js.handle(k)
    return out, js.ids


def test_twin_answers_for_live_handles_and_refuses_dead_ones(recycled):
    w, stale, new = recycled
    js = w["hp"].jit
    before = snapshot(w)
    assert _twin_probe(js, new) == (True, w["hp"].index(new))
    assert _twin_probe(js, stale) == (False, -1)
    assert _twin_remove(js, stale) is False
    with pytest.raises(ValueError, match="live handles"):
        _twin_add(js, stale)
    never = 2**40 + 5  # index 5 was never created
    assert _twin_probe(js, never) == (False, -1)
    with pytest.raises(ValueError, match="live handles"):
        _twin_add(js, never)
    assert snapshot(w) == before  # no row was touched
    assert w.get("hp", int(new))["hp"] == 99


def test_twin_adds_and_removes_live_entities_the_world_sees():
    w, e = make_world(4)
    js = w["hp"].jit
    assert _twin_add(js, e[2]) is True and _twin_add(js, e[2]) is False
    assert w.has("hp", e).tolist() == [False, False, True, False]
    # the store's own ids are live handles: get works on them
    assert w.get("hp", w["hp"].ids)["hp"].tolist() == [0]
    handles, ids = _twin_handles(js)
    assert handles.tolist() == ids.tolist() == w["hp"].ids.tolist()
    assert _twin_remove(js, e[2]) is True and len(w["hp"]) == 0


def test_twin_follows_the_world_when_its_entity_arrays_grow():
    w = World()
    w.register("hp", "i4")
    js = w["hp"].jit
    many = w.create(5_000)  # reallocates the world's generation arrays
    assert _twin_add(js, many[-1]) is True
    w.destroy(many[-1])
    reused = w.create(1)[0]
    assert _twin_probe(js, many[-1]) == (False, -1)
    assert _twin_add(js, reused) is True
    assert w["hp"].ids.tolist() == [reused]


def test_get_of_one_python_int_handle_matches_the_batch_get(recycled):
    w, stale, new = recycled
    assert w.get("hp", int(new)) == {"hp": 99}
    assert w.get("hp", int(new))["hp"] == w.get("hp", [new])["hp"][0]
    with pytest.raises(DeadHandleError, match="dead"):
        w.get("hp", int(stale))
    with pytest.raises(DeadHandleError, match="never created"):
        w.get("hp", 2**62)
    w2, e = make_world(2)
    with pytest.raises(KeyError, match="no 'hp' component"):
        w2.get("hp", int(e[0]))


def test_in_answers_any_hashable_as_set_does(recycled):
    w, stale, new = recycled
    store = w["hp"]
    assert new in store and int(new) in store and stale not in store
    for odd in (-1, "x", None, 1.5, 2**70, np.int8(-3)):
        assert odd not in store
    with pytest.raises(TypeError, match="unhashable"):
        _ = [new] in store
