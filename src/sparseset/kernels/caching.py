"""numba's on-disk cache for this package's kernels, proof against bad files.

numba reads a kernel's cache with ``pickle`` and trusts what it reads: an
index file cut short (by a process killed while numba wrote it, or a full
disk), a bit flipped in a data file, or an index written by another
version of this package that names a class this version lacks makes every
later call of that kernel raise, in every process, until someone deletes
the cache. A flipped bit inside the compiled code itself could even load
and run.

So this package's cached functions keep their cache in a checked form:
each index and data file is a header (:data:`MAGIC`), the SHA-256 of its
payload, then the payload numba would have written (a data file's also
names its entry's key and source stamp, so a data file left over from
another entry is never taken for this one). A file whose header
or digest does not match, whose payload does not unpickle, or whose
compiled code does not rebuild is a cache miss: the kernel compiles as if
the cache were empty and the next save overwrites the bad file. The first
such miss in a process warns (:class:`CacheRepairWarning`) naming the
file, unless the file is foreign (it does not start with :data:`MAGIC`:
numba's own layout, a cache from before this version); none raises.

Processes that share a cache directory save one at a time
(:func:`exclusive_file_lock` on a lock file beside each function's
index): numba reads an index, picks a free data file name and writes the
index back, so two processes saving entries of one function at once
would otherwise drop one of them, or write both into one data file.

:func:`install` makes numba build this cache for every function declared
with ``cache=True`` in a ``sparseset`` module from then on; importing this
module calls it, and :mod:`sparseset.kernels` imports it before any kernel
is declared. Functions of other modules keep numba's own cache, unchanged.
Nothing here compiles or reads a file at import.

Examples
--------
>>> install()
>>> from sparseset.kernels import batch
>>> isinstance(batch.upsert._cache, CheckedFunctionCache)
True
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import warnings
from collections.abc import Iterator
from typing import Any

from numba.core import caching, dispatcher

#: First bytes of every cache file this module writes (the trailing byte
#: is the layout's version).
MAGIC = b"sparseset-numba-cache\x00\x01"
#: Bytes of the payload's digest after :data:`MAGIC`.
DIGEST_BYTES = hashlib.sha256().digest_size
#: The package whose functions get the checked cache.
PACKAGE = "sparseset"


class CacheRepairWarning(RuntimeWarning):
    """A cache file of a sparseset kernel could not be used: the kernel is
    compiled again and the file rewritten (warned once per process).

    Examples
    --------
    >>> issubclass(CacheRepairWarning, RuntimeWarning)
    True
    """


#: Whether this process has warned already (a list, so no ``global``).
WARNED: list[bool] = [False]


def warn_once(path: str, error: BaseException | str) -> None:
    """Warn, the first time in this process, that the cache file ``path``
    was unusable; a filter that turns warnings into errors cannot make a
    bad cache file raise, so such an error is swallowed.

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     WARNED[0] = False
    ...     warn_once("f.nbi", "digest mismatch"); warn_once("f.nbi", "again")
    >>> [str(w.message) for w in caught]  # doctest: +NORMALIZE_WHITESPACE
    ["sparseset: numba cache file 'f.nbi' is unusable (digest mismatch);
    compiling again and rewriting it"]
    """
    if WARNED[0]:
        return
    WARNED[0] = True
    message = (
        f"sparseset: numba cache file {path!r} is unusable ({error}); "
        "compiling again and rewriting it"
    )
    with contextlib.suppress(Warning):
        warnings.warn(message, CacheRepairWarning, stacklevel=2)


def seal(payload: bytes) -> bytes:
    """``payload`` as a checked file's bytes: header, digest, payload.

    Examples
    --------
    >>> unseal(seal(b"abc"))
    b'abc'
    """
    return MAGIC + hashlib.sha256(payload).digest() + payload


def unseal(raw: bytes) -> bytes | None:
    """The payload of a checked file's bytes, or None if the header or the
    digest does not match (a cut, flipped or foreign file).

    Examples
    --------
    >>> sealed = seal(b"abc")
    >>> unseal(sealed[:-1]), unseal(b"junk"), unseal(sealed[:5])
    (None, None, None)
    """
    start = len(MAGIC) + DIGEST_BYTES
    if len(raw) < start or not raw.startswith(MAGIC):
        return None
    payload = raw[start:]
    if hashlib.sha256(payload).digest() != raw[len(MAGIC) : start]:
        return None
    return payload


@contextlib.contextmanager
def exclusive_file_lock(path: str) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if absent) for
    the block: one process at a time, whichever the thread.

    Where the platform has no ``fcntl`` (Windows) or the lock file cannot
    be opened (a read-only cache), the block runs unlocked: a cache entry
    is then possibly lost to a concurrent save (compiled again later),
    never mixed up, since a data file names its entry's key.

    Examples
    --------
    >>> import os, tempfile
    >>> where = os.path.join(tempfile.mkdtemp(), "index.lock")
    >>> with exclusive_file_lock(where):
    ...     os.path.exists(where)
    True
    """
    try:
        import fcntl
    except ImportError:  # no advisory locks here: a save may lose an entry
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class CheckedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files, each sealed with a digest; a file that
    fails its check or does not unpickle reads as absent."""

    def _read(self, path: str) -> Any:
        """The unpickled payload of ``path``, or None if it is unusable;
        FileNotFoundError if there is no such file."""
        with open(path, "rb") as f:
            raw = f.read()
        payload = unseal(raw)
        if payload is None:
            # A file that does not start as ours (numba's own layout, what
            # versions before this one wrote, or a file cut inside the
            # header) is foreign: a quiet miss, or every upgrade would warn.
            if raw[: len(MAGIC)] == MAGIC[: len(raw)] and len(raw) > len(MAGIC):
                warn_once(path, "failed its digest check")
            return None
        try:
            return pickle.loads(payload)
        except Exception as error:  # any unpickling failure is a miss
            warn_once(path, repr(error))
            return None

    def _load_index(self) -> dict[Any, str]:
        try:
            found = self._read(self._index_path)
        except FileNotFoundError:
            return {}
        except OSError as error:
            warn_once(self._index_path, repr(error))
            return {}
        if not (isinstance(found, tuple) and len(found) == 3):
            return {}
        version, stamp, overloads = found
        caching._cache_log("[cache] index loaded from %r", self._index_path)
        if version != self._version or stamp != self._source_stamp:
            return {}
        if not isinstance(overloads, dict):
            return {}
        return overloads

    def _save_index(self, overloads: dict[Any, str]) -> None:
        payload = self._dump((self._version, self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as f:
            f.write(seal(payload))
        caching._cache_log("[cache] index saved to %r", self._index_path)

    def save(self, key: Any, data: Any) -> None:
        """Save an entry as numba does, its data file holding the entry's
        key and source stamp too; processes sharing the cache take turns
        (:func:`exclusive_file_lock`)."""
        with exclusive_file_lock(self._index_path + ".lock"):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                taken = set(overloads.values())
                number = 1
                while self._data_name(number) in taken:
                    number += 1
                name = overloads[key] = self._data_name(number)
                self._save_index(overloads)
            payload = self._dump((self._source_stamp, key, data))
            with self._open_for_write(self._data_path(name)) as f:
                f.write(seal(payload))
        caching._cache_log("[cache] data saved to %r", self._data_path(name))

    def load(self, key: Any) -> Any:
        """The entry saved for ``key``, or None. A data file that holds
        another entry (left by a save killed between writing the index and
        the data, or by another version) is a miss too."""
        name = self._load_index().get(key)
        if name is None:
            return None
        path = self._data_path(name)
        try:
            found = self._read(path)
        except OSError:  # removed while the index still names it
            return None
        if found is None:
            return None
        if not (isinstance(found, tuple) and len(found) == 3):
            warn_once(path, "not an entry")
            return None
        stamp, saved_key, data = found
        if stamp != self._source_stamp or saved_key != key:
            return None
        caching._cache_log("[cache] data loaded from %r", path)
        return data


class CheckedFunctionCache(caching.FunctionCache):
    """numba's function cache over :class:`CheckedCacheFile`: whatever goes
    wrong while loading an entry, the entry is a miss."""

    def __init__(self, py_func: Any) -> None:
        super().__init__(py_func)  # type: ignore[no-untyped-call]
        old = self._cache_file
        self._cache_file = CheckedCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=old._source_stamp,
        )

    def _load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super()._load_overload(sig, target_context)  # type: ignore[no-untyped-call]
        except Exception as error:  # a bad entry rebuilds as a miss
            warn_once(self._cache_file._index_path, repr(error))
            return None


class ChoosingFunctionCache(caching.FunctionCache):
    """What numba's dispatcher builds as a function's cache once
    :func:`install` ran: a :class:`CheckedFunctionCache` for this package's
    functions, numba's own for everyone else's."""

    def __new__(cls, py_func: Any) -> Any:
        module = getattr(py_func, "__module__", None) or ""
        if module == PACKAGE or module.startswith(PACKAGE + "."):
            return CheckedFunctionCache(py_func)
        return caching.FunctionCache(py_func)


def install() -> None:
    """Make numba's dispatcher build :class:`ChoosingFunctionCache` for every
    function declared with ``cache=True`` from now on (idempotent).

    Examples
    --------
    >>> install(); dispatcher.FunctionCache is ChoosingFunctionCache
    True
    """
    dispatcher.FunctionCache = ChoosingFunctionCache  # type: ignore[attr-defined]


install()

__all__ = [
    "DIGEST_BYTES",
    "MAGIC",
    "PACKAGE",
    "CacheRepairWarning",
    "CheckedCacheFile",
    "CheckedFunctionCache",
    "ChoosingFunctionCache",
    "exclusive_file_lock",
    "install",
    "seal",
    "unseal",
    "warn_once",
]
