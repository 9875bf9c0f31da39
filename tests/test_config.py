"""sparseset.config: every tunable read once from the environment, checked,
documented, and never frozen stale into a cached kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sparseset import config
from sparseset.config import TUNABLES, setting


def run_python(code: str, cache: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with numba's cache in ``cache``
    and ``env`` added to a copy of this process's environment, minus any
    SPARSESET_ setting of the developer's."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPARSESET_")}
    environ.update(NUMBA_CACHE_DIR=cache, **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )


# -- the module ---------------------------------------------------------------


def test_every_upper_case_name_but_the_prefix_and_registry_is_a_tunable():
    names = {n for n in vars(config) if n.isupper() and not n.startswith("_")}
    assert names - {"PREFIX", "TUNABLES", "HOST_CPU"} == set(TUNABLES)


@pytest.mark.parametrize("name", sorted(TUNABLES))
def test_each_tunable_is_read_from_its_variable_and_documented(name):
    tunable = TUNABLES[name]
    assert getattr(config, name) == tunable.value
    assert tunable.variable == f"SPARSESET_{name}"
    expected = setting(name, tunable.default, tunable.low, tunable.high)
    assert tunable.value == expected
    assert tunable.low <= tunable.default
    assert tunable.high is None or tunable.default <= tunable.high
    # A row of the module docstring's table names it, with its default.
    rows = [
        line for line in (config.__doc__ or "").splitlines() if f"``{name}``" in line
    ]
    assert len(rows) == 1, f"{name} has no row in config's table"
    # (A default that follows the CPU is written "32/64": this CPU's is one.)
    assert str(tunable.default) in rows[0].split()[1].split("/")
    # ... and a comment above its assignment says what it does.
    source = Path(config.__file__).read_text()
    at = source.index(f"\n{name}: Final")
    assert source[:at].rstrip().splitlines()[-1].startswith("#:")


def test_the_add_lookahead_defaults_to_64_on_zen_cores_and_32_elsewhere():
    from llvmlite import binding

    assert binding.get_host_cpu_name() == config.HOST_CPU
    zen = config.HOST_CPU.startswith("znver")
    assert TUNABLES["ADD_PREFETCH_AHEAD"].default == (64 if zen else 32)


@pytest.mark.parametrize(
    ("text", "value"),
    [("", 7), ("   ", 7), ("3", 3), (" 9 ", 9), ("0x8", 8), ("1_0", 10), ("0", 0)],
)
def test_a_setting_is_an_integer_in_python_syntax(text, value):
    assert setting("DEMO", 7, 0, 10, {"SPARSESET_DEMO": text}) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "SPARSESET_DEMO = 'abc' is not an integer"),
        ("2.5", "SPARSESET_DEMO = '2.5' is not an integer"),
        ("1e3", "SPARSESET_DEMO = '1e3' is not an integer"),
        ("-1", r"SPARSESET_DEMO = '-1' is outside \[0, 10\]"),
        ("11", r"SPARSESET_DEMO = '11' is outside \[0, 10\]"),
    ],
)
def test_a_bad_setting_names_the_variable_and_its_value(text, message):
    with pytest.raises(ValueError, match=message):
        setting("DEMO", 7, 0, 10, {"SPARSESET_DEMO": text})


def test_without_an_upper_bound_only_the_lower_one_is_checked():
    assert setting("DEMO", 1, 1, None, {"SPARSESET_DEMO": str(2**40)}) == 2**40
    with pytest.raises(ValueError, match="SPARSESET_DEMO = '0' is outside >= 1"):
        setting("DEMO", 1, 1, None, {"SPARSESET_DEMO": "0"})


# -- in a fresh process -------------------------------------------------------


def test_a_bad_variable_stops_the_import_with_a_clear_error(tmp_path):
    done = run_python(
        "import sparseset", str(tmp_path), SPARSESET_HASH_MAX_LOAD_PERCENT="99"
    )
    assert done.returncode != 0
    assert "SPARSESET_HASH_MAX_LOAD_PERCENT = '99' is outside [1, 95]" in done.stderr


def test_variables_are_read_once_at_import(tmp_path):
    done = run_python(
        """
        import os
        from sparseset import config
        os.environ["SPARSESET_PARALLEL_THRESHOLD"] = "9"  # too late: ignored
        from sparseset.sets import sparse_set  # noqa: F401
        print(config.PARALLEL_THRESHOLD, config.TUNABLES["PARALLEL_THRESHOLD"].value)
        """,
        str(tmp_path),
        SPARSESET_PARALLEL_THRESHOLD="5",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5", "5"]


#: Compiles (or loads) the batch kernels on a flat and a hash index and
#: reports what numba's cache did, the signatures, the tuning arguments the
#: containers pass, and what the kernels did on a hash table sized by the
#: configured load.
PROBE = """
import json
import numpy as np
from sparseset import config, kernels
from sparseset.kernels.index import hashed

sparse = np.empty(16, np.uint32); dense = np.empty(16, np.int32)
none = kernels.NO_POSITIONS
batch = np.array([3, 5])
n, _ = kernels.upsert(sparse, dense, 0, batch, none, 0, *kernels.UPSERT_TUNING)
out = np.empty(3, np.bool_)
kernels.find_all(sparse, dense, n, np.array([3, 4, 5]), out, *kernels.LOOKUP_TUNING)
stats = kernels.find_all.stats

# 900 ids in the table empty(900) makes: no growth may be needed.
ix = hashed.empty(900, seed=1)
ids = np.arange(900, dtype=np.int64) * 7919
members = np.empty(900, np.int64)
m, stop = kernels.upsert(ix, members, 0, ids, none, 0, *kernels.UPSERT_TUNING)
found = np.empty(900, np.int64)
kernels.find_all(ix, members, m, ids, found, *kernels.LOOKUP_TUNING)
print(json.dumps({
    "answers": out.tolist(),
    "signatures": [str(s) for s in kernels.find_all.signatures],
    "lookup_tuning": list(kernels.LOOKUP_TUNING),
    "hits": sum(stats.cache_hits.values()),
    "misses": sum(stats.cache_misses.values()),
    "slots": int(hashed.slots_of(ix.table)),
    "added": [int(m), int(stop)],
    "positions_ok": found.tolist() == list(range(900)),
}))
"""


def probe(cache: str, **env: str) -> dict[str, object]:
    done = run_python(PROBE, cache, **env)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return answer


def test_a_changed_setting_takes_effect_through_a_warm_cache(tmp_path):
    cache = str(tmp_path / "numba-cache")
    first = probe(cache)
    assert first["misses"] == 2 and first["hits"] == 0  # flat, then hash
    again = probe(cache)
    # The cache is in use: the same settings load what the first run built.
    assert again["hits"] == 2 and again["misses"] == 0
    changed = probe(
        cache, SPARSESET_LOOKUP_CHUNK="7", SPARSESET_HASH_MAX_LOAD_PERCENT="90"
    )
    # The tunings are run-time arguments: the cached kernels serve any
    # setting, and the new values are what the callers pass them.
    assert changed["hits"] == 2 and changed["misses"] == 0
    assert first["lookup_tuning"][0] == 4096
    assert changed["lookup_tuning"][0] == 7
    for run in (first, again, changed):
        assert run["answers"] == [True, False, True]
        assert run["added"] == [900, -1] and run["positions_ok"]
    # The load limit travels in the index: 900 ids take 2048 slots at 50%
    # and 1024 at 90%, and the cached kernels fill each table to its own.
    assert (first["slots"], changed["slots"]) == (2048, 1024)
