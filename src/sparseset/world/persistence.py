"""A world on disk: its state as named arrays, checked whole before use.

:class:`WorldState` is everything that defines a world (entity table,
component schemas and rows, groups) as plain arrays, with no behaviour.
``World.save`` builds one and hands it to :func:`save`; ``World.load`` gets
one back from :func:`load`, already checked, and becomes it. Both formats
(one ``.npz`` file through :mod:`sparseset.io`, or a directory of Parquet
files through :mod:`sparseset.io.parquet`) hold the same arrays under the
same names (:func:`to_arrays`), and every load goes through one validator
(:func:`from_arrays`), so both reject the same flaws with the same
:class:`~sparseset.FormatError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..io import npz as io
from ..io.npz import FormatError
from ..io.schema import parse_schema
from ..sets.index_kinds import KINDS
from .entities import INDEX_LIMIT, LAST_GENERATION

#: ``World.save`` files: what their header says, and the layout version.
FILE_KIND = "sparseset.World"
FILE_VERSION = 1
#: The formats :func:`save` writes.
FORMATS = ("npz", "parquet")

#: One component: its entity indexes, and its columns' rows aligned with them.
Component = tuple[np.ndarray, dict[str, np.ndarray]]


@dataclass
class WorldState:
    """A world as arrays: what :func:`save` writes and :func:`load` returns.

    Examples
    --------
    >>> state = WorldState(capacity=8)
    >>> state.components["hp"] = (np.array([0]), {"hp": np.array([5], np.int32)})
    >>> sorted(to_arrays(state))[:3]
    ['alive', 'component0.column0', 'component0.ids']
    """

    #: The capacity hint of the world and its stores.
    capacity: int = 0
    #: The index kind of every store.
    index: str = "flat"
    #: Generation of each entity index ever used.
    generations: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint32))
    #: Whether each entity index is alive.
    alive: np.ndarray = field(default_factory=lambda: np.empty(0, np.bool_))
    #: Indexes free for reuse, in the order they will be reused.
    free: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    #: Each component by name, in registration order; rows in store order.
    components: dict[str, Component] = field(default_factory=dict)
    #: Each owning group's components and length, in creation order.
    groups: list[tuple[tuple[str, ...], int]] = field(default_factory=list)
    #: The components registered with ``track=True`` (readers are not kept).
    tracked: list[str] = field(default_factory=list)


def to_arrays(state: WorldState) -> dict[str, np.ndarray]:
    """``state`` as the named arrays both file formats hold.

    ``meta`` (a JSON description: components and their columns, groups,
    capacity, index kind), ``generations``, ``alive``, ``free``, and per
    component ``i`` its ``component<i>.ids`` and ``component<i>.column<j>``.

    Examples
    --------
    >>> sorted(to_arrays(WorldState()))
    ['alive', 'free', 'generations', 'meta']
    """
    meta = {
        "components": [
            [name, list(columns)] for name, (_, columns) in state.components.items()
        ],
        "groups": [list(names) for names, _ in state.groups],
        "group_lengths": [length for _, length in state.groups],
        "capacity": state.capacity,
        "index": state.index,
        "tracked": list(state.tracked),
    }
    arrays: dict[str, np.ndarray] = {
        "meta": np.array(json.dumps(meta)),
        "generations": state.generations,
        "alive": state.alive,
        "free": state.free,
    }
    for i, (keys, columns) in enumerate(state.components.values()):
        arrays[f"component{i}.ids"] = keys
        for j, rows in enumerate(columns.values()):
            arrays[f"component{i}.column{j}"] = rows
    return arrays


def save(state: WorldState, path: str | os.PathLike[str], format: str = "npz") -> None:
    """Write ``state`` to ``path`` atomically, as ``.npz`` or Parquet.

    See :meth:`sparseset.World.save` for the formats.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "world.npz"
    >>> save(WorldState(capacity=4), path); load(path).capacity
    4
    """
    if format == "npz":
        io.save(path, FILE_KIND, FILE_VERSION, to_arrays(state))
    elif format == "parquet":
        from ..io.parquet import save_state

        save_state(to_arrays(state), path, FILE_KIND, FILE_VERSION)
    else:
        raise ValueError(f"format must be 'npz' or 'parquet', not {format!r}")


def load(path: str | os.PathLike[str]) -> WorldState:
    """Read and check a world saved by :func:`save`, in either format.

    A directory is read as the Parquet format, a file as ``.npz``. Raises
    ``FileNotFoundError`` for a missing path and
    :class:`~sparseset.FormatError` for anything truncated, corrupted,
    inconsistent or of another version.

    Examples
    --------
    >>> load("/nonexistent/world.npz")
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/world.npz'
    """
    if os.path.isdir(path):
        from ..io.parquet import load_state

        arrays = load_state(path, FILE_KIND, FILE_VERSION)
    else:
        arrays = io.load(path, FILE_KIND, FILE_VERSION)
    return from_arrays(arrays, os.fspath(path))


def _repeats(indexes: np.ndarray, count: int) -> bool:
    """Whether ``indexes`` (all in ``[0, count)``) holds one twice.

    By marking, not ``np.unique``: a million indexes take a millisecond
    instead of a sort or hash of them all.
    """
    seen = np.zeros(count, np.bool_)
    seen[indexes] = True
    return bool(np.count_nonzero(seen) != indexes.shape[0])


def from_arrays(arrays: Mapping[str, Any], source: str) -> WorldState:
    """Check the arrays of a saved world whole; the state they describe.

    Raises :class:`~sparseset.FormatError`, naming ``source`` and the first
    flaw, for anything a world could not be: a missing or mistyped array,
    an unreadable description, entity arrays that disagree, a free list
    that names live or unused indexes, a component holding a dead entity
    or one twice, a column out of step with its entities, a group that is
    not packed alike in its stores.

    Examples
    --------
    >>> arrays = to_arrays(WorldState())
    >>> arrays["free"] = np.array([3])
    >>> from_arrays(arrays, "w.npz")
    Traceback (most recent call last):
    ...
    sparseset.FormatError: w.npz: its free list names indexes that were never ...
    """

    def fail(problem: str) -> FormatError:
        return FormatError(f"{source}: {problem}; the world was not loaded")

    def array(key: str, kind: str, ndim: int) -> np.ndarray:
        if key not in arrays:
            raise fail(f"array {key!r} is missing")
        value = np.asarray(arrays[key])
        if value.dtype.kind not in kind or value.ndim != ndim:
            raise fail(
                f"array {key!r} has dtype {value.dtype} and {value.ndim} dimensions"
            )
        return value

    state = WorldState()
    try:
        meta = json.loads(str(array("meta", "U", 0)))
        components = [
            (str(name), [str(c) for c in columns])
            for name, columns in meta["components"]
        ]
        groups = [tuple(str(name) for name in names) for names in meta["groups"]]
        lengths = [int(length) for length in meta["group_lengths"]]
        state.capacity = int(meta["capacity"])
        state.index = str(meta.get("index", "flat"))
        # Files written before change tracking existed track nothing.
        tracked = [str(name) for name in meta.get("tracked", [])]
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        if isinstance(error, FormatError):
            raise
        raise fail(f"its description is unreadable ({error})") from error
    if (
        not 0 <= state.capacity <= INDEX_LIMIT
        or len(groups) != len(lengths)
        or state.index not in KINDS
    ):
        raise fail("its description is inconsistent")

    generations = array("generations", "u", 1).astype(np.uint32)
    alive = array("alive", "b", 1)
    free = array("free", "iu", 1).astype(np.int64)
    count = generations.shape[0]
    if alive.shape[0] != count or count > INDEX_LIMIT:
        raise fail("its entity arrays disagree in length")
    if (generations > LAST_GENERATION).any():
        raise fail("a generation is past the last one")
    if free.size and (free.min() < 0 or free.max() >= count):
        raise fail("its free list names indexes that were never used")
    if _repeats(free, count) or alive[free].any():
        raise fail("its free list repeats an index or names a live one")
    recycled = np.zeros(count, np.bool_)
    recycled[free] = True
    # A dead index is either free for reuse or retired at the last generation.
    if (~alive & ~recycled & (generations != LAST_GENERATION)).any():
        raise fail("a dead index is neither free nor retired")
    state.generations, state.alive, state.free = (
        generations,
        alive,
        free.astype(np.int32),
    )

    for i, (name, columns) in enumerate(components):
        keys = array(f"component{i}.ids", "iu", 1).astype(np.int64)
        if keys.size and (
            keys.min() < 0 or keys.max() >= count or not alive[keys].all()
        ):
            raise fail(f"component {name!r} holds an entity that is not alive")
        if _repeats(keys, count):
            raise fail(f"component {name!r} holds an entity twice")
        rows = {}
        for j, column in enumerate(columns):
            values = np.asarray(arrays.get(f"component{i}.column{j}"))
            if (
                values.ndim < 1
                or values.shape[0] != keys.shape[0]
                or values.dtype.hasobject
            ):
                raise fail(f"column {column!r} of {name!r} does not match its entities")
            rows[column] = values
        if not name:
            raise fail("a component has an empty name")
        try:
            parse_schema({c: (v.dtype, v.shape[1:]) for c, v in rows.items()})
        except (TypeError, ValueError) as error:
            raise fail(f"component {name!r} has a bad column: {error}") from error
        state.components[name] = (keys, rows)
    if len(state.components) != len(components):
        raise fail("a component is listed twice")
    if any(name not in state.components for name in tracked) or len(
        set(tracked)
    ) != len(tracked):
        raise fail("its tracked components are not its components")
    state.tracked = tracked

    owned: set[str] = set()
    for names, length in zip(groups, lengths, strict=True):
        if not names or any(name not in state.components for name in names):
            raise fail(f"group {names!r} names an unknown component")
        if owned & set(names) or len(set(names)) != len(names):
            raise fail(f"group {names!r} shares a component with another group")
        owned |= set(names)
        members = [state.components[name][0] for name in names]
        if not 0 <= length <= min(len(keys) for keys in members):
            raise fail(f"group {names!r} has an impossible length")
        front = members[0][:length]
        if any(not np.array_equal(keys[:length], front) for keys in members):
            raise fail(f"group {names!r} is not packed alike in its stores")
        everywhere = members[0]
        for keys in members[1:]:
            everywhere = np.intersect1d(everywhere, keys, assume_unique=True)
        if everywhere.shape[0] != length:
            raise fail(f"group {names!r} does not hold every entity it should")
        state.groups.append((names, length))
    return state


__all__ = [
    "FILE_KIND",
    "FILE_VERSION",
    "FORMATS",
    "WorldState",
    "from_arrays",
    "load",
    "save",
    "to_arrays",
]
