"""Saves that fail or are killed leave the previous file readable and whole.

- A file size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored so that a write
  past it fails with ``EFBIG``) at every size from nothing to just short
  of the new file, and a full disk (``ENOSPC``) at each write, flush and
  rename of a save: the save raises ``OSError``, the old world or store
  loads whole, and no temporary file is left.
- SIGKILL at random moments of a process saving two worlds (or stores)
  over each other in a loop, in both formats, 100 times: the path then
  holds one of the two, whole, and the next save clears what the killed
  one left.
"""

from __future__ import annotations

import errno
import os
import random
import resource
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numba.np.ufunc.parallel as numba_threads
import numpy as np
import pytest
from injection import check_store, world_state

from sparseset import ComponentStore, World
from sparseset.io import npz as npz_io

pytest.importorskip("pyarrow")


def make_world(n: int, seed: int) -> World:
    rng = np.random.default_rng(seed)
    w = World()
    w.register("pos", ("f8", (2,)))
    w.register("hp", "i4")
    w.register("tag")
    e = w.create(n)
    w.add("pos", e, pos=rng.random((n, 2)))
    w.add("hp", e[::2], hp=rng.integers(0, 100, e[::2].shape[0]))
    w.add("tag", e[::3])
    w.destroy(e[1::7])
    return w


def make_store(n: int, seed: int) -> ComponentStore:
    rng = np.random.default_rng(seed)
    store = ComponentStore({"hp": "i4", "pos": ("f8", (2,))})
    store.add(
        rng.permutation(n * 2)[:n], hp=rng.integers(0, 9, n), pos=rng.random((n, 2))
    )
    return store


#: What each target saves and how its file reads back: (save, load).
KINDS: dict[str, tuple[Callable[[Any, Any], None], Callable[[Any], Any]]] = {
    "world npz": (
        lambda w, path: w.save(path, format="npz"),
        lambda path: world_state(World.load(path)),
    ),
    "world parquet": (
        lambda w, path: w.save(path, format="parquet"),
        lambda path: world_state(World.load(path)),
    ),
    "store parquet": (
        lambda s, path: s.to_parquet(path),
        lambda path: check_store(ComponentStore.read_parquet(path)),
    ),
}


def subjects(kind: str) -> tuple[Any, Any]:
    if kind.startswith("world"):
        return make_world(300, 1), make_world(400, 2)
    return make_store(300, 1), make_store(400, 2)


def size_of(path: Any) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """No file of this process may grow past ``limit`` bytes: a write past
    it fails with EFBIG (SIGXFSZ, which would kill the process, ignored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_file_size_limit_fails_the_save_and_keeps_the_old_file(tmp_path, kind):
    save, load = KINDS[kind]
    old, new = subjects(kind)
    target = tmp_path / "saved"
    save(new, target)
    new_size = size_of(target)
    # The largest file of the new save: past its size, nothing fails.
    largest = (
        max(os.path.getsize(target / f) for f in os.listdir(target))
        if os.path.isdir(target)
        else new_size
    )
    save(old, target)
    expected = load(target)
    limits = sorted({int(x) for x in np.linspace(0, largest - 1, 40)})
    for limit in limits:
        with pytest.raises(OSError) as caught, file_size_limit(limit):
            save(new, target)
        assert caught.value.errno == errno.EFBIG, caught.value
        assert os.listdir(tmp_path) == ["saved"], f"limit {limit}"
        assert load(target) == expected, f"limit {limit}"
    with file_size_limit(largest):
        save(new, target)
    assert load(target) != expected
    assert len(limits) >= 35


class DiskFullError(OSError):
    def __init__(self) -> None:
        super().__init__(errno.ENOSPC, os.strerror(errno.ENOSPC))


#: Where a save meets the disk: each is failed in turn at its k-th call.
DISK_CALLS = ("fsync", "replace", "rename", "write")


@contextmanager
def full_disk_at(monkeypatch: Any, name: str, k: int) -> Iterator[list[int]]:
    """The ``k``-th call of ``os.<name>`` (or of a file's ``write``) in the
    block raises ENOSPC; yields the running count of calls."""
    count = [0]
    if name == "write":
        import builtins

        real_open = builtins.open

        class Full:
            def __init__(self, file: Any) -> None:
                self._file = file

            def write(self, data: Any) -> Any:
                count[0] += 1
                if count[0] == k:
                    raise DiskFullError()
                return self._file.write(data)

            def __getattr__(self, attr: str) -> Any:
                return getattr(self._file, attr)

            def __enter__(self) -> Full:
                return self

            def __exit__(self, *exc: object) -> None:
                self._file.close()

            def __iter__(self) -> Any:
                return iter(self._file)

        def opening(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            opened = real_open(file, mode, *args, **kwargs)
            return Full(opened) if "w" in mode else opened

        real_fdopen = os.fdopen

        def fdopening(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            opened = real_fdopen(fd, mode, *args, **kwargs)
            return Full(opened) if "w" in mode else opened

        monkeypatch.setattr(builtins, "open", opening)
        monkeypatch.setattr(os, "fdopen", fdopening)
    else:
        real = getattr(os, name)

        def failing(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            if count[0] == k:
                raise DiskFullError()
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, failing)
    try:
        yield count
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_full_disk_fails_the_save_and_keeps_the_old_file(tmp_path, kind, monkeypatch):
    save, load = KINDS[kind]
    old, new = subjects(kind)
    target = tmp_path / "saved"
    save(old, target)
    expected = load(target)
    injected = 0
    for name in DISK_CALLS:
        with full_disk_at(monkeypatch, name, 0) as count:
            save(new, target)  # counts the calls of a whole save
        calls = count[0]
        save(old, target)
        for k in range(1, calls + 1):
            failed = False
            try:
                with full_disk_at(monkeypatch, name, k):
                    save(new, target)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
                failed = True
            assert os.listdir(tmp_path) == ["saved"], f"{name} #{k}"
            if failed:
                assert load(target) == expected, f"{name} #{k}"
            else:  # a failure after the rename: the new file is whole
                assert load(target) != expected, f"{name} #{k}"
                save(old, target)
            injected += 1
    assert injected >= 4


# -- SIGKILL during saves -------------------------------------------------------


KILLS = 100


def saving_forever(kind: str, target: Any) -> None:
    """The child: save the two subjects over each other until killed."""
    save, _ = KINDS[kind]
    first, second = subjects(kind)
    while True:
        save(first, target)
        save(second, target)


@pytest.mark.fresh_process
def test_saves_killed_at_random_moments_leave_one_whole_file(tmp_path):
    """100 SIGKILLs spread over the three kinds of save: each time the path
    loads as one of the two states, and the next save leaves no
    temporary behind."""
    rng = random.Random(50)
    states: dict[str, list[Any]] = {}
    for kind in KINDS:
        save, load = KINDS[kind]
        first, second = subjects(kind)
        for subject in (first, second):
            save(subject, tmp_path / "probe")
            states.setdefault(kind, []).append(load(tmp_path / "probe"))
        if os.path.isdir(tmp_path / "probe"):
            import shutil

            shutil.rmtree(tmp_path / "probe")
        else:
            os.unlink(tmp_path / "probe")
    leftovers = 0
    kinds = list(KINDS)
    for kill in range(KILLS):
        kind = kinds[kill % len(kinds)]
        save, load = KINDS[kind]
        folder = tmp_path / kind.replace(" ", "-")
        folder.mkdir(exist_ok=True)
        target = folder / "saved"
        if not os.path.lexists(target):
            save(subjects(kind)[0], target)
        pid = os.fork()
        if pid == 0:  # the child saves until it is killed
            # numba's lock around starting its thread pool is shared with
            # the parent across a fork (a process-shared semaphore): a kill
            # landing while the child holds it would leave every later
            # numba.get_num_threads() of the parent waiting for ever.
            numba_threads._backend_init_process_lock = numba_threads._nop()
            try:
                saving_forever(kind, target)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), f"the saving child ended by itself: {status}"
        assert load(target) in states[kind], f"kill {kill} of {kind}"
        leftovers += len(os.listdir(folder)) - 1
        # The next save (here, the parent's) clears what the killed one left.
        save(subjects(kind)[kill % 2], target)
        assert os.listdir(folder) == ["saved"]
    assert leftovers > 0, "no kill landed inside a save"


def dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_the_next_save_puts_back_an_old_world_a_kill_left_aside(tmp_path):
    """Where directories cannot be exchanged, a Parquet save renames the
    old world aside, then the new one in: a kill between the two leaves
    no world at the path. The next save's sweep puts the old one back
    before anything else; temporaries of live processes stay."""
    old = make_world(50, 1)
    aside = tmp_path / f".saved.{npz_io.HOST}-{dead_pid()}.abc.tmp.old"
    old.save(aside, format="parquet")
    half = tmp_path / f".saved.{npz_io.HOST}-{dead_pid()}.def.tmp"
    half.mkdir()
    (half / "entities.parquet").write_bytes(b"PAR1")
    mine = tmp_path / f".saved.{npz_io.HOST}-{os.getpid()}.ghi.tmp"
    mine.write_bytes(b"a save of this process, under way")
    npz_io.sweep(str(tmp_path), "saved")
    assert sorted(os.listdir(tmp_path)) == sorted(["saved", mine.name])
    assert world_state(World.load(tmp_path / "saved")) == world_state(old)
