"""Parquet: ``store.to_parquet`` / ``ComponentStore.read_parquet`` and
``World.save(path, format="parquet")`` / ``World.load``.

- a store is one Parquet file (its ``to_arrow`` table, page checksums on);
  round trips are exact for every dtype and row shape; a missing file is
  ``FileNotFoundError``, a truncated or corrupted one ``FormatError``, and
  no flipped byte ever reads back as different data;
- a world is a directory (manifest, entities, free list, one file per
  component); round trips keep everything the ``.npz`` format keeps
  (``test_io``'s helpers compare them), and loads are validated by the
  same code: every inconsistency ``test_io`` plants in an ``.npz`` file,
  planted in a Parquet directory, raises the same ``FormatError``;
- writes are atomic: a temporary directory, then one exchange (or two
  renames); a failure anywhere keeps the old save and leaves nothing else;
  a failed load builds no world.
"""

import json
import os
import pathlib
import tempfile
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from test_interop import DTYPES, assert_same_store, rich_store, stores
from test_io import (
    INCONSISTENT,
    assert_same_future,
    assert_same_world,
    evolve,
    rich_world,
    saved_arrays,
    small_world,
    world_state,
)

from sparseset import ComponentStore, FormatError, World
from sparseset.io import parquet as parquet_io
from sparseset.world import persistence

# --------------------------------------------------------------------------
# stores
# --------------------------------------------------------------------------


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "Path"])
@pytest.mark.parametrize("kind", ["flat", "paged", "hash"])
def test_store_round_trip(tmp_path, as_path, kind):
    store = rich_store(kind)
    path = as_path(tmp_path / "store.parquet")
    store.to_parquet(path)
    back = ComponentStore.read_parquet(path)
    assert_same_store(back, store)
    assert back.kind == kind
    assert os.listdir(tmp_path) == ["store.parquet"]


@given(stores(DTYPES))
def test_store_round_trip_is_exact_for_every_dtype_and_row_shape(store):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "s.parquet")
        store.to_parquet(path)
        back = ComponentStore.read_parquet(path)
    assert_same_store(back, store)
    assert back.kind == store.kind


def test_store_file_is_plain_parquet(tmp_path):
    store = rich_store()
    store.to_parquet(tmp_path / "s.parquet", id="key")
    table = pq.read_table(tmp_path / "s.parquet")
    assert table.column_names == ["key", *store.columns]
    assert table.column("key").to_pylist() == store.ids.tolist()
    assert table.column("pos").to_pylist() == store["pos"].tolist()


def test_read_parquet_of_another_writers_file(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(
        pa.table({"entity": [9, 4, 9], "hp": [1.5, 2.5, 3.5], "name": ["a", "b", "c"]}),
        path,
    )
    store = ComponentStore.read_parquet(path, id="entity", schema={"hp": "f4"})
    assert store.ids.tolist() == [9, 4]
    assert store["hp"].tolist() == [3.5, 2.5]  # the last row of a repeated id
    with pytest.raises(FormatError, match="column 'name' has Arrow type string"):
        ComponentStore.read_parquet(path, id="entity")
    with pytest.raises(FormatError, match="no id column 'id'"):
        ComponentStore.read_parquet(path)


def test_read_parquet_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        ComponentStore.read_parquet(tmp_path / "nope.parquet")
    with pytest.raises(FormatError, match="not a Parquet file"):
        ComponentStore.read_parquet(tmp_path)


def _small_store_file(tmp_path):
    rng = np.random.default_rng(3)
    store = ComponentStore({"pos": ("f8", 2), "hp": "i4"})
    store.add([5, 3, 9, 1], pos=rng.normal(size=(4, 2)), hp=[10, 20, 30, 40])
    path = tmp_path / "s.parquet"
    store.to_parquet(path)
    return store, path, path.read_bytes()


def test_truncated_store_file_raises_format_error(tmp_path):
    _, _, data = _small_store_file(tmp_path)
    bad = tmp_path / "cut.parquet"
    for cut in [*range(0, len(data), 7), len(data) - 1]:
        bad.write_bytes(data[:cut])
        with pytest.raises(FormatError):
            ComponentStore.read_parquet(bad)


def test_flipped_byte_in_the_values_raises_format_error(tmp_path):
    store, _, data = _small_store_file(tmp_path)
    # Random floats do not compress: their bytes are in the file as they are,
    # inside a data page whose checksum reading verifies.
    start = data.find(store["pos"].tobytes())
    assert start > 0
    bad = tmp_path / "flipped.parquet"
    for k in range(start, start + store["pos"].nbytes):
        flipped = bytearray(data)
        flipped[k] ^= 1 << (k % 8)
        bad.write_bytes(flipped)
        with pytest.raises(FormatError, match="not a readable Parquet file"):
            ComponentStore.read_parquet(bad)


def test_no_flipped_byte_reads_back_as_different_data(tmp_path):
    store, _, data = _small_store_file(tmp_path)
    bad = tmp_path / "flipped.parquet"
    caught = 0
    for k in range(len(data)):
        flipped = bytearray(data)
        flipped[k] ^= 1 << (k % 8)
        bad.write_bytes(flipped)
        try:
            back = ComponentStore.read_parquet(bad)
        except FormatError:
            caught += 1
            continue
        # Statistics and other metadata no reader needs: harmless.
        assert_same_store(back, store)
    assert caught > len(data) // 4


def test_store_save_is_atomic(tmp_path, monkeypatch):
    store, path, data = _small_store_file(tmp_path)
    store.add([77], hp=77)

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space"):
        store.to_parquet(path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["s.parquet"]
    assert path.read_bytes() == data
    with pytest.raises(ValueError, match="column named 'hp'"):
        store.to_parquet(path, id="hp")
    assert os.listdir(tmp_path) == ["s.parquet"]
    store.to_parquet(path)
    assert 77 in ComponentStore.read_parquet(path)
    assert os.listdir(tmp_path) == ["s.parquet"]


# --------------------------------------------------------------------------
# worlds: round trips
# --------------------------------------------------------------------------


@pytest.mark.parametrize("as_path", [str, pathlib.Path], ids=["str", "Path"])
def test_world_round_trip_keeps_everything(tmp_path, as_path):
    w, handles = rich_world()
    path = as_path(tmp_path / "world")
    w.save(path, format="parquet")
    loaded = World.load(path)
    assert_same_world(loaded, w, handles)
    assert_same_future(loaded, w)
    # And it lives on as the original does.
    evolve(w)
    evolve(loaded)
    assert_same_world(loaded, w, handles)


def test_world_directory_layout(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "world", format="parquet")
    files = sorted(os.listdir(tmp_path / "world"))
    expected = [f"component{i}.parquet" for i in range(len(w.components))]
    assert files == sorted(
        [*expected, "entities.parquet", "free.parquet", "manifest.json"]
    )
    manifest = json.loads((tmp_path / "world" / "manifest.json").read_text())
    assert manifest["format"] == "sparseset.World"
    assert manifest["layout"] == "parquet"
    assert manifest["version"] == 1
    assert [c[0] for c in manifest["meta"]["components"]] == list(w.components)
    entities = pq.read_table(tmp_path / "world" / "entities.parquet")
    assert entities.column_names == ["generation", "alive"]
    assert entities.num_rows == w._entities.count
    pos = pq.read_table(tmp_path / "world" / "component0.parquet")
    assert pos.column_names == ["_entity_index", "pos"]
    assert os.listdir(tmp_path) == ["world"]


def test_both_formats_save_the_same_state(tmp_path):
    w, _ = rich_world()
    w.save(tmp_path / "w.npz")
    w.save(tmp_path / "w", format="parquet")
    from_npz, from_parquet = World.load(tmp_path / "w.npz"), World.load(tmp_path / "w")
    a = persistence.to_arrays(from_npz._state())
    b = persistence.to_arrays(from_parquet._state())
    assert a.keys() == b.keys()
    for key in a:
        assert np.asarray(a[key]).tobytes() == np.asarray(b[key]).tobytes(), key


@pytest.mark.parametrize(
    "make",
    [World, lambda: World(index="hash"), lambda: small_world()],
    ids=["empty", "hash", "small"],
)
def test_small_worlds_round_trip(tmp_path, make):
    w = make()
    w.save(tmp_path / "w", format="parquet")
    loaded = World.load(tmp_path / "w")
    assert loaded.kind == w.kind
    assert_same_world(loaded, w, np.arange(8))


def test_save_replaces_an_older_world(tmp_path):
    w, handles = rich_world()
    small_world().save(tmp_path / "w", format="parquet")
    w.save(tmp_path / "w", format="parquet")
    assert_same_world(World.load(tmp_path / "w"), w, handles)
    assert os.listdir(tmp_path) == ["w"]


def test_save_replaces_an_older_world_by_two_renames(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_io, "_exchange", lambda a, b: False)
    w, handles = rich_world()
    small_world().save(tmp_path / "w", format="parquet")
    w.save(tmp_path / "w", format="parquet")
    assert_same_world(World.load(tmp_path / "w"), w, handles)
    assert os.listdir(tmp_path) == ["w"]


def test_save_refuses_to_replace_what_is_not_a_world(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "keep.txt").write_text("mine")
    (tmp_path / "file").write_text("mine too")
    for target in ("dir", "file"):
        with pytest.raises(FileExistsError, match="not a sparseset Parquet world"):
            small_world().save(tmp_path / target, format="parquet")
    assert sorted(os.listdir(tmp_path)) == ["dir", "file"]
    assert (tmp_path / "dir" / "keep.txt").read_text() == "mine"
    assert (tmp_path / "file").read_text() == "mine too"


def test_save_with_an_unknown_format_writes_nothing(tmp_path):
    with pytest.raises(
        ValueError, match="format must be 'npz' or 'parquet', not 'csv'"
    ):
        small_world().save(tmp_path / "w", format="csv")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------
# worlds: atomic saves
# --------------------------------------------------------------------------


class DiskFullError(OSError):
    pass


def _fail_on_write(n):
    """Make the n-th file write of a save fail."""

    def patch(monkeypatch, error):
        calls = []
        write = parquet_io._write_synced

        def failing(path, data):
            calls.append(path)
            if len(calls) == n:
                raise error
            write(path, data)

        monkeypatch.setattr(parquet_io, "_write_synced", failing)

    return patch


def _fail_in(name):
    def patch(monkeypatch, error):
        def failing(*args):
            raise error

        monkeypatch.setattr(parquet_io, name, failing)

    return patch


def _fail_in_rename(monkeypatch, error):
    # No exchange, and the second of the two renames fails.
    monkeypatch.setattr(parquet_io, "_exchange", lambda a, b: False)
    renames = []
    rename = os.rename

    def failing(a, b):
        renames.append(a)
        if len(renames) == 2:
            raise error
        rename(a, b)

    monkeypatch.setattr(parquet_io.os, "rename", failing)


FAILURE_POINTS = {
    "first file": _fail_on_write(1),
    "a component file": _fail_on_write(3),
    "manifest": _fail_on_write(14),
    "syncing the directory": _fail_in("_sync_directory"),
    "encoding": _fail_in("_parquet_bytes"),
    "exchange": _fail_in("_exchange"),
    "second rename": _fail_in_rename,
}
FAILURES = [DiskFullError(28, "No space left on device"), KeyboardInterrupt()]


@pytest.mark.parametrize("fail_at", FAILURE_POINTS.values(), ids=FAILURE_POINTS.keys())
@pytest.mark.parametrize("error", FAILURES, ids=["OSError", "KeyboardInterrupt"])
def test_failed_save_keeps_the_old_world_and_leaves_nothing(
    tmp_path, monkeypatch, fail_at, error
):
    old = small_world()
    old.save(tmp_path / "w", format="parquet")
    before = {f: (tmp_path / "w" / f).read_bytes() for f in os.listdir(tmp_path / "w")}
    w, _ = rich_world()
    assert len(w.components) == 11  # the manifest is the 14th file written
    fail_at(monkeypatch, error)
    with pytest.raises(type(error)):
        w.save(tmp_path / "w", format="parquet")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["w"]
    after = {f: (tmp_path / "w" / f).read_bytes() for f in os.listdir(tmp_path / "w")}
    assert after == before
    assert_same_world(World.load(tmp_path / "w"), old, np.arange(8))


#: With no old world there is nothing to exchange: one rename puts it in place.
FIRST_SAVE_FAILURES = {
    name: fail_at
    for name, fail_at in FAILURE_POINTS.items()
    if name not in ("exchange", "second rename")
} | {"rename": _fail_in("_put_in_place")}


@pytest.mark.parametrize(
    "fail_at", FIRST_SAVE_FAILURES.values(), ids=FIRST_SAVE_FAILURES.keys()
)
def test_failed_first_save_leaves_the_directory_empty(tmp_path, monkeypatch, fail_at):
    fail_at(monkeypatch, DiskFullError(28, "No space left on device"))
    with pytest.raises(DiskFullError):
        rich_world()[0].save(tmp_path / "w", format="parquet")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------
# worlds: loads refuse what is not a good save
# --------------------------------------------------------------------------


def test_load_of_a_missing_path_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        World.load(tmp_path / "nope")
    with pytest.raises(FileNotFoundError):
        persistence.load(tmp_path / "nope")


def test_directory_without_a_manifest_raises_format_error(tmp_path):
    with pytest.raises(FormatError, match=r"no manifest\.json"):
        World.load(tmp_path)


def _saved(tmp_path):
    small_world().save(tmp_path / "w", format="parquet")
    return tmp_path / "w"


def _rewrite_manifest(path, change):
    """Change the manifest and give it a matching checksum: what is left
    to catch the change is the loader's meaning checks."""
    manifest = json.loads((path / "manifest.json").read_text())
    manifest.pop("crc32")
    change(manifest)
    manifest["crc32"] = parquet_io._manifest_crc(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))


def _replace_file(path, name, data):
    """Put ``data`` in file ``name`` and list its size and CRC in the manifest."""
    (path / name).write_bytes(data)

    def change(manifest):
        for entry in manifest["files"]:
            if entry["name"] == name:
                entry.update(bytes=len(data), crc32=zlib.crc32(data))

    _rewrite_manifest(path, change)


def _parquet(table):
    return parquet_io._parquet_bytes(table).to_pybytes()


#: name -> (how to spoil a saved directory, a fragment of the message).
SPOILED = {
    "manifest not JSON": (
        lambda p: (p / "manifest.json").write_text("{not json"),
        "manifest.json' is unreadable",
    ),
    "manifest a list": (
        lambda p: (p / "manifest.json").write_text("[1, 2]"),
        "is not a sparseset.World Parquet directory",
    ),
    "manifest of another format": (
        lambda p: _rewrite_manifest(p, lambda m: m.update(format="other")),
        "is not a sparseset.World Parquet directory",
    ),
    "manifest of another layout": (
        lambda p: _rewrite_manifest(p, lambda m: m.update(layout="npz")),
        "is not a sparseset.World Parquet directory",
    ),
    "manifest of version 2": (
        lambda p: _rewrite_manifest(p, lambda m: m.update(version=2)),
        "is format version 2; this sparseset reads version 1",
    ),
    "manifest of version '1'": (
        lambda p: _rewrite_manifest(p, lambda m: m.update(version="1")),
        "is format version '1'",
    ),
    "manifest without a checksum": (
        lambda p: (p / "manifest.json").write_text(
            json.dumps(
                {
                    k: v
                    for k, v in json.loads((p / "manifest.json").read_text()).items()
                    if k != "crc32"
                }
            )
        ),
        "has no checksum",
    ),
    "manifest without files": (
        lambda p: _rewrite_manifest(p, lambda m: m.pop("files")),
        "lists no files",
    ),
    "manifest lists a file badly": (
        lambda p: _rewrite_manifest(p, lambda m: m["files"][0].pop("crc32")),
        "lists a file badly",
    ),
    "manifest names a file outside": (
        lambda p: _rewrite_manifest(p, lambda m: m["files"][0].update(name="../x")),
        "names a file outside it",
    ),
    "a file is missing": (
        lambda p: (p / "component1.parquet").unlink(),
        "component1.parquet is missing",
    ),
    "a file is not listed": (
        lambda p: _rewrite_manifest(p, lambda m: m["files"].pop()),
        "is missing",  # the world's own check: component2.ids
    ),
    "entities of strings": (
        lambda p: _replace_file(
            p,
            "entities.parquet",
            _parquet(pa.table({"generation": ["a"], "alive": [True]})),
        ),
        "column 'generation' has Arrow type string",
    ),
    "a null generation": (
        lambda p: _replace_file(
            p,
            "entities.parquet",
            _parquet(
                pa.table(
                    {
                        "generation": pa.array([0, None], pa.uint32()),
                        "alive": [True, True],
                    }
                )
            ),
        ),
        "column 'generation' holds a null in row 1",
    ),
    "a column missing": (
        lambda p: _replace_file(
            p,
            "component0.parquet",
            _parquet(
                pa.table({"_entity_index": pa.array([0, 2, 3, 4, 5], pa.int32())})
            ),
        ),
        "column 'pos' of 'pos' does not match its entities",
    ),
    "not Parquet, CRC listed": (
        lambda p: _replace_file(p, "free.parquet", b"PAR1 but not really PAR1"),
        "free.parquet' is not a readable Parquet file",
    ),
}


@pytest.mark.parametrize("case", SPOILED.values(), ids=SPOILED.keys())
def test_spoiled_directory_raises_format_error(tmp_path, case):
    spoil, fragment = case
    path = _saved(tmp_path)
    spoil(path)
    with pytest.raises(FormatError) as info:
        World.load(path)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "name", ["manifest.json", "entities.parquet", "free.parquet", "component0.parquet"]
)
def test_truncated_file_raises_format_error(tmp_path, name):
    path = _saved(tmp_path)
    data = (path / name).read_bytes()
    for cut in (0, 1, len(data) // 2, len(data) - 1):
        (path / name).write_bytes(data[:cut])
        with pytest.raises(FormatError):
            World.load(path)


@pytest.mark.parametrize(
    "name", ["manifest.json", "entities.parquet", "free.parquet", "component1.parquet"]
)
def test_every_flipped_bit_raises_format_error(tmp_path, name):
    path = _saved(tmp_path)
    data = (path / name).read_bytes()
    for k in range(len(data)):
        for bit in (0x01, 0x20, 0x80):
            flipped = bytearray(data)
            flipped[k] ^= bit
            (path / name).write_bytes(flipped)
            with pytest.raises(FormatError):
                World.load(path)
    (path / name).write_bytes(data)
    World.load(path)


def test_flipped_value_with_its_crc_fixed_is_caught_by_the_page_checksum(tmp_path):
    w = World()
    w.register("pos", "f8", shape=2)
    values = np.random.default_rng(1).normal(size=(3, 2))
    w.add("pos", w.create(3), pos=values)
    w.save(tmp_path / "w", format="parquet")
    data = bytearray((tmp_path / "w" / "component0.parquet").read_bytes())
    k = bytes(data).find(values.tobytes()) + 5
    data[k] ^= 0x10
    _replace_file(tmp_path / "w", "component0.parquet", bytes(data))
    with pytest.raises(FormatError, match="not a readable Parquet file"):
        World.load(tmp_path / "w")


# -- the npz format's inconsistencies, planted in Parquet --------------------

#: Cases Parquet cannot even hold: columns of one file share one length,
#: and the description is JSON inside the manifest, not a string array.
UNREPRESENTABLE = {
    "column one row short",
    "column one row long",
    "column is a scalar",
    "alive shorter than generations",
    "generations 2-D",
    "meta not JSON",
    "meta empty",
    "meta 1-D",
    "meta as bytes",
}
PLANTED = {k: v for k, v in INCONSISTENT.items() if k not in UNREPRESENTABLE}


@pytest.mark.parametrize("case", PLANTED.values(), ids=PLANTED.keys())
def test_inconsistent_directory_raises_the_npz_formats_error(
    tmp_path, case, monkeypatch
):
    problem, tamper = case
    arrays = saved_arrays(tmp_path)
    tamper(arrays)
    save_state(arrays, tmp_path / "w")
    # The same validation as the npz format's, before any world is built.
    built = []
    monkeypatch.setattr(World, "__init__", lambda self, *a: built.append(self))
    with pytest.raises(FormatError, match="the world was not loaded") as info:
        World.load(tmp_path / "w")
    assert problem in str(info.value)
    assert built == []
    with pytest.raises(FormatError) as npz:
        World.__new__(World).__setstate__(arrays)
    assert str(info.value).split(": ", 1)[1] == str(npz.value).split(": ", 1)[1]


def save_state(arrays, path):
    """Write a world's arrays in the Parquet layout, as World.save does."""
    parquet_io.save_state(arrays, path, persistence.FILE_KIND, persistence.FILE_VERSION)


def test_untampered_state_loads(tmp_path):
    save_state(saved_arrays(tmp_path), tmp_path / "w")
    loaded = World.load(tmp_path / "w")
    assert_same_world(loaded, small_world(), np.arange(7))
    assert world_state(loaded)["ids"] == world_state(small_world())["ids"]


def test_a_world_stores_file_holds_handles_and_reads_back_as_a_store(tmp_path):
    w, _ = rich_world()  # recycled indexes: handles past 2**32
    store = w["pos"]
    assert store.ids.max() >= 2**32
    store.to_parquet(tmp_path / "pos.parquet")
    back = ComponentStore.read_parquet(tmp_path / "pos.parquet")
    assert back.kind == "paged"  # the first kind that takes every handle
    assert back.ids.tolist() == store.ids.tolist()
    assert back["pos"].tobytes() == store["pos"].tobytes()
    fresh = World()
    fresh.register("hp", "i4")
    fresh.add("hp", fresh.create(3), hp=[1, 2, 3])
    fresh["hp"].to_parquet(tmp_path / "hp.parquet")
    assert ComponentStore.read_parquet(tmp_path / "hp.parquet").kind == "flat"
