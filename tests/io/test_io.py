"""Persistence and pickling: ``World.save`` / ``World.load``, ``sparseset.io``, pickle.

Covers docs/contract.md#persistence and docs/contract.md#persistence-errors:

- round trips keep everything a world is: handles and generations (stale
  handles stay dead), the free list (the next ``create`` hands out the same
  handles), every store's ids in dense order with every column bit for bit,
  and owning groups (same members, still packed, kept packed afterwards);
- ``save`` is atomic: it takes ``str`` and ``pathlib.Path``, overwrites, and
  leaves no temporary file behind, on success or on failure, and a failed
  save leaves the previous file intact;
- errors: a missing file raises ``FileNotFoundError``; a truncated,
  corrupted, foreign or wrong-version file, or one whose arrays contradict
  each other, raises ``sparseset.FormatError`` (a ``ValueError``) and no
  world comes back;
- pickle (every protocol from 2) and ``copy.deepcopy`` of a World, and of the
  objects that hang off one (stores, groups, views), plus plain ``SparseSet``
  and ``ComponentStore``.

Tampered files are built from a good save: read its arrays with numpy,
change one thing, write them back with ``npz.save``.
"""

import copy
import gc
import io
import json
import os
import pathlib
import pickle
import struct
import warnings
import zipfile

import numpy as np
import pytest

import sparseset
from sparseset import (
    ComponentStore,
    EntityStore,
    FormatError,
    Group,
    SparseMap,
    SparseSet,
    View,
    World,
)
from sparseset.io import npz

KIND = "sparseset.World"
VERSION = 1
LAST_GENERATION = 2**31 - 1
PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)


# --------------------------------------------------------------------------
# worlds to save
# --------------------------------------------------------------------------


def rich_world():
    """A world exercising every kind of saved state.

    Returns ``(world, handles)``: ``handles`` is every handle ever issued,
    live and dead (stale ones included), so callers can compare liveness.

    - components: 1-D and 2-D rows, int/uint/float/bool dtypes, a schema
      dict, a structured dtype, tags, and stores that never got a row;
    - two owning groups; swaps from removals; destroyed entities, two
      recycled indexes (generation 1 and 2) and a non-empty free list.
    """
    rng = np.random.default_rng(20240601)
    w = World()
    w.register("pos", "f8", shape=(3,))
    w.register("vel", "f4", shape=3)
    w.register("body", {"mass": "f4", "radius": ("f8", 2), "flags": "u1"})
    w.register("stats", np.dtype([("hp", "i4"), ("armed", "?"), ("xy", "i2", (2,))]))
    w.register("grid", "i8", shape=(2, 3))
    w.register("seen", "?")
    w.register("frozen")
    w.register("spin", "f8")
    w.register("charge", "i2")
    w.register("empty", "u2")
    w.register("never")

    e = w.create(40)
    w.add("pos", e, pos=rng.normal(size=(40, 3)))
    w.add("vel", e[::2], vel=rng.normal(size=(20, 3)))
    w.add(
        "body",
        e[5:30],
        mass=rng.random(25),
        radius=rng.random((25, 2)),
        flags=rng.integers(0, 256, 25, dtype=np.uint8),
    )
    w.add(
        "stats",
        e[::3],
        hp=rng.integers(-(2**31), 2**31, 14, dtype=np.int32),
        armed=rng.random(14) < 0.5,
        xy=rng.integers(-(2**15), 2**15, (14, 2), dtype=np.int16),
    )
    w.add("grid", e[10:20], grid=rng.integers(-(2**62), 2**62, (10, 2, 3)))
    w.add("seen", e[1::4], seen=np.arange(10) % 3 == 0)
    w.add("frozen", e[::5])
    w.add("spin", e[:30], spin=rng.normal(size=30))
    w.add("charge", e[20:][::-1], charge=rng.integers(-100, 100, 20, dtype=np.int16))
    w.group("pos", "vel")
    w.group("charge", "spin")

    w.discard("body", e[7:12])  # swap-and-pop in a plain store
    w.remove("vel", e[[4, 10]])  # and in a grouped one
    w.destroy(e[[3, 8, 20, 33]])
    recycled = w.create(2)  # two of those indexes, generation 1
    w.add("pos", recycled, pos=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w.add("vel", recycled[:1], vel=7.0)
    w.add("frozen", recycled[1])
    w.destroy(e[[0, 15, 39]])
    w.destroy(recycled[1])  # its index moves on to generation 2
    handles = np.concatenate([e, recycled])
    return w, handles


def small_world():
    """Six entities, ``pos``/``vel`` grouped, a tag; index 1 destroyed (free).

    Small enough to tamper with by hand: component0 is ``pos`` (f8, 2),
    component1 ``vel`` (f8, 2), component2 the tag ``tag``; the group
    ``(pos, vel)`` has 3 members (indexes 0, 2, 4).
    """
    w = World()
    w.register("pos", "f8", shape=(2,))
    w.register("vel", "f8", shape=(2,))
    w.register("tag")
    e = w.create(6)
    w.add("pos", e, pos=np.arange(12.0).reshape(6, 2))
    w.add("vel", e[::2], vel=[[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]])
    w.add("tag", e[1:3])
    w.group("pos", "vel")
    w.destroy(e[1])
    return w


def evolve(w):
    """Apply the same deterministic changes to a world built by ``rich_world``.

    Creates (reusing the free list), joins and leaves the ``(pos, vel)``
    group, destroys group members and updates the group in place.
    """
    new = w.create(5)
    w.add("pos", new, pos=np.arange(15.0).reshape(5, 3))
    w.add("vel", new[::2], vel=1.5)
    outside = w.view("pos", exclude=("vel",)).ids[:3]
    w.add("vel", outside, vel=-2.0)
    members = w.group("pos", "vel").ids
    w.remove("vel", members[:2])
    w.discard("pos", members[-1])
    w.destroy(members[2:4])
    w.add("charge", new[:2], charge=[5, 6])
    w.add("spin", new[1:3], spin=[0.25, 0.5])
    g = w.group("pos", "vel")
    g["pos"] += g["vel"] * 0.5
    w["body"].discard(w["body"].ids[:3])
    return new


# --------------------------------------------------------------------------
# comparing worlds
# --------------------------------------------------------------------------


def world_state(w):
    """Everything observable about a world, as plain values and column copies."""
    return {
        "len": len(w),
        "entities": w.entities.tolist(),
        "components": w.components,
        "schemas": {name: w[name].schema for name in w.components},
        "ids": {name: w[name].ids.tolist() for name in w.components},
        "columns": {
            (name, column): w[name][column].copy()
            for name in w.components
            for column in w[name].columns
        },
        "groups": [(g.components, len(g), g.ids.tolist()) for g in w.groups],
    }


def assert_same_state(got, expected):
    """Two ``world_state`` results are equal, columns bit for bit."""
    for key in ("len", "entities", "components", "schemas", "ids", "groups"):
        assert got[key] == expected[key], key
    assert got["columns"].keys() == expected["columns"].keys()
    for key, column in expected["columns"].items():
        other = got["columns"][key]
        assert other.dtype == column.dtype, key
        assert other.shape == column.shape, key
        assert other.tobytes() == column.tobytes(), key


def assert_group_packed(w, g):
    """The group invariant (docs/architecture.md#groups-keep-their-stores-packed),
    and that the group views are contiguous."""
    n = len(g)
    stores = [w[name] for name in g.components]
    front = stores[0].ids[:n].tolist()
    assert g.ids.tolist() == front
    for store in stores:
        assert store.group is g
        assert store.ids[:n].tolist() == front, store.name
        for column in store.columns:
            view = store[column][:n]
            assert view.flags.c_contiguous
    everywhere = set.intersection(*(set(store.ids.tolist()) for store in stores))
    assert everywhere == set(front)


def assert_same_world(got, expected, handles=()):
    """``got`` is indistinguishable from ``expected``, groups packed.

    ``handles`` (live and stale) must have the same liveness and the same
    component membership in both worlds.
    """
    assert_same_state(world_state(got), world_state(expected))
    handles = np.asarray(handles, np.int64)
    assert got.alive(handles).tolist() == expected.alive(handles).tolist()
    for name in expected.components:
        assert got.has(name, handles).tolist() == expected.has(name, handles).tolist()
    for g in got.groups:
        assert got.group(*g.components) is g
        assert_group_packed(got, g)


def assert_same_future(got, expected, k=12):
    """Both worlds hand out the same next handles (free list, then fresh)."""
    assert got.create(k).tolist() == expected.create(k).tolist()


def random_rows(rng, dtype, shape, n):
    """``n`` rows of ``shape`` of random bits (NaN payloads included)."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, (n, *shape, dtype.itemsize), dtype=np.uint8)
    if dtype.kind == "b":
        return raw[..., 0] % 2 == 1
    return raw.view(dtype)[..., 0].copy()


def listing(directory):
    return sorted(os.listdir(directory))


# --------------------------------------------------------------------------
# tampering with saved files
# --------------------------------------------------------------------------


def saved_arrays(directory, world=None):
    """The arrays of a good save of ``world`` (default: ``small_world()``)."""
    path = pathlib.Path(directory) / "good.npz"
    (small_world() if world is None else world).save(path)
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    assert str(arrays.pop("format")) == KIND
    assert int(arrays.pop("version")) == VERSION
    return arrays


def write_arrays(path, arrays):
    npz.save(path, KIND, VERSION, arrays)


def edit_meta(arrays, change):
    meta = json.loads(str(arrays["meta"]))
    change(meta)
    arrays["meta"] = np.array(json.dumps(meta))


def zip_offsets(data):
    """``(member name, data offset, data size, central entry offset)`` per member."""
    end = data.rfind(b"PK\x05\x06")
    (central,) = struct.unpack_from("<I", data, end + 16)
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    for info in infos:
        local = info.header_offset
        name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
        start = local + 30 + name_len + extra_len
        assert data[central : central + 4] == b"PK\x01\x02"
        out.append((info.filename, start, info.compress_size, central))
        name_len, extra_len, comment_len = struct.unpack_from(
            "<HHH", data, central + 28
        )
        central += 46 + name_len + extra_len + comment_len
    return out


# --------------------------------------------------------------------------
# round trips
# --------------------------------------------------------------------------


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "Path"])
def test_round_trip_keeps_everything(tmp_path, as_path):
    w, handles = rich_world()
    path = as_path(tmp_path / "world.npz")
    w.save(path)
    loaded = World.load(path)
    assert isinstance(loaded, World)
    assert_same_world(loaded, w, handles)
    assert_same_future(loaded, w)
    assert_same_world(loaded, w, handles)


def test_round_trip_keeps_generations_and_stale_handles(tmp_path):
    w = World()
    w.register("hp", "i4")
    e = w.create(4)
    w.add("hp", e, hp=[10, 11, 12, 13])
    w.destroy(e[[1, 2]])
    again = w.create(1)  # index 2, generation 1 (LIFO free list)
    w.add("hp", again, hp=99)
    assert again.tolist() == [2 | 1 << 32]
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")

    assert loaded.alive(e).tolist() == [True, False, False, True]
    assert loaded.alive(again[0])
    assert not loaded.has("hp", e[2])
    assert loaded.get("hp", again)["hp"].tolist() == [99]
    with pytest.raises(sparseset.DeadHandleError):
        loaded.add("hp", e[2], hp=0)
    with pytest.raises(ValueError):
        loaded.destroy(e[1])
    # The free list still holds index 1 (now generation 1), then fresh ones.
    assert loaded.create(2).tolist() == [1 | 1 << 32, 4]
    assert not loaded.alive(e[1])


def test_next_create_matches_the_original_world(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    # More than the free list holds, so recycled and fresh indexes both come.
    for k in (1, 3, 0, 10):
        assert_same_future(loaded, w, k)


def test_stores_keep_dense_order_and_columns(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    for name in w.components:
        assert loaded[name].ids.tolist() == w[name].ids.tolist(), name
        assert loaded[name].schema == w[name].schema, name
        for column in w[name].columns:
            got, expected = loaded[name][column], w[name][column]
            assert got.dtype == expected.dtype
            assert got.shape == expected.shape
            np.testing.assert_array_equal(got, expected)
            assert got.flags.writeable


def test_structured_dtype_component_keeps_its_fields(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert loaded["stats"].columns == ("hp", "armed", "xy")
    assert loaded["stats"].schema == {
        "hp": (np.dtype("i4"), ()),
        "armed": (np.dtype("?"), ()),
        "xy": (np.dtype("i2"), (2,)),
    }
    assert loaded["body"].columns == ("mass", "radius", "flags")
    assert loaded["grid"]["grid"].shape[1:] == (2, 3)


def test_tag_and_zero_row_components_survive(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert loaded["frozen"].columns == ()
    assert loaded["frozen"].ids.tolist() == w["frozen"].ids.tolist()
    assert len(loaded["empty"]) == 0
    assert loaded["empty"]["empty"].shape == (0,)
    assert loaded["empty"]["empty"].dtype == np.dtype("u2")
    assert len(loaded["never"]) == 0
    live = loaded.entities
    assert loaded.add("empty", live[:2], empty=np.array([3, 4], np.uint16)) == 2
    assert loaded.add("never", live[:2]) == 2


@pytest.mark.parametrize(
    "dtype",
    ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?", "c16"],
)
@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3)], ids=str)
def test_every_dtype_and_row_shape_round_trips_bit_for_bit(tmp_path, dtype, shape):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(5)
    n = 7
    values = random_rows(rng, dtype, shape, n)
    if dtype.kind in "fc":
        values.reshape(-1)[:3] = [np.nan, -0.0, np.inf]  # a view: values is a copy
    w = World()
    w.register("x", dtype, shape=shape)
    e = w.create(n + 2)
    w.add("x", e[1 : n + 1][::-1], x=values)
    w.discard("x", e[4])
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert loaded["x"].schema == {"x": (dtype, shape)}
    assert_same_world(loaded, w, e)


def test_groups_come_back_packed_and_owned(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert [g.components for g in loaded.groups] == [("pos", "vel"), ("charge", "spin")]
    for g, original in zip(loaded.groups, w.groups, strict=True):
        assert isinstance(g, Group)
        assert len(g) == len(original) > 0
        assert g.ids.tolist() == original.ids.tolist()
        assert_group_packed(loaded, g)
        for name in g.components:  # one column each, named like the component
            np.testing.assert_array_equal(g[name], original[name])
    assert loaded.group("vel", "pos") is loaded.groups[0]
    with pytest.raises(ValueError):
        loaded.group("pos", "spin")  # pos is still owned
    with pytest.raises(ValueError):
        loaded["pos"].sort()


def test_loaded_world_evolves_like_the_original(tmp_path):
    w, handles = rich_world()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    new_loaded, new_original = evolve(loaded), evolve(w)
    assert new_loaded.tolist() == new_original.tolist()
    everything = np.concatenate([handles, new_original])
    assert_same_world(loaded, w, everything)
    assert_same_future(loaded, w)
    assert_same_world(loaded, w, everything)


def test_group_stays_valid_after_changes_on_the_loaded_world(tmp_path):
    small_world().save(tmp_path / "w.npz")
    w = World.load(tmp_path / "w.npz")
    g = w.groups[0]
    assert len(g) == 3
    e = w.entities
    w.add("vel", e, vel=9.0)  # everyone joins
    assert len(g) == len(e)
    assert_group_packed(w, g)
    w.remove("pos", g.ids[0])
    w.destroy(g.ids[-1])
    assert len(g) == len(e) - 2
    assert_group_packed(w, g)
    fresh = w.create(2)
    w.add("pos", fresh, pos=1.0)
    w.add("vel", fresh, vel=2.0)
    assert set(fresh.tolist()) <= set(g.ids.tolist())
    assert_group_packed(w, g)
    w["vel"].clear()
    assert len(g) == 0
    assert_group_packed(w, g)


def test_empty_world_round_trips(tmp_path):
    w = World()
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert len(loaded) == 0
    assert loaded.components == ()
    assert loaded.groups == ()
    assert loaded.entities.tolist() == []
    assert loaded.create(3).tolist() == [0, 1, 2]


def test_world_with_components_but_no_entities_round_trips(tmp_path):
    w = World(capacity=50)
    w.register("pos", "f8", shape=(2,))
    w.register("tag")
    w.group("pos", "tag")
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert_same_world(loaded, w)
    assert len(loaded.groups[0]) == 0
    assert loaded["pos"]["pos"].shape == (0, 2)
    e = loaded.create(2)
    loaded.add("pos", e, pos=1.0)
    loaded.add("tag", e[1])
    assert loaded.groups[0].ids.tolist() == [e[1]]


def test_world_whose_entities_all_died_round_trips(tmp_path):
    w = World()
    w.register("hp", "i4")
    e = w.create(5)
    w.add("hp", e, hp=1)
    w.destroy(e)
    w.save(tmp_path / "w.npz")
    loaded = World.load(tmp_path / "w.npz")
    assert_same_world(loaded, w, e)
    assert len(loaded["hp"]) == 0
    assert_same_future(loaded, w, 7)


def test_saving_a_loaded_world_writes_the_same_arrays(tmp_path):
    w, _ = rich_world()
    first = saved_arrays(tmp_path, w)
    second = saved_arrays(tmp_path, World.load(tmp_path / "good.npz"))
    assert first.keys() == second.keys()
    for key, value in first.items():
        assert second[key].dtype == value.dtype, key
        np.testing.assert_array_equal(second[key], value, err_msg=key)


def test_each_load_is_an_independent_world(tmp_path):
    small_world().save(tmp_path / "w.npz")
    a, b = World.load(tmp_path / "w.npz"), World.load(tmp_path / "w.npz")
    before = world_state(b)
    a["pos"]["pos"][:] = -1.0
    a.destroy(a.entities[0])
    a.create(3)
    assert_same_state(world_state(b), before)


def test_retired_index_stays_retired_after_load(tmp_path):
    # A dead index at the last generation is retired: not on the free list.
    arrays = saved_arrays(tmp_path)
    arrays["generations"][1] = LAST_GENERATION
    arrays["free"] = arrays["free"][:0]
    write_arrays(tmp_path / "w.npz", arrays)
    w = World.load(tmp_path / "w.npz")
    assert w.create(2).tolist() == [6, 7]
    assert not w.alive(1 | LAST_GENERATION << 32)


def test_live_entity_at_last_generation_is_retired_on_destroy(tmp_path):
    arrays = saved_arrays(tmp_path)
    arrays["generations"][3] = LAST_GENERATION
    write_arrays(tmp_path / "w.npz", arrays)
    w = World.load(tmp_path / "w.npz")
    old = 3 | LAST_GENERATION << 32
    assert w.alive(old)
    assert not w.alive(3)
    assert w.get("pos", old)["pos"].tolist() == [6.0, 7.0]
    w.destroy(old)
    assert w.create(3).tolist() == [1 | 1 << 32, 6, 7]
    assert not w.alive(old)


# --------------------------------------------------------------------------
# saving: atomic, no leftovers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "Path"])
def test_save_leaves_only_the_target(tmp_path, as_path):
    small_world().save(as_path(tmp_path / "world.npz"))
    assert listing(tmp_path) == ["world.npz"]


def test_save_writes_exactly_the_path_given(tmp_path):
    small_world().save(tmp_path / "world.bin")
    assert listing(tmp_path) == ["world.bin"]
    assert len(World.load(tmp_path / "world.bin")) == 5


def test_save_to_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    small_world().save("relative.npz")
    assert listing(tmp_path) == ["relative.npz"]
    assert len(World.load("relative.npz")) == 5


def test_save_overwrites_an_existing_file(tmp_path):
    path = tmp_path / "w.npz"
    path.write_bytes(b"not a world at all")
    first, _ = rich_world()
    first.save(path)
    second = small_world()
    second.save(path)
    assert listing(tmp_path) == ["w.npz"]
    assert_same_world(World.load(path), second)


def test_save_renames_a_file_written_next_to_the_target(tmp_path, monkeypatch):
    renames = []
    real_replace = os.replace

    def recording_replace(src, dst):
        renames.append((os.fspath(src), os.fspath(dst)))
        assert listing(tmp_path) == [os.path.basename(src)]
        return real_replace(src, dst)

    monkeypatch.setattr(npz.os, "replace", recording_replace)
    small_world().save(tmp_path / "w.npz")
    [(src, dst)] = renames
    assert os.path.dirname(src) == os.path.dirname(dst) == str(tmp_path)
    assert os.path.basename(dst) == "w.npz"
    assert listing(tmp_path) == ["w.npz"]


class DiskFullError(OSError):
    pass


def _fail_in_savez(monkeypatch, error):
    def half_a_savez(file, **arrays):
        file.write(b"PK\x03\x04" + b"\0" * 100)  # a start, then the failure
        raise error

    monkeypatch.setattr(np, "savez", half_a_savez)


def _fail_in_fsync(monkeypatch, error):
    def failing_fsync(fd):
        raise error

    monkeypatch.setattr(npz.os, "fsync", failing_fsync)


def _fail_in_replace(monkeypatch, error):
    def failing_replace(src, dst):
        raise error

    monkeypatch.setattr(npz.os, "replace", failing_replace)


FAILURE_POINTS = [_fail_in_savez, _fail_in_fsync, _fail_in_replace]
FAILURES = [DiskFullError(28, "No space left on device"), KeyboardInterrupt()]


@pytest.mark.parametrize("fail_at", FAILURE_POINTS, ids=["savez", "fsync", "replace"])
@pytest.mark.parametrize("error", FAILURES, ids=["OSError", "KeyboardInterrupt"])
def test_failed_save_keeps_the_previous_file_and_leaves_nothing(
    tmp_path, monkeypatch, fail_at, error
):
    path = tmp_path / "w.npz"
    previous = small_world()
    previous.save(path)
    before = path.read_bytes()
    replacement, _ = rich_world()
    fail_at(monkeypatch, error)
    with pytest.raises(type(error)):
        replacement.save(path)
    monkeypatch.undo()
    assert listing(tmp_path) == ["w.npz"]
    assert path.read_bytes() == before
    assert_same_world(World.load(path), previous)


@pytest.mark.parametrize("fail_at", FAILURE_POINTS, ids=["savez", "fsync", "replace"])
def test_failed_first_save_leaves_the_directory_empty(tmp_path, monkeypatch, fail_at):
    fail_at(monkeypatch, DiskFullError(28, "No space left on device"))
    with pytest.raises(DiskFullError):
        small_world().save(str(tmp_path / "w.npz"))
    assert listing(tmp_path) == []


def test_save_into_a_missing_directory_raises_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        small_world().save(tmp_path / "nowhere" / "w.npz")
    assert listing(tmp_path) == []


@pytest.mark.parametrize("reserved", ["format", "version"])
def test_io_save_refuses_header_names_and_leaves_nothing(tmp_path, reserved):
    with pytest.raises(ValueError, match=reserved):
        npz.save(tmp_path / "x.npz", "demo", 1, {reserved: np.arange(2)})
    assert listing(tmp_path) == []


def test_io_round_trip_returns_the_arrays_without_the_header(tmp_path):
    arrays = {"a": np.arange(5, dtype=np.int16), "b": np.array("text"), "c": 2.5}
    npz.save(tmp_path / "x.npz", "demo", 3, arrays)
    got = npz.load(str(tmp_path / "x.npz"), "demo", 3)
    assert sorted(got) == ["a", "b", "c"]
    assert got["a"].dtype == np.int16
    assert got["a"].tolist() == [0, 1, 2, 3, 4]
    assert str(got["b"]) == "text"
    assert float(got["c"]) == 2.5


# --------------------------------------------------------------------------
# loading: what is wrong with a file
# --------------------------------------------------------------------------


def test_format_error_is_a_value_error():
    assert issubclass(FormatError, ValueError)
    assert sparseset.FormatError is sparseset.io.FormatError


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "Path"])
def test_missing_file_raises_file_not_found(tmp_path, as_path):
    for missing in (tmp_path / "absent.npz", tmp_path / "no_dir" / "absent.npz"):
        with pytest.raises(FileNotFoundError) as info:
            World.load(as_path(missing))
        assert not isinstance(info.value, FormatError)
        assert "absent.npz" in str(info.value)
    assert listing(tmp_path) == []


def _good_file(tmp_path):
    path = tmp_path / "w.npz"
    small_world().save(path)
    return path, path.read_bytes()


CUTS = {
    "empty": lambda n: 0,
    "1 byte": lambda n: 1,
    "4 bytes": lambda n: 4,
    "first header": lambda n: 40,
    "a tenth": lambda n: n // 10,
    "half": lambda n: n // 2,
    "nine tenths": lambda n: 9 * n // 10,
    "end record cut": lambda n: n - 10,
    "last byte missing": lambda n: n - 1,
}


@pytest.mark.parametrize("cut", CUTS.values(), ids=CUTS.keys())
def test_truncated_file_raises_format_error(tmp_path, cut):
    path, data = _good_file(tmp_path)
    path.write_bytes(data[: cut(len(data))])
    with pytest.raises(FormatError):
        World.load(path)


@pytest.mark.parametrize("cut", [40, -10], ids=["cut early", "cut late"])
def test_failed_load_closes_the_file(tmp_path, cut):
    path, data = _good_file(tmp_path)
    path.write_bytes(data[:cut])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(FormatError):
            World.load(path)
        gc.collect()
    leaks = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []


def test_flipped_byte_in_the_middle_raises_format_error(tmp_path):
    path, data = _good_file(tmp_path)
    # The middle byte of the stored array that spans (or follows) the
    # file's middle: zip headers hold fields no reader checks (timestamps).
    spans = []
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            offset = info.header_offset
            name_length, extra_length = struct.unpack(
                "<HH", data[offset + 26 : offset + 30]
            )
            start = offset + 30 + name_length + extra_length
            spans.append((start, start + info.compress_size))
    start, end = next(span for span in sorted(spans) if span[1] > len(data) // 2)
    corrupt = bytearray(data)
    corrupt[(start + end) // 2] ^= 0xFF
    path.write_bytes(bytes(corrupt))
    with pytest.raises(FormatError):
        World.load(path)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_flipped_byte_in_any_saved_array_raises_format_error(tmp_path, where):
    path, data = _good_file(tmp_path)
    members = zip_offsets(data)
    assert len(members) >= 8
    for _, start, size, _ in members:
        offset = {"first": start, "middle": start + size // 2, "last": start + size - 1}
        corrupt = bytearray(data)
        corrupt[offset[where]] ^= 0x01
        path.write_bytes(bytes(corrupt))
        with pytest.raises(FormatError):
            World.load(path)


# Central-directory bit flips, by offset from the entry's signature, that
# zipfile answers with errors other than BadZipFile.
HEADER_FLIPS = [
    pytest.param(8, 0x01, id="encrypted flag"),  # RuntimeError
    pytest.param(10, 0x01, id="compression method"),  # NotImplementedError
    pytest.param(6, 0x80, id="version needed"),  # NotImplementedError
]


@pytest.mark.parametrize(("offset", "bit"), HEADER_FLIPS)
def test_flipped_bit_in_a_zip_header_raises_format_error(tmp_path, offset, bit):
    path, data = _good_file(tmp_path)
    _, _, _, central = zip_offsets(data)[2]
    corrupt = bytearray(data)
    corrupt[central + offset] ^= bit
    path.write_bytes(bytes(corrupt))
    with pytest.raises(FormatError):
        World.load(path)


def test_a_bit_flip_in_any_byte_is_caught_or_harmless(tmp_path):
    path, data = _good_file(tmp_path)
    expected = World.load(path)
    flipped = tmp_path / "flipped.npz"
    for position in range(len(data)):
        # One flip per byte, walking the bit through all eight places as
        # the byte moves on: every byte and every bit place, one load each.
        corrupt = bytearray(data)
        corrupt[position] ^= 1 << (position % 8)
        flipped.write_bytes(bytes(corrupt))
        try:
            got = World.load(flipped)
        except FormatError:
            continue
        # A flip in a field zipfile ignores (a date, say) changes nothing.
        assert_same_world(got, expected)


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"hello, world\n" * 20, b"PK\x03\x04", b"\x93NUMPY"],
    ids=["empty", "newline", "text", "zip magic only", "npy magic only"],
)
def test_non_zip_file_raises_format_error(tmp_path, content):
    path = tmp_path / "w.npz"
    path.write_bytes(content)
    with pytest.raises(FormatError):
        World.load(path)


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_raise_format_error(tmp_path, seed):
    path = tmp_path / "w.npz"
    path.write_bytes(np.random.default_rng(seed).bytes(64 + 300 * seed))
    with pytest.raises(FormatError):
        World.load(path)


def test_pickle_file_is_refused_not_unpickled(tmp_path):
    path = tmp_path / "w.npz"
    path.write_bytes(pickle.dumps(small_world()))
    with pytest.raises(FormatError):
        World.load(path)


def test_npz_with_an_object_array_is_refused(tmp_path):
    path = tmp_path / "w.npz"
    with open(path, "wb") as file:
        np.savez(
            file,
            format=np.array(KIND),
            version=np.array(VERSION),
            meta=np.array([{"components": []}], dtype=object),
        )
    with pytest.raises(FormatError):
        World.load(path)


def test_npy_file_raises_format_error(tmp_path):
    path = tmp_path / "w.npz"
    with open(path, "wb") as file:
        np.save(file, np.arange(10))
    with pytest.raises(FormatError):
        World.load(path)


@pytest.mark.parametrize("version", [0, 2, 99, -1])
def test_wrong_version_raises_format_error(tmp_path, version):
    arrays = saved_arrays(tmp_path)
    npz.save(tmp_path / "w.npz", KIND, version, arrays)
    with pytest.raises(FormatError, match="version"):
        World.load(tmp_path / "w.npz")


@pytest.mark.parametrize("kind", ["sparseset.SparseSet", "", "sparseset.world"])
def test_wrong_kind_raises_format_error(tmp_path, kind):
    arrays = saved_arrays(tmp_path)
    npz.save(tmp_path / "w.npz", kind, VERSION, arrays)
    with pytest.raises(FormatError):
        World.load(tmp_path / "w.npz")


HEADERS = {
    "no header": {},
    "no version": {"format": np.array(KIND)},
    "no format": {"version": np.array(VERSION)},
    "version as text": {"format": np.array(KIND), "version": np.array("1")},
    "version as float": {"format": np.array(KIND), "version": np.array(1.0)},
    "version 1-D": {"format": np.array(KIND), "version": np.array([1])},
    "format 1-D": {"format": np.array([KIND]), "version": np.array(VERSION)},
    "format as bytes": {"format": np.array(KIND.encode()), "version": np.array(1)},
}


@pytest.mark.parametrize("header", HEADERS.values(), ids=HEADERS.keys())
def test_bad_header_raises_format_error(tmp_path, header):
    arrays = saved_arrays(tmp_path)
    path = tmp_path / "w.npz"
    with open(path, "wb") as file:
        np.savez(file, **header, **arrays)
    with pytest.raises(FormatError):
        World.load(path)


# -- well-formed files that contradict themselves ---------------------------


def _swap_first_two_vel_rows(a):
    for key in ("component1.ids", "component1.column0"):
        a[key][[0, 1]] = a[key][[1, 0]]


def _append(key, value):
    def change(a):
        a[key] = np.append(a[key], np.array(value, a[key].dtype))

    return change


def _set(key, value):
    def change(a):
        a[key] = value

    return change


def _drop(key):
    def change(a):
        del a[key]

    return change


def _meta(change):
    return lambda a: edit_meta(a, change)


def _set_generation(index, value):
    def change(a):
        a["generations"][index] = value

    return change


def _list_pos_twice(a):
    edit_meta(a, lambda m: m["components"].append(m["components"][0]))
    a["component3.ids"] = a["component0.ids"]
    a["component3.column0"] = a["component0.column0"]


#: What to break -> (a fragment of the FormatError's message, how to break it).
INCONSISTENT = {
    # stores
    "store holds a dead entity": ("not alive", _append("component2.ids", 1)),
    "store holds a never-created index": ("not alive", _append("component2.ids", 6)),
    "store holds a negative id": (
        "not alive",
        _set("component2.ids", np.array([-1, 2])),
    ),
    "store holds an id twice": (
        "entity twice",
        _set("component2.ids", np.array([2, 2])),
    ),
    "store ids 2-D": (
        "component2.ids",
        lambda a: a.update({"component2.ids": a["component2.ids"].reshape(1, -1)}),
    ),
    "store ids as floats": (
        "component2.ids",
        lambda a: a.update({"component2.ids": a["component2.ids"].astype(float)}),
    ),
    "column one row short": (
        "does not match its entities",
        lambda a: a.update({"component0.column0": a["component0.column0"][:-1]}),
    ),
    "column one row long": (
        "does not match its entities",
        lambda a: a.update(
            {"component0.column0": np.concatenate([a["component0.column0"]] * 2)}
        ),
    ),
    "column is a scalar": (
        "does not match its entities",
        _set("component0.column0", np.array(1.0)),
    ),
    # groups
    "group not packed alike": ("not packed alike", _swap_first_two_vel_rows),
    "group shorter than its members": (
        "does not hold every entity",
        _meta(lambda m: m.update(group_lengths=[2])),
    ),
    "group longer than a store": (
        "impossible length",
        _meta(lambda m: m.update(group_lengths=[4])),
    ),
    "group length negative": (
        "impossible length",
        _meta(lambda m: m.update(group_lengths=[-1])),
    ),
    "group of an unknown component": (
        "unknown component",
        _meta(lambda m: m.update(groups=[["pos", "x"]])),
    ),
    "group of no component": (
        "unknown component",
        _meta(lambda m: m.update(groups=[[]])),
    ),
    "group names a component twice": (
        "shares a component",
        _meta(lambda m: m.update(groups=[["pos", "pos"]])),
    ),
    "groups share a component": (
        "shares a component",
        _meta(
            lambda m: m.update(
                groups=[["pos", "vel"], ["vel", "tag"]], group_lengths=[3, 0]
            )
        ),
    ),
    "groups and lengths disagree": (
        "inconsistent",
        _meta(lambda m: m.update(group_lengths=[3, 3])),
    ),
    # entities
    "free list names a live index": (
        "names a live one",
        _set("free", np.array([0], np.int32)),
    ),
    "free list repeats an index": (
        "repeats an index",
        _set("free", np.array([1, 1], np.int32)),
    ),
    "free list past the entities": (
        "never used",
        _set("free", np.array([1, 6], np.int32)),
    ),
    "free list negative": ("never used", _set("free", np.array([1, -1], np.int32))),
    "dead index neither free nor retired": (
        "neither free nor retired",
        _set("free", np.empty(0, np.int32)),
    ),
    "free list as floats": ("'free'", _set("free", np.array([1.0]))),
    "alive shorter than generations": (
        "disagree in length",
        lambda a: a.update(alive=a["alive"][:-1]),
    ),
    "alive as integers": (
        "'alive'",
        lambda a: a.update(alive=a["alive"].astype(np.uint8)),
    ),
    "generation past the last": ("past the last", _set_generation(0, 2**31)),
    "generations signed": (
        "'generations'",
        lambda a: a.update(generations=a["generations"].astype(np.int64)),
    ),
    "generations 2-D": (
        "'generations'",
        lambda a: a.update(generations=a["generations"][None]),
    ),
    # missing arrays
    "meta missing": ("'meta' is missing", _drop("meta")),
    "generations missing": ("'generations' is missing", _drop("generations")),
    "alive missing": ("'alive' is missing", _drop("alive")),
    "free missing": ("'free' is missing", _drop("free")),
    "store ids missing": ("'component1.ids' is missing", _drop("component1.ids")),
    "column missing": ("does not match its entities", _drop("component0.column0")),
    # the description
    "meta not JSON": ("unreadable", _set("meta", np.array("{not json"))),
    "meta empty": ("unreadable", _set("meta", np.array(""))),
    "meta a list": ("unreadable", _set("meta", np.array("[1, 2]"))),
    "meta a number": ("unreadable", _set("meta", np.array("7"))),
    "meta 1-D": ("'meta'", lambda a: a.update(meta=a["meta"][None])),
    "meta as bytes": (
        "'meta'",
        lambda a: a.update(meta=np.array(str(a["meta"]).encode())),
    ),
    "meta without components": ("unreadable", _meta(lambda m: m.pop("components"))),
    "meta without groups": ("unreadable", _meta(lambda m: m.pop("groups"))),
    "meta without group lengths": (
        "unreadable",
        _meta(lambda m: m.pop("group_lengths")),
    ),
    "meta without capacity": ("unreadable", _meta(lambda m: m.pop("capacity"))),
    "capacity negative": ("inconsistent", _meta(lambda m: m.update(capacity=-1))),
    "capacity past the index limit": (
        "inconsistent",
        _meta(lambda m: m.update(capacity=2**31 + 1)),
    ),
    "capacity text": ("unreadable", _meta(lambda m: m.update(capacity="lots"))),
    "capacity NaN": ("unreadable", _meta(lambda m: m.update(capacity=float("nan")))),
    "component listed twice": ("listed twice", _list_pos_twice),
    "component entry of three": (
        "unreadable",
        _meta(lambda m: m["components"][0].append("extra")),
    ),
    "components not a list": ("unreadable", _meta(lambda m: m.update(components=5))),
    "group lengths text": (
        "unreadable",
        _meta(lambda m: m.update(group_lengths=["x"])),
    ),
}


def _give_the_tag_a_column(column):
    """Describe the tag as having one float column named ``column``."""

    def change(a):
        edit_meta(a, lambda m: m["components"][2].__setitem__(1, [column]))
        a["component2.column0"] = np.zeros(len(a["component2.ids"]))

    return change


#: Descriptions that other layers would reject with their own errors.
BADLY_DESCRIBED = {
    "capacity infinite": _meta(lambda m: m.update(capacity=float("inf"))),
    "group length infinite": _meta(lambda m: m.update(group_lengths=[float("inf")])),
    "component name empty": _meta(lambda m: m["components"][2].__setitem__(0, "")),
    "column name a keyword": _give_the_tag_a_column("for"),
    "column name with an underscore": _give_the_tag_a_column("_ids"),
    "column rows hold no data": lambda a: a.update(
        {"component0.column0": np.zeros((len(a["component0.ids"]), 0))}
    ),
}


def _expect_format_error(tmp_path, tamper, problem=""):
    """The tampered arrays are refused as a file and as a pickled state."""
    arrays = saved_arrays(tmp_path)
    tamper(arrays)
    path = tmp_path / "w.npz"
    write_arrays(path, arrays)
    with pytest.raises(FormatError, match="the world was not loaded") as info:
        World.load(path)
    assert problem in str(info.value)
    assert "w.npz" in str(info.value)
    with pytest.raises(FormatError, match="pickled world") as info:
        World.__new__(World).__setstate__(arrays)
    assert problem in str(info.value)


def test_untampered_arrays_load(tmp_path):
    arrays = saved_arrays(tmp_path)
    write_arrays(tmp_path / "w.npz", arrays)
    assert_same_world(World.load(tmp_path / "w.npz"), small_world(), np.arange(7))


@pytest.mark.parametrize("case", INCONSISTENT.values(), ids=INCONSISTENT.keys())
def test_inconsistent_file_raises_format_error(tmp_path, case):
    problem, tamper = case
    _expect_format_error(tmp_path, tamper, problem)


@pytest.mark.parametrize("tamper", BADLY_DESCRIBED.values(), ids=BADLY_DESCRIBED.keys())
def test_badly_described_file_raises_format_error(tmp_path, tamper):
    _expect_format_error(tmp_path, tamper)


# --------------------------------------------------------------------------
# pickle and deepcopy
# --------------------------------------------------------------------------


def _pickled(obj, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_world_round_trip(protocol):
    w, handles = rich_world()
    clone = _pickled(w, protocol)
    assert isinstance(clone, World)
    assert_same_world(clone, w, handles)
    assert_same_future(clone, w)
    assert_same_world(clone, w, handles)


def test_deepcopy_world_round_trip():
    w, handles = rich_world()
    clone = copy.deepcopy(w)
    assert_same_world(clone, w, handles)
    assert_same_future(clone, w)


@pytest.mark.parametrize(
    "duplicate", [_pickled, copy.deepcopy], ids=["pickle", "deepcopy"]
)
def test_copies_are_independent_both_ways(duplicate):
    w, _ = rich_world()
    clone = duplicate(w)
    before = world_state(w)
    evolve(clone)
    clone["grid"]["grid"][:] = 0
    clone.destroy(clone.entities[:5])
    assert_same_state(world_state(w), before)

    w2, _ = rich_world()
    clone2 = duplicate(w2)
    snapshot = world_state(clone2)
    evolve(w2)
    w2["stats"]["hp"][:] = -5
    assert_same_state(world_state(clone2), snapshot)


@pytest.mark.parametrize(
    "duplicate", [_pickled, copy.deepcopy], ids=["pickle", "deepcopy"]
)
def test_copied_world_keeps_its_groups_working(duplicate):
    w, handles = rich_world()
    clone = duplicate(w)
    assert [g.components for g in clone.groups] == [g.components for g in w.groups]
    for g in clone.groups:
        assert clone.group(*reversed(g.components)) is g
        for name in g.components:
            assert clone[name].group is g
    new_clone, new_w = evolve(clone), evolve(w)
    assert_same_world(clone, w, np.concatenate([handles, new_w]))
    assert new_clone.tolist() == new_w.tolist()


def test_pickled_world_can_be_saved_and_loaded(tmp_path):
    w, handles = rich_world()
    _pickled(w).save(tmp_path / "w.npz")
    assert_same_world(World.load(tmp_path / "w.npz"), w, handles)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_entity_store_alone_brings_its_world(protocol):
    w, handles = rich_world()
    store = _pickled(w["pos"], protocol)
    assert isinstance(store, EntityStore)
    assert store.name == "pos"
    assert store.ids.tolist() == w["pos"].ids.tolist()
    np.testing.assert_array_equal(store["pos"], w["pos"]["pos"])
    assert store.contains(handles).tolist() == w["pos"].contains(handles).tolist()
    assert store.group is not None
    assert store.group.components == ("pos", "vel")
    store["pos"][:] = 0.0
    assert w["pos"]["pos"].any()


def test_pickle_entity_store_with_its_world_is_that_worlds_store():
    w, _ = rich_world()
    clone, pos, body = _pickled((w, w["pos"], w["body"]))
    assert pos is clone["pos"]
    assert body is clone["body"]
    assert_same_world(clone, w)


def test_deepcopy_entity_store():
    w, _ = rich_world()
    store = copy.deepcopy(w["body"])
    assert store is not w["body"]
    assert store.ids.tolist() == w["body"].ids.tolist()
    for column in w["body"].columns:
        np.testing.assert_array_equal(store[column], w["body"][column])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_group(protocol):
    w, _ = rich_world()
    g = w.group("pos", "vel")
    clone = _pickled(g, protocol)
    assert isinstance(clone, Group)
    assert clone.components == g.components
    assert len(clone) == len(g)
    assert clone.ids.tolist() == g.ids.tolist()
    for column in ("pos", "vel"):
        np.testing.assert_array_equal(clone[column], g[column])
    clone["pos"] += 1.0
    np.testing.assert_array_equal(clone["pos"], g["pos"] + 1.0)


def test_pickle_group_with_its_world_is_that_worlds_group():
    w, _ = rich_world()
    clone, g1, g2 = _pickled((w, *w.groups))
    assert (g1, g2) == clone.groups
    assert g1 is clone.groups[0]
    assert g2 is clone.groups[1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_view(protocol):
    w, _ = rich_world()
    v = w.view("pos", "body", exclude=("frozen", "seen"))
    assert len(v) > 0
    clone = _pickled(v, protocol)
    assert isinstance(clone, View)
    assert clone.components == v.components
    assert clone.exclude == v.exclude
    assert clone.ids.tolist() == v.ids.tolist()
    for name in v.components:
        assert clone.rows(name).tolist() == v.rows(name).tolist()


def test_pickle_view_with_its_world_follows_that_world():
    w, _ = rich_world()
    clone, v = _pickled((w, w.view("pos", exclude=("vel",))))
    before = len(v)
    clone.add("vel", v.ids[:2], vel=0.0)
    assert len(v) == before - 2
    assert len(w.view("pos", exclude=("vel",))) == before


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_sparse_set(protocol):
    s = SparseSet(capacity=100)
    s.add([5, 90, 3, 41, 7, 2_000_000])
    s.discard([90, 7])
    assert s.ids.tolist() == [5, 2_000_000, 3, 41]
    clone = _pickled(s, protocol)
    assert isinstance(clone, SparseSet)
    assert clone.ids.tolist() == s.ids.tolist()
    assert clone == s
    clone.add(8)
    assert 8 not in s
    empty = _pickled(SparseSet(), protocol)
    assert len(empty) == 0
    assert empty.add([1, 2]) == 2


def test_deepcopy_sparse_set():
    s = SparseSet.from_ids([9, 4, 1, 6])
    s.remove(4)
    clone = copy.deepcopy(s)
    assert clone.ids.tolist() == [9, 6, 1]
    clone.discard(9)
    assert s.ids.tolist() == [9, 6, 1]


STORE_SCHEMAS = {
    "dict": {"pos": ("f8", 3), "grid": ("i2", (2, 2)), "ok": "?", "count": "u8"},
    "structured": np.dtype([("hp", "i4"), ("xy", "f4", (2,)), ("flag", "u1")]),
    "tag": {},
}


@pytest.mark.parametrize("schema", STORE_SCHEMAS.values(), ids=STORE_SCHEMAS.keys())
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_component_store(schema, protocol):
    store = ComponentStore(schema)
    ids = [12, 3, 700, 41, 5, 9]
    rng = np.random.default_rng(3)
    columns = {}
    for name, (dtype, shape) in store.schema.items():
        columns[name] = random_rows(rng, dtype, shape, len(ids))
    store.add(ids, **columns)
    store.discard([3, 41])
    clone = _pickled(store, protocol)
    assert type(clone) is ComponentStore
    assert clone.ids.tolist() == store.ids.tolist() == [12, 9, 700, 5]
    assert clone.schema == store.schema
    for name in store.columns:
        assert clone[name].dtype == store[name].dtype
        assert clone[name].tobytes() == store[name].tobytes()
    clone.add(1000)
    for name in store.columns:
        clone[name][:] = 0
    assert 1000 not in store
    for name in store.columns:
        assert store[name].tobytes() == columns[name][[0, 5, 2, 4]].tobytes()


def test_pickle_sparse_map():
    m = SparseMap("f8", shape=2)
    m[4] = [1.0, 2.0]
    m[1] = [3.0, 4.0]
    m[9] = [5.0, 6.0]
    del m[4]
    clone = _pickled(m)
    assert list(clone) == list(m)
    for key in m:
        assert clone[key].tolist() == m[key].tolist()
