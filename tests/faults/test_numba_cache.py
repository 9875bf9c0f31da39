"""A bad numba cache file recompiles, with at most a warning, never raises.

numba loads its cache with ``pickle``: an index cut short (a process
killed while numba wrote it, a full disk), a flipped bit, or an index
from another version of the package naming a class this one lacks used
to make every later run raise until the cache was deleted. The package's
kernels keep their cache sealed with a digest
(:mod:`sparseset.kernels.caching`); these tests damage it in every way
listed and check that the next load is a miss, never an exception nor a
wrong entry, and that the next save repairs the file.
"""

from __future__ import annotations

import os
import pathlib
import pickle
import random
import shutil
import subprocess
import sys
import textwrap
import threading
import types
import warnings

import numba
import pytest
from numba.core import caching as numba_caching

from sparseset.kernels import caching
from sparseset.kernels.caching import CacheRepairWarning, CheckedCacheFile, seal

STAMP = (1234.5, 678)
BASE = "kernel.run-12.py311"
#: What a cache entry holds, for the file-level tests: any picklable value.
ENTRY = {"code": bytes(range(256)) * 8, "name": "run", "sig": (1, 2)}
KEY = ("int64", "x86_64", ("abc", ""))
OTHER_KEY = ("float64", "x86_64", ("abc", ""))


@pytest.fixture(autouse=True)
def _warn_again(monkeypatch):
    monkeypatch.setattr(caching, "WARNED", [False])


def vanishing_payload() -> bytes:
    """An index payload naming a class that no longer exists when read:
    what an index written by an older version of the package holds."""
    module = types.ModuleType("sparseset_vanished_module")

    class Gone:
        pass

    Gone.__module__ = module.__name__
    Gone.__qualname__ = "Gone"
    module.Gone = Gone  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        payload = pickle.dumps((numba.__version__, STAMP, {(Gone(),): "x.1.nbc"}))
    finally:
        del sys.modules[module.__name__]
    return payload


def damaged(raw: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    """Every kind of damage to one file's bytes, many times each."""
    cases: list[tuple[str, bytes]] = [("empty", b""), ("garbage", b"\x80\x04junk")]
    for cut in [*sorted(rng.sample(range(len(raw)), 50)), 20, len(raw) - 1]:
        cases.append((f"cut to {cut} bytes", raw[:cut]))
    for _ in range(60):
        at = rng.randrange(len(raw))
        flipped = bytearray(raw)
        flipped[at] ^= 1 << rng.randrange(8)
        cases.append((f"bit flipped at byte {at}", bytes(flipped)))
    # numba's own layout (an older sparseset, plain numba): no seal.
    cases.append(("unsealed", pickle.dumps(numba.__version__) + raw[40:]))
    cases.append(("names a missing class", seal(vanishing_payload())))
    cases.append(
        (
            "unsealed, names a missing class",
            pickle.dumps(numba.__version__) + vanishing_payload(),
        )
    )
    cases.append(("another numba", seal(pickle.dumps(("0.1.0", STAMP, {KEY: "x"})))))
    return cases


def test_damaged_index_and_data_files_read_as_misses_and_are_rewritten(tmp_path):
    """118 damages of the index, 118 of a data file: a load never raises, never
    returns a wrong entry, and the next save makes the entry load again."""
    rng = random.Random(50)
    cache = CheckedCacheFile(str(tmp_path), BASE, STAMP)
    cache.save(KEY, ENTRY)
    cache.save(OTHER_KEY, "other")
    index = pathlib.Path(cache._index_path)
    data = tmp_path / f"{BASE}.1.nbc"
    assert cache.load(KEY) == ENTRY and data.exists()
    injected = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheRepairWarning)
        for path in (index, data):
            good = path.read_bytes()
            for what, raw in damaged(good, rng):
                path.write_bytes(raw)
                fresh = CheckedCacheFile(str(tmp_path), BASE, STAMP)
                loaded = fresh.load(KEY)
                assert loaded in (None, ENTRY), f"{path.name} {what}: {loaded!r}"
                if raw != good:
                    assert loaded is None, f"{path.name} {what} loaded"
                fresh.save(KEY, ENTRY)
                assert CheckedCacheFile(str(tmp_path), BASE, STAMP).load(KEY) == ENTRY
                if path == data:
                    path.write_bytes(good)
                injected += 1
            path.write_bytes(good)
    assert injected == 2 * 118


def test_two_saves_at_once_into_one_cache_keep_both_entries(tmp_path, monkeypatch):
    """Processes sharing a cache (test workers, dask workers on one machine)
    save entries of one function at once: one save waits for the other,
    or the second to write the index drops the first's entry (numba's
    read, pick a file name, write back)."""
    first, second = (CheckedCacheFile(str(tmp_path), BASE, STAMP) for _ in "ab")
    inside, resume = threading.Event(), threading.Event()
    save_index = CheckedCacheFile._save_index

    def held_up(self, overloads):
        if self is first:  # between reading the index and writing it back
            inside.set()
            assert resume.wait(10)
        save_index(self, overloads)

    monkeypatch.setattr(CheckedCacheFile, "_save_index", held_up)
    # Each save opens the lock file anew, so two threads exclude each
    # other as two processes do.
    a = threading.Thread(target=first.save, args=(KEY, ENTRY))
    a.start()
    assert inside.wait(10)
    b = threading.Thread(target=second.save, args=(OTHER_KEY, "other"))
    b.start()
    b.join(0.3)
    waited = b.is_alive()
    resume.set()
    a.join()
    b.join()
    assert waited
    reader = CheckedCacheFile(str(tmp_path), BASE, STAMP)
    assert reader.load(KEY) == ENTRY
    assert reader.load(OTHER_KEY) == "other"


def test_a_stale_source_stamp_is_a_miss(tmp_path):
    CheckedCacheFile(str(tmp_path), BASE, STAMP).save(KEY, ENTRY)
    assert CheckedCacheFile(str(tmp_path), BASE, (1.0, 1)).load(KEY) is None


def test_the_first_unusable_file_warns_once(tmp_path):
    cache = CheckedCacheFile(str(tmp_path), BASE, STAMP)
    cache.save(KEY, ENTRY)
    sealed = pathlib.Path(cache._index_path).read_bytes()
    pathlib.Path(cache._index_path).write_bytes(sealed[:-5])  # cut short
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.load(KEY) is None
        assert cache.load(KEY) is None
    assert [w.category for w in caught] == [CacheRepairWarning]
    assert cache._index_path in str(caught[0].message)
    # A foreign file (numba's own layout: a cache from before) is quiet.
    caching.WARNED[0] = False
    pathlib.Path(cache._index_path).write_bytes(pickle.dumps(numba.__version__))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.load(KEY) is None
    assert not caching.WARNED[0]
    # Warnings made errors cannot turn a bad cache into an exception.
    pathlib.Path(cache._index_path).write_bytes(sealed[:-5])
    caching.WARNED[0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.load(KEY) is None


def tiny(x):
    return x * 3 + 1


def test_a_dispatcher_recompiles_over_damaged_files(tmp_path, monkeypatch):
    """A kernel on the checked cache, its files damaged 24 ways: each next
    dispatcher answers right (compiling), and the one after loads."""
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))

    def dispatcher():
        compiled = numba.njit(tiny)
        compiled._cache = caching.CheckedFunctionCache(tiny)
        return compiled

    first = dispatcher()
    assert first(4) == 13
    files = sorted(tmp_path.rglob("*.nb[ic]"))
    assert [f.suffix for f in files] == [".nbc", ".nbi"]
    rng = random.Random(7)
    injected = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheRepairWarning)
        for path in files:
            good = path.read_bytes()
            chosen = rng.sample(damaged(good, rng), 12)
            for what, raw in chosen:
                path.write_bytes(raw)
                again = dispatcher()
                assert again(5) == 16, what
                assert sum(again.stats.cache_misses.values()) == 1, what
                loads = dispatcher()
                assert loads(5) == 16
                assert sum(loads.stats.cache_hits.values()) == 1, what
                injected += 1
    assert injected == 24


def test_only_the_package_functions_get_the_checked_cache():
    from sparseset.kernels import batch

    assert isinstance(batch.upsert._cache, caching.CheckedFunctionCache)
    made = caching.ChoosingFunctionCache(tiny)  # a function of this test module
    assert type(made) is numba_caching.FunctionCache


ANSWER = ["True 3", "[False, True, True] [0]"]


def test_every_cached_function_of_the_package_gets_the_checked_cache():
    """Each module's cached kernels, whatever module declares them and in
    whichever order modules are imported: the checked cache is installed
    before the first kernel."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    import sparseset

    for info in pkgutil.walk_packages(sparseset.__path__, "sparseset."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency (dask) not installed
            continue
    checked = plain = 0
    for name, module in list(sys.modules.items()):
        if name != "sparseset" and not name.startswith("sparseset."):
            continue
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                cache = value._cache
                if isinstance(cache, caching.CheckedFunctionCache):
                    checked += 1
                elif not isinstance(cache, numba_caching.NullCache):
                    plain += 1
    assert checked >= 50 and plain == 0, (checked, plain)


PROGRAM = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("always")
    from sparseset import SparseSet
    s = SparseSet(); s.add([1, 2, 3]); print(2 in s, len(s))
    s.discard([1, 9]); print(s.contains([1, 2, 3]).tolist(), s.index([3]).tolist())
    """
)


def run_program(
    cache: pathlib.Path, debug: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    if debug:  # numba prints each cache file it loads or saves
        env["NUMBA_DEBUG_CACHE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.fresh_process
def test_the_reproduction_runs_over_a_damaged_cache_of_the_real_kernels(tmp_path):
    """The issue's reproduction: the package's own kernels cached, then
    each index and data file damaged a different way (cut to 20 bytes,
    a flipped bit, numba's plain layout naming a missing class, a sealed
    index naming one, a cut data file). The next run answers right and at
    most warns; the run after it loads everything, warning nothing."""
    # The kernels this process compiled already, copied: the first run
    # then loads instead of compiling (it compiles what is missing).
    if numba.core.config.CACHE_DIR:
        shutil.copytree(numba.core.config.CACHE_DIR, tmp_path, dirs_exist_ok=True)
    first = run_program(tmp_path, debug=True)
    if "data saved to" in first.stdout:  # it compiled: load what it saved
        first = run_program(tmp_path, debug=True)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [line for line in lines if not line.startswith("[cache]")] == ANSWER
    used = {
        pathlib.Path(line.split(" from ")[-1].strip("'"))
        for line in lines
        if line.startswith("[cache]") and " from " in line
    }
    assert all(path.is_relative_to(tmp_path) for path in used)
    # One kernel's files each way (damaging a kernel's index and data
    # both would test only the index): the kernels loaded, by data file.
    datas = sorted(path for path in used if path.suffix == ".nbc")
    indexes = [path.with_name(path.name.rsplit(".", 2)[0] + ".nbi") for path in datas]
    assert set(indexes) <= used
    assert len(indexes) == len(datas) >= 5
    pairs = list(zip(indexes, datas, strict=True))
    (cut, _), (unsealed, _), (sealed, _), (_, flipped), (_, short) = pairs[:5]
    cut.write_bytes(cut.read_bytes()[:20])
    unsealed.write_bytes(pickle.dumps(numba.__version__) + vanishing_payload())
    sealed.write_bytes(seal(vanishing_payload()))
    raw = bytearray(flipped.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    flipped.write_bytes(bytes(raw))
    short.write_bytes(short.read_bytes()[:100])
    second = run_program(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ANSWER
    assert "Traceback" not in second.stderr
    assert "CacheRepairWarning" in second.stderr
    third = run_program(tmp_path)
    assert third.returncode == 0, third.stderr
    assert third.stdout.splitlines() == ANSWER
    assert third.stderr == "", third.stderr
