"""The default index (``index="auto"``) against every fixed kind, per shape.

The default adapts to the ids it holds (see ``docs/guide/index-kinds.md``);
its floor on each shape of ids is the best fixed kind on that shape, timed
in the same run. Every workload holds ``N = 1_000_000`` distinct ids in
random order, drawn as ``ids``:

- ``"dense 4M"``: N ids of ``[0, 4_000_000)`` (flat's ground);
- ``"runs 2**40"``: runs of 4096 consecutive ids (a page each) at random
  page-aligned blocks of ``[0, 2**40)`` (paged's);
- ``"scattered 2**31"``, ``"scattered 2**40"``, ``"scattered 2**63"``: ids
  uniform below each bound (hash's).

``kind`` is ``"auto"`` (the default) or a fixed kind; a kind that cannot
hold a draw (flat past ``2**31``, paged past ``2**48``), or that would
take gigabytes for it (flat over ``[0, 2**31)``: 8.6 GB) is skipped
(``NotImplementedError``).

What to read (ratios in the same run):

- ``Build.time_add``: a new set (no capacity hint) adds the N ids; the
  targets: ``auto`` within 1.2x of the fastest fixed kind of the draw.
- ``Lookup.time_contains``: ``s.contains`` of N queries, half members.
- ``Lookup.time_discard``: ``s.discard`` of half the members, from a
  fresh copy made in ``setup``.
- ``Build.track_nbytes_per_member``: ``s.nbytes / N``; the targets:
  ``auto`` within 1.5x of the smallest fixed kind, and at most 64.
- ``Distinct``: the distinct ids of 5M events over 1M keys below
  ``2**31`` (a data user's first step): ``SparseSet().add(events)``
  beside ``pl.Series(events).unique()`` (polars, its own threads) and a
  hash counter's ``add_at`` on the same events; the target:
  ``time_sparseset / time_polars_unique`` at most 0.6.
- ``RunsInBatches``: the runs draw added in ten batches of 100k ids
  (each long enough to be estimated): every batch's pages are taken at
  once, as for one batch; the floor is hash's time.

Measured (AMD EPYC Zen 5 VM, 2 cores shared with other jobs, one
alternated run, medians; ``docs/guide/index-kinds.md`` has the table):
on runs over ``2**40`` the default (paged) adds in 0.69x hash's time
(9.9 ms beside 14.4; paged 9.7), where it took 1.34x before a batch of
runs took its pages at once (one growth of the pools instead of 24);
every shape's ``add``, ``contains`` and ``discard`` within 1.15x of the
best fixed kind, memory that kind's; ``Distinct`` 0.43x polars.
"""

import functools

import numpy as np

from sparseset import SparseMap, SparseSet

from ._size import sized

N = sized(1_000_000)
PAGE = 4096
KINDS = ["auto", "flat", "paged", "hash"]
DRAWS = [
    "dense 4M",
    "runs 2**40",
    "scattered 2**31",
    "scattered 2**40",
    "scattered 2**63",
]
PARAMS = (KINDS, DRAWS)
PARAM_NAMES = ["kind", "ids"]
#: The kind/draw pairs no set holds, or holds only at gigabytes.
SKIPPED = {
    ("flat", "runs 2**40"): "flat holds ids in [0, 2**31) only",
    ("flat", "scattered 2**31"): "flat takes 8.6 GB over [0, 2**31)",
    ("flat", "scattered 2**40"): "flat holds ids in [0, 2**31) only",
    ("flat", "scattered 2**63"): "flat holds ids in [0, 2**31) only",
    ("paged", "scattered 2**63"): "paged holds ids in [0, 2**48) only",
}


def _check(kind, ids):
    reason = SKIPPED.get((kind, ids))
    if reason is not None:
        raise NotImplementedError(f"index={kind!r} on {ids!r}: {reason}")


@functools.cache
def _members(ids):
    """The N members of a draw, distinct, in random order (fixed seeds)."""
    rng = np.random.default_rng(51)
    if ids == "dense 4M":
        return rng.choice(4_000_000, N, replace=False).astype(np.int64)
    if ids == "runs 2**40":
        starts = rng.choice(2**40 // PAGE, -(-N // PAGE), replace=False) * PAGE
        runs = (starts[:, None] + np.arange(PAGE)).ravel()[:N]
        return rng.permutation(runs).astype(np.int64)
    top = {"scattered 2**31": 2**31, "scattered 2**40": 2**40}.get(ids, 2**63 - 1)
    drawn = np.unique(rng.integers(0, top, N + N // 10, dtype=np.int64))
    return rng.permutation(drawn)[:N]


@functools.cache
def _queries(ids):
    """N queries: half the members, half ids next to them (mostly absent)."""
    members = _members(ids)
    return np.concatenate([members[: N // 2], members[: N // 2] + 1])


@functools.cache
def _built(kind, ids):
    s = SparseSet(index=kind)
    s.add(_members(ids))
    return s


class Build:
    """A new set of each kind adds the N ids of a draw."""

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5

    def setup(self, kind, ids):
        _check(kind, ids)
        self.ids = _members(ids)
        self.s = None
        _built(kind, ids)  # compiled and warm

    def time_add(self, kind, ids):
        self.s = SparseSet(index=kind)
        self.s.add(self.ids)

    def track_nbytes_per_member(self, kind, ids):
        s = _built(kind, ids)
        return s.nbytes / len(s)

    track_nbytes_per_member.unit = "bytes"


class Lookup:
    """Membership and removal on a set of each kind holding a draw."""

    params = PARAMS
    param_names = PARAM_NAMES
    number = 1
    repeat = 5

    def setup(self, kind, ids):
        _check(kind, ids)
        self.s = _built(kind, ids)
        self.queries = _queries(ids)
        self.gone = _members(ids)[::2].copy()
        self.fresh = self.s.copy()

    def time_contains(self, kind, ids):
        self.s.contains(self.queries)

    def time_discard(self, kind, ids):
        self.fresh.discard(self.gone)


@functools.cache
def _events():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**31, N)
    return keys[rng.integers(0, N, 5 * N)]


class Distinct:
    """The distinct ids of 5M events over 1M keys scattered below 2**31."""

    number = 1
    repeat = 5

    def setup(self):
        self.events = _events()
        SparseSet().add(self.events[:1000])
        SparseMap("i8", index="hash").add_at(self.events[:1000], 1)

    def time_sparseset(self):
        SparseSet().add(self.events)

    def time_polars_unique(self):
        import polars as pl

        pl.Series(self.events).unique()

    def time_counter_add_at(self):
        SparseMap("i8", index="hash").add_at(self.events, 1)


#: The kinds that hold the runs draw, and the name of that parameter.
RUNS_KINDS = (["auto", "paged", "hash"],)
RUNS_PARAM_NAMES = ["kind"]


class RunsInBatches:
    """The runs draw added in ten batches of 100k ids to a new set."""

    params = RUNS_KINDS
    param_names = RUNS_PARAM_NAMES
    number = 1
    repeat = 5

    def setup(self, kind):
        self.parts = np.array_split(_members("runs 2**40"), 10)
        SparseSet(index=kind).add(self.parts[0])  # compiled and warm

    def time_add(self, kind):
        s = SparseSet(index=kind)
        for part in self.parts:
            s.add(part)
