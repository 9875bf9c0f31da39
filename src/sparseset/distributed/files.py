"""Saving a sharded collection: one file per shard and a manifest, written last.

The shared half of :meth:`ShardedSet.save <sparseset.distributed.ShardedSet.save>`
and :meth:`ShardedStore.save <sparseset.distributed.ShardedStore.save>` and
their ``load``: the directory, the manifest (layout, index kind, shard
files, lengths, and what the collection adds, such as a store's schema),
and the removal of shard files no manifest names. Each shard file is
written and read by the worker holding the shard, in a task.
"""

from __future__ import annotations

import glob
import os
import uuid
from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize

from ..io import npz as io
from ..sets.index_kinds import IndexKind, kind_or_auto
from .collection import ShardedCollection
from .inputs import graph_of
from .layout import Layout
from .shards import VERSION

#: The manifest's file name inside a saved collection's directory.
MANIFEST = "manifest.npz"


def save_shards(
    collection: ShardedCollection,
    path: str | os.PathLike[str],
    format: str,
    save_shard: Any,
    extra: dict[str, np.ndarray] | None = None,
) -> None:
    """Write each shard with ``save_shard(shard, file, k, layout, kind)``
    (a task that returns the shard's length as a one-element array), then
    the manifest ``format`` naming those files, with ``extra`` arrays.

    Shard files no manifest names (this save's after a failure, an earlier
    save's after success) are removed at the end.
    """
    directory = os.path.abspath(os.fspath(path))
    os.makedirs(directory, exist_ok=True)
    stamp = uuid.uuid4().hex[:12]
    shards = collection.shards
    files = [f"shard-{k:05d}-{stamp}.npz" for k in range(shards)]
    name = f"sparseset-save-{stamp}"
    layer = {
        (name, k): (
            save_shard,
            (collection.name, k),
            os.path.join(directory, files[k]),
            k,
            collection.layout,
            collection.kind,
        )
        for k in range(shards)
    }
    graph = graph_of(name, layer, [collection])
    try:
        lengths = da.Array(graph, name, ((1,) * shards,), np.int64).compute()
        io.save(
            os.path.join(directory, MANIFEST),
            format,
            VERSION,
            {
                "by": np.array(collection.layout.by),
                "shards": np.int64(shards),
                "width": np.int64(collection.layout.width),
                "index": np.array(collection.kind),
                "files": np.array(files),
                "lengths": np.asarray(lengths, np.int64),
                **(extra or {}),
            },
        )
    finally:
        current = set(manifest_files(directory, format))
        for stale in glob.glob(os.path.join(directory, "shard-*.npz")):
            if os.path.basename(stale) not in current:
                os.unlink(stale)


class Manifest:
    """A saved collection's manifest, checked: ``layout``, ``kind``, the
    shard ``files`` (full paths), their ``lengths``, every array it holds
    (``arrays``) and a ``name`` for the loaded shards' tasks."""

    __slots__ = ("arrays", "files", "kind", "layout", "lengths", "name", "where")

    def __init__(self, path: str | os.PathLike[str], format: str) -> None:
        directory = os.path.abspath(os.fspath(path))
        where = os.path.join(directory, MANIFEST)
        arrays = io.load(where, format, VERSION)
        try:
            by, shards, width = (
                str(arrays["by"]),
                int(arrays["shards"]),
                int(arrays["width"]),
            )
            kind: IndexKind = kind_or_auto(str(arrays["index"]))
            layout = Layout(by, shards, width)
            files = [str(f) for f in arrays["files"]]
            lengths = np.asarray(arrays["lengths"])
        except (KeyError, TypeError, ValueError) as error:
            raise io.FormatError(
                f"{where!r} is not a valid manifest: {error}"
            ) from error
        if (
            len(files) != shards
            or lengths.shape != (shards,)
            or lengths.dtype.kind not in "iu"
            or (lengths < 0).any()
            or any(os.path.basename(f) != f or not f.endswith(".npz") for f in files)
        ):
            raise io.FormatError(
                f"{where!r} does not list one file and one length per shard"
            )
        self.where = where
        self.arrays = arrays
        self.layout = layout
        self.kind = kind
        self.files = [os.path.join(directory, f) for f in files]
        self.lengths = lengths
        # A name of its own for each load: the files are read again, never
        # answered from an earlier load's tasks (or their errors).
        self.name = tokenize(where, os.stat(where).st_mtime_ns, uuid.uuid4().hex)

    def layer(self, name: str, load_shard: Any, *extra: Any) -> dict[Any, Any]:
        """Tasks ``(name, k)``: ``load_shard(file, k, layout, kind, length,
        *extra)`` for every shard."""
        return {
            (name, k): (
                load_shard,
                self.files[k],
                k,
                self.layout,
                self.kind.name,
                int(self.lengths[k]),
                *extra,
            )
            for k in range(self.layout.shards)
        }


def manifest_files(directory: str, format: str) -> list[str]:
    """The shard files the directory's manifest names (none if unreadable)."""
    try:
        arrays = io.load(os.path.join(directory, MANIFEST), format, VERSION)
    except (OSError, io.FormatError):
        return []
    files = arrays.get("files")
    return [] if files is None else [str(f) for f in np.atleast_1d(files)]
