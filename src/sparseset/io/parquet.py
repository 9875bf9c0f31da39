"""Stores as Parquet files, worlds as directories of Parquet files.

A store is one Parquet file: its :meth:`~sparseset.ComponentStore.to_arrow`
table, written with page checksums that reading verifies, so a flipped
byte in the data is an error and not a wrong value.

A world is a directory::

    manifest.json        format, layout and version; the world's description
                         (components, groups, capacity, index kind); the
                         size and CRC-32 of every file below; a CRC-32 of
                         all that
    entities.parquet     one row per entity index: generation, alive
    free.parquet         the free list, in order
    component<i>.parquet the i-th component: entity index, then its columns

Reading checks every file against the manifest before parsing it, then
hands the arrays to the same validation the ``.npz`` format goes through
(:func:`sparseset.world.persistence.from_arrays`), so both formats reject the same flaws
with the same :class:`~sparseset.FormatError`, and a world is built only
once all of it has been read and checked.

Writes are atomic: files go to a temporary directory next to the target,
are flushed to disk, and the directory then takes the target's place (on
Linux by one atomic exchange; elsewhere by two renames). What a killed
save leaves is cleared by the next save to the same path
(:func:`sparseset.io.npz.sweep`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from .npz import FormatError, sweep, temporary_prefix, write_atomic
from .tabular import (
    TABLE_KEY,
    Chooser,
    StoreMaker,
    T,
    from_arrow_array,
    infer_field,
    require,
    store_from_arrow,
    table_of,
)

#: What a world directory's manifest says it is.
LAYOUT = "parquet"
MANIFEST = "manifest.json"
ENTITIES = "entities.parquet"
FREE = "free.parquet"
#: The column of a component file holding entity indexes (no store column
#: can start with an underscore, so it never clashes with one).
ENTITY_COLUMN = "_entity_index"


def _parquet_bytes(table: Any) -> Any:
    """``table`` as the bytes of one Parquet file, with page checksums."""
    pa = require("pyarrow", "Parquet")
    pq = require("pyarrow.parquet", "Parquet")
    sink = pa.BufferOutputStream()
    # Store columns are mostly distinct values (ids, floats): trying a
    # dictionary first only costs time before plain encoding wins.
    pq.write_table(table, sink, use_dictionary=False, write_page_checksum=True)
    return sink.getvalue()


def _read_table(source: Any, where: str) -> Any:
    """Parse one Parquet file (a path or bytes), verifying page checksums.

    Anything wrong with the bytes is :class:`FormatError`; a missing file
    stays ``FileNotFoundError``.
    """
    pa = require("pyarrow", "Parquet")
    pq = require("pyarrow.parquet", "Parquet")
    if not isinstance(source, str):
        source = pa.BufferReader(source)
    try:
        return pq.ParquetFile(source, page_checksum_verification=True).read()
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError, ValueError, MemoryError) as error:
        raise FormatError(
            f"{where!r} is not a readable Parquet file (truncated or corrupted?): "
            f"{error}"
        ) from error


# -- one store, one file ----------------------------------------------------


def write_table(table: Any, path: str | os.PathLike[str]) -> None:
    """Write a store's Arrow table (its ``to_arrow()``) to ``path`` atomically.

    The file records each column's numpy dtype and row shape, so reading
    it back can tell a changed footer from the one written. See
    :meth:`sparseset.ComponentStore.to_parquet`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from sparseset import ComponentStore
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "hp.parquet"
    >>> store = ComponentStore({"hp": "i4"}); store.add([2, 1], hp=[20, 10])
    2
    >>> write_table(store.to_arrow(), path)
    >>> ComponentStore.read_parquet(path).ids.tolist()
    [2, 1]
    """
    metadata = dict(table.schema.metadata)
    described = json.loads(metadata[TABLE_KEY])
    described["columns"] = _columns_of(table.schema)
    metadata[TABLE_KEY] = json.dumps(described).encode()
    data = _parquet_bytes(table.replace_schema_metadata(metadata))
    write_atomic(path, lambda file: file.write(data))


def _columns_of(schema: Any) -> list[Any]:
    """``[name, numpy dtype, row shape]`` of each column, as JSON holds them.

    Written into a store's file and compared on reading: the footer that
    names and types the columns has no checksum, and a flipped byte there
    could otherwise rename a column or change its type without a word.
    """
    columns = []
    for field in schema:
        dtype, shape = infer_field(field)
        columns.append([field.name, np.lib.format.dtype_to_descr(dtype), list(shape)])
    described: list[Any] = json.loads(json.dumps(columns))
    return described


def read_store(
    cls: StoreMaker[T],
    path: str | os.PathLike[str],
    id: str = "id",
    schema: Any = None,
    index: str | None = None,
    *,
    choose: Chooser,
) -> T:
    """A new store from a Parquet file; see :meth:`ComponentStore.read_parquet`.

    The index kind as :func:`~sparseset.io.tabular.store_from_arrow` picks it.

    Examples
    --------
    >>> from sparseset import ComponentStore
    >>> from sparseset.sets.index_kinds import choose_kind
    >>> read_store(ComponentStore, "/nonexistent/hp.parquet", choose=choose_kind)
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/hp.parquet'
    """
    where = os.fspath(path)
    if not os.path.isfile(where):
        os.stat(where)  # FileNotFoundError for a missing path, as open() gives
        raise FormatError(f"{where!r} is not a Parquet file (a directory?)")
    table = _read_table(where, where)
    try:
        written = json.loads((table.schema.metadata or {}).get(TABLE_KEY, b"{}"))
        if "columns" in written and written["columns"] != _columns_of(table.schema):
            raise FormatError(
                f"{where!r}: its columns are not those it was written with "
                f"(corrupted, or changed since: drop its {TABLE_KEY.decode()!r} "
                f"schema metadata to read it as any Parquet file)"
            )
        return store_from_arrow(cls, table, id, schema, index, choose=choose)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, FormatError):
            raise
        # A file is not an argument: whatever keeps it from being a store
        # is its format's fault, and says so in one kind of error.
        message = error.args[0] if isinstance(error, KeyError) else error
        raise FormatError(f"{where!r} does not hold a store: {message}") from error


# -- a world, one directory -------------------------------------------------


def _components(meta: Any) -> list[list[str]]:
    """The column names of each component a description lists; none if it
    is malformed (the world's validation then says what is wrong)."""
    try:
        return [[str(c) for c in columns] for _, columns in meta["components"]]
    except (KeyError, TypeError, ValueError):
        return []


def _state_tables(state: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A world's arrays (as :func:`sparseset.world.persistence.to_arrays` gives
    them) as its description and its tables, by file name."""
    meta = json.loads(str(state["meta"])) if "meta" in state else None
    # Written as they are, even incomplete: what they mean is for the
    # loader to judge, as for the npz format.
    entities = [("generation", "generations"), ("alive", "alive")]
    tables = {
        ENTITIES: table_of([(c, state[k]) for c, k in entities if k in state]),
        FREE: table_of([("index", state["free"])] if "free" in state else []),
    }
    for i, columns in enumerate(_components(meta)):
        names = [ENTITY_COLUMN, *columns]
        keys = [f"component{i}.ids"] + [
            f"component{i}.column{j}" for j in range(len(columns))
        ]
        tables[f"component{i}.parquet"] = table_of(
            [
                (name, state[key])
                for name, key in zip(names, keys, strict=True)
                if key in state
            ]
        )
    return meta, tables


def save_state(
    state: Mapping[str, Any], path: str | os.PathLike[str], kind: str, version: int
) -> None:
    """Write a world's arrays as a directory of Parquet files, atomically.

    ``state`` holds the arrays of :func:`sparseset.world.persistence.to_arrays`
    (those the ``.npz`` format holds); the manifest records ``kind`` and
    ``version``. An existing world directory at ``path`` is replaced;
    anything else there is left alone (``FileExistsError``).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from sparseset.world.persistence import WorldState, to_arrays
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "world"
    >>> save_state(to_arrays(WorldState()), path, "demo", 1)
    >>> sorted(os.listdir(path))
    ['entities.parquet', 'free.parquet', 'manifest.json']
    """
    target = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(target)
    if os.path.lexists(target) and not _is_world_directory(target):
        raise FileExistsError(
            f"{target!r} exists and is not a sparseset Parquet world; it was not "
            f"replaced"
        )
    meta, tables = _state_tables(state)
    sweep(directory, name)
    temporary = tempfile.mkdtemp(
        prefix=temporary_prefix(name), suffix=".tmp", dir=directory
    )
    try:
        files = []
        for file_name, table in tables.items():
            data = _parquet_bytes(table)
            _write_synced(os.path.join(temporary, file_name), data)
            files.append(
                {"name": file_name, "bytes": data.size, "crc32": zlib.crc32(data)}
            )
        manifest: dict[str, Any] = {
            "format": kind,
            "layout": LAYOUT,
            "version": version,
            "meta": meta,
            "files": files,
        }
        if meta is None:
            del manifest["meta"]
        manifest["crc32"] = _manifest_crc(manifest)
        _write_synced(
            os.path.join(temporary, MANIFEST), json.dumps(manifest, indent=1).encode()
        )
        _sync_directory(temporary)
        _put_in_place(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    # The new world is whole and in place: a failure to flush the rename
    # itself to disk must not report the save as failed.
    with contextlib.suppress(OSError):
        _sync_directory(directory)


def _manifest_crc(body: dict[str, Any]) -> int:
    """CRC-32 of a manifest's content (all but its own ``crc32``), so a
    flipped byte in the description is caught as it is in the files."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return zlib.crc32(canonical.encode())


def _is_world_directory(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, MANIFEST))


def _write_synced(path: str, data: Any) -> None:
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _sync_directory(path: str) -> None:
    """Flush a directory's entries (new names, renames) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: str, b: str) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2``); False where
    the system or the file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), b)


def _put_in_place(temporary: str, target: str) -> None:
    """Make the complete directory ``temporary`` the one at ``target``.

    Afterwards ``temporary`` is gone and so is any old world at ``target``.
    """
    if not os.path.lexists(target):
        os.rename(temporary, target)
        return
    if _exchange(temporary, target):
        shutil.rmtree(temporary)  # it now holds the old world
        return
    # Two renames: a crash between them leaves the old world under its
    # temporary name and nothing at the target, never half a world.
    old = temporary + ".old"
    os.rename(target, old)
    try:
        os.rename(temporary, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old)


def _read_manifest(where: str, kind: str, version: int) -> dict[str, Any]:
    path = os.path.join(where, MANIFEST)
    try:
        with open(path, "rb") as file:
            manifest = json.loads(file.read())
    except FileNotFoundError:
        raise FormatError(
            f"{where!r} has no {MANIFEST}: not a sparseset Parquet world (or its "
            f"save never finished)"
        ) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise FormatError(f"{path!r} is unreadable (corrupted?): {error}") from error
    if not isinstance(manifest, dict):
        raise FormatError(f"{where!r} is not a {kind} Parquet directory")
    crc = manifest.pop("crc32", None)
    if crc is not None and crc != _manifest_crc(manifest):
        raise FormatError(
            f"{path!r} is not the manifest that was saved (corrupted: its "
            f"checksum does not match)"
        )
    if manifest.get("format") != kind or manifest.get("layout") != LAYOUT:
        raise FormatError(f"{where!r} is not a {kind} Parquet directory")
    found = manifest.get("version")
    if type(found) is not int or found != version:
        raise FormatError(
            f"{where!r} is format version {found!r}; this sparseset reads "
            f"version {version}"
        )
    if crc is None:
        raise FormatError(f"{path!r} has no checksum")
    if not isinstance(manifest.get("files"), list):
        raise FormatError(f"{where!r}: its manifest lists no files")
    return manifest


def _checked_table(where: str, entry: Any) -> tuple[str, Any]:
    """Read one file listed in the manifest, checking its size and CRC first."""
    try:
        name, size, crc = str(entry["name"]), int(entry["bytes"]), int(entry["crc32"])
    except (KeyError, TypeError, ValueError) as error:
        raise FormatError(f"{where!r}: its manifest lists a file badly") from error
    if os.path.basename(name) != name or name in ("", ".", ".."):
        raise FormatError(f"{where!r}: its manifest names a file outside it")
    path = os.path.join(where, name)
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise FormatError(f"{where!r}: {name} is missing") from None
    if len(data) != size or zlib.crc32(data) != crc:
        raise FormatError(
            f"{path!r} is not the file that was saved (truncated or corrupted: "
            f"{len(data)} bytes, CRC-32 {zlib.crc32(data):#010x}; the manifest "
            f"says {size} bytes, {crc:#010x})"
        )
    return name, _read_table(data, path)


def _columns(tables: dict[str, Any], name: str, where: str) -> dict[str, np.ndarray]:
    """The columns of one file as numpy arrays (none if it is not listed)."""
    table = tables.get(name)
    if table is None:
        return {}
    try:
        return {
            column: from_arrow_array(
                table.column(column), table.schema.field(column), f"column {column!r}"
            )
            for column in table.column_names
        }
    except (TypeError, ValueError) as error:
        raise FormatError(f"{os.path.join(where, name)!r}: {error}") from error


def load_state(path: str | os.PathLike[str], kind: str, version: int) -> dict[str, Any]:
    """The arrays of a world directory, as :func:`save_state` took them.

    Checks the manifest (format ``kind``, layout, ``version``) and every file it lists
    against its size and CRC-32; what the arrays mean is for the world's
    own validation, which the ``.npz`` format shares. An array whose file
    or column is absent is absent from the result.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from sparseset.world.persistence import WorldState, to_arrays
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "world"
    >>> save_state(to_arrays(WorldState()), path, "demo", 1)
    >>> sorted(load_state(path, "demo", 1))
    ['alive', 'free', 'generations', 'meta']
    >>> load_state(path.parent, "demo", 1)  # a directory without a manifest
    Traceback (most recent call last):
    ...
    sparseset.FormatError: ... has no manifest.json: not a sparseset Parquet world...
    """
    where = os.fspath(path)
    os.stat(where)  # FileNotFoundError, naming the path
    manifest = _read_manifest(where, kind, version)
    tables = dict(_checked_table(where, entry) for entry in manifest["files"])
    state: dict[str, Any] = {}
    if "meta" in manifest:
        state["meta"] = np.array(json.dumps(manifest["meta"]))
    entities = _columns(tables, ENTITIES, where)
    for key, column in (("generations", "generation"), ("alive", "alive")):
        if column in entities:
            state[key] = entities[column]
    if "index" in (free := _columns(tables, FREE, where)):
        state["free"] = free["index"]
    for i, columns in enumerate(_components(manifest.get("meta"))):
        found = _columns(tables, f"component{i}.parquet", where)
        if ENTITY_COLUMN in found:
            state[f"component{i}.ids"] = found[ENTITY_COLUMN]
        for j, column in enumerate(columns):
            if column in found:
                state[f"component{i}.column{j}"] = found[column]
    return state


__all__ = [
    "load_state",
    "read_store",
    "save_state",
    "write_table",
]
