"""Saving and loading named numpy arrays as one ``.npz`` file, safely.

:func:`save` writes to a temporary file in the target's directory, flushes
it to disk and renames it over the target, so a reader sees the old file
or the new one, never half of one, and a failed write leaves nothing
behind. A process killed during a save cannot remove its temporary file:
the next save to the same path does (:func:`sweep`), knowing it by the
dead process's id in its name.

:func:`load` reads every array into memory and turns anything
wrong with the file (truncation, a flipped byte caught by the zip CRC, a
missing header, another format or version) into :class:`FormatError`.

The containers build on these: :meth:`sparseset.World.save` and
:meth:`sparseset.World.load` check the meaning of what they read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import numpy as np


class FormatError(ValueError):
    """A saved file that is truncated, corrupted, or not in a format we read."""


#: This host, in temporary names (a checksum of its name: no dots).
HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"


def temporary_prefix(name: str) -> str:
    """The start of the name of this process's temporaries for a save to
    ``name``: ``.{name}.{host}-{pid}.``.

    Examples
    --------
    >>> temporary_prefix("w.npz") == f".w.npz.{HOST}-{os.getpid()}."
    True
    """
    return f".{name}.{HOST}-{os.getpid()}."


def process_gone(pid: int) -> bool:
    """Whether no process ``pid`` runs on this host (never said off POSIX:
    temporaries of killed saves then stay).

    Examples
    --------
    >>> process_gone(os.getpid())
    False
    """
    if os.name != "posix":  # os.kill(pid, 0) would end the process there
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: it runs
        return False
    return False


def sweep(directory: str, name: str) -> None:
    """Remove what killed saves to ``name`` left in ``directory``: the
    temporaries (``.tmp``) named for a process of this host that is gone.
    A Parquet world's old directory (``.tmp.old``, left by a save killed
    between its two renames) goes back to ``name`` if nothing is there.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> where = pathlib.Path(tempfile.mkdtemp())
    >>> (where / f".w.{HOST}-{2**22 + 1}.x.tmp").write_bytes(b"half")
    4
    >>> sweep(str(where), "w"); sorted(p.name for p in where.iterdir())
    []
    """
    start = f".{name}.{HOST}-"
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not entry.startswith(start) or not entry.endswith((".tmp", ".tmp.old")):
            continue
        pid = entry[len(start) :].split(".", 1)[0]
        if not pid.isdigit() or not process_gone(int(pid)):
            continue
        found = os.path.join(directory, entry)
        target = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if entry.endswith(".old") and not os.path.lexists(target):
                os.rename(found, target)
            elif os.path.isdir(found) and not os.path.islink(found):
                shutil.rmtree(found)
            else:
                os.unlink(found)


def sync_directory(path: str) -> None:
    """Flush a directory's entries (new names, renames) to disk.

    Examples
    --------
    >>> import tempfile
    >>> sync_directory(tempfile.mkdtemp())
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(
    path: str | os.PathLike[str], kind: str, version: int, arrays: Mapping[str, Any]
) -> None:
    """Write ``arrays`` to ``path`` atomically, tagged with ``kind`` and ``version``.

    The file is exactly ``path`` (no ``.npz`` is appended). Nothing is left
    behind if the write fails; an existing file at ``path`` is replaced
    only once the new one is complete.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "numbers.npz"
    >>> save(path, "demo", 1, {"x": np.arange(3)})
    >>> load(path, "demo", 1)["x"].tolist()
    [0, 1, 2]
    """
    payload = {"format": np.array(kind), "version": np.array(version)}
    for key, value in arrays.items():
        if key in payload:
            raise ValueError(f"array name {key!r} is reserved for the file header")
        payload[key] = np.asarray(value)
    # numpy's stubs read **payload as maybe holding allow_pickle.
    write_atomic(path, lambda file: np.savez(file, **payload))  # type: ignore[arg-type]


def write_atomic(
    path: str | os.PathLike[str], write: Callable[[BinaryIO], object]
) -> None:
    """Have ``write`` fill a new file that then replaces ``path`` at once.

    ``write`` gets a binary file in the target's directory; once it
    returns, the file is flushed to disk and renamed over ``path``. If
    anything fails (``write``, a full disk, a file size limit), the
    temporary file is removed and ``path`` is as it was; temporaries of
    saves to ``path`` killed earlier are removed first (:func:`sweep`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "greeting"
    >>> write_atomic(path, lambda file: file.write(b"hello"))
    >>> path.read_bytes()
    b'hello'
    """
    target = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(target)
    sweep(directory, name)
    fd, temporary = tempfile.mkstemp(
        prefix=temporary_prefix(name), suffix=".tmp", dir=directory
    )
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    # The new file is whole and in place: a failure to flush the rename
    # itself to disk must not report the save as failed.
    with contextlib.suppress(OSError):
        sync_directory(directory)


def load(path: str | os.PathLike[str], kind: str, version: int) -> dict[str, Any]:
    """Read every array saved by :func:`save`, checking ``kind`` and ``version``.

    Raises ``FileNotFoundError`` if there is no file, and
    :class:`FormatError` if it cannot be read whole or was written as
    another kind or version.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "numbers.npz"
    >>> save(path, "demo", 1, {"x": np.arange(3)})
    >>> load(path, "demo", 2)
    Traceback (most recent call last):
    ...
    sparseset.FormatError: ... is format version 1; this sparseset reads version 2
    """
    where = os.fspath(path)
    # Opened here, not by np.load, so that the file is closed whatever
    # np.load makes of it; a missing or unreadable file raises as usual.
    with open(where, "rb") as file:
        try:
            loaded = np.load(file, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise FormatError(f"{where!r} holds one bare array, not a {kind} file")
            with loaded as archive:
                arrays = {key: archive[key] for key in archive.files}
        except FormatError:
            raise
        except (
            OSError,
            EOFError,
            ValueError,
            KeyError,
            # zipfile's answers to flipped bits in a member's header:
            # "encrypted", "unsupported compression", a broken stream.
            RuntimeError,
            NotImplementedError,
            zlib.error,
            zipfile.BadZipFile,
        ) as error:
            raise FormatError(
                f"{where!r} is not a readable {kind} file (truncated or "
                f"corrupted?): {error}"
            ) from error
    header = arrays.pop("format", None), arrays.pop("version", None)
    found_kind, found_version = header
    if found_kind is None or found_kind.shape != () or str(found_kind) != kind:
        raise FormatError(f"{where!r} is not a {kind} file (its header says otherwise)")
    if (
        found_version is None
        or found_version.shape != ()
        or found_version.dtype.kind not in "iu"
    ):
        raise FormatError(f"{where!r} has no valid format version")
    if int(found_version) != version:
        raise FormatError(
            f"{where!r} is format version {int(found_version)}; this sparseset "
            f"reads version {version}"
        )
    return arrays


__all__ = [
    "HOST",
    "FormatError",
    "load",
    "process_gone",
    "save",
    "sweep",
    "sync_directory",
    "temporary_prefix",
    "write_atomic",
]
