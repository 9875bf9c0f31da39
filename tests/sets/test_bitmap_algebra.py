"""Set algebra through member bitmaps: large flat sets against Python's ``set``.

Flat sets larger than ``SMALL_ALGEBRA`` whose bitmaps are small enough
combine a word at a time, and the result is a bitmap until its members or
its index are read (``PendingMembers`` -> ``PendingIndex`` -> ``SetState``).
Every stage must answer as a set built the ordinary way would.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from sparseset import SparseSet
from sparseset.config import SMALL_ALGEBRA
from sparseset.sets.engine import PendingIndex, PendingMembers, SetState

OPS = {
    "&": (lambda a, b: a & b),
    "|": (lambda a, b: a | b),
    "-": (lambda a, b: a - b),
    "^": (lambda a, b: a ^ b),
}

large_id_lists = st.lists(
    st.integers(0, 800), min_size=SMALL_ALGEBRA + 1, max_size=300, unique=True
)


def stage(s: SparseSet) -> str:
    return type(s._engine.state).__name__


@given(large_id_lists, large_id_lists, st.sampled_from(sorted(OPS)))
def test_bitmap_algebra_matches_set(a_ids, b_ids, op):
    a, b = SparseSet.from_ids(a_ids), SparseSet.from_ids(b_ids)
    want = OPS[op](set(a_ids), set(b_ids))
    out = OPS[op](a, b)
    assert stage(out) == "PendingMembers"
    assert len(out) == len(want)
    assert sorted(out) == sorted(want)
    assert np.asarray(out).tolist() == sorted(want)  # ascending, from the bitmap
    assert stage(out) == "PendingIndex"
    probes = [*list(want)[:5], 801, 10**9, -1, "x"]
    assert [x in out for x in probes] == [x in want for x in probes]
    assert stage(out) == "SetState"
    # The operands are unchanged, and so is the answer a second time (kept bitmaps).
    assert set(a) == set(a_ids) and set(b) == set(b_ids)
    assert set(OPS[op](a, b)) == want


@given(large_id_lists, large_id_lists, st.lists(st.integers(0, 5_000), max_size=30))
def test_a_bitmap_result_changes_as_any_set(a_ids, b_ids, changes):
    a, b = SparseSet.from_ids(a_ids), SparseSet.from_ids(b_ids)
    out = a | b
    model = set(a_ids) | set(b_ids)
    for k, x in enumerate(changes):
        if k % 2:
            out.discard(x)
            model.discard(x)
        else:
            out.add(x)  # past the capacity too: the index grows
            model.add(x)
        assert len(out) == len(model)
    assert set(out) == model
    # Algebra after the changes sees them (the kept bitmap is stale now).
    assert set(out & a) == model & set(a_ids)
    assert set(out - b) == model - set(b_ids)


def test_chained_algebra_stays_in_bitmaps():
    rng = np.random.default_rng(3)
    ids = rng.choice(100_000, 30_000, replace=False)
    a, b, c = (SparseSet.from_ids(part) for part in np.split(ids, [12_000, 20_000]))
    abc = (a | b) - c
    assert stage(abc) == "PendingMembers"
    assert abc == a | b
    assert set((a | b | c) & (b | c)) == set(b) | set(c)


def test_each_stage_answers_every_read():
    a = SparseSet.from_ids(range(0, 400, 2))
    b = SparseSet.from_ids(range(0, 400, 3))
    want = set(range(0, 400, 2)) & set(range(0, 400, 3))
    # Pickled, copied, compared and twinned straight from the bitmap.
    assert set(pickle.loads(pickle.dumps(a & b))) == want
    assert set((a & b).copy()) == want
    assert (a & b) == SparseSet.from_ids(sorted(want))
    assert (a & b) <= a and (a & b).isdisjoint(a - b)
    assert (a & b).nbytes > 0 and (a & b).capacity == a.capacity

    @njit
    def total(twin):
        s = 0
        for k in range(twin.size):
            s += twin.ids[k]
        return s, twin.contains(6), twin.contains(8)

    assert total((a & b).jit) == (sum(want), True, False)


def test_pending_states_build_once_under_threads():
    import threading

    for _ in range(20):
        state = PendingMembers(
            1_000, np.array([0b1011, 1 << 63] + [0] * 14, np.uint64), 4
        )
        answers = []

        def read(state=state, answers=answers):
            answers.append(state.contains_key(64 + 63))

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert answers == [True] * 4 and type(state) is SetState
        assert state.dense[: state.n].tolist() == [0, 1, 3, 127]


def test_sparse_or_small_sets_take_the_other_paths():
    small = SparseSet.from_ids(range(10))
    # One kernel call: the members, and the index when first needed.
    out = small & small
    assert stage(out) == "PendingIndex"
    assert 9 in out and 10 not in out and stage(out) == "SetState"
    # A few members in a huge id space: the bitmaps would not pay.
    spread = SparseSet.from_ids(np.arange(SMALL_ALGEBRA + 1) * 1_000_000)
    assert stage(spread | spread) == "SetState"
    assert set(spread | spread) == set(spread)
    # Other kinds have no bitmap.
    paged = SparseSet.from_ids(range(200), index="paged")
    assert stage(paged & paged) == "SetState"


@pytest.mark.parametrize("op", sorted(OPS))
def test_mixed_kinds_keep_the_left_kind(op):
    flat = SparseSet.from_ids(range(100, 300))
    hashed = SparseSet.from_ids(range(200, 500), index="hash")
    out = OPS[op](flat, hashed)
    assert out.kind == "flat"
    assert set(out) == OPS[op](set(range(100, 300)), set(range(200, 500)))


def test_pending_index_states_are_set_states():
    assert issubclass(PendingMembers, PendingIndex)
    assert issubclass(PendingIndex, SetState)


@given(
    large_id_lists,
    large_id_lists,
    st.lists(st.integers(0, 900), min_size=1, max_size=20),
)
def test_kept_bitmaps_answer_comparisons_until_a_change(a_ids, b_ids, extra):
    a, b = SparseSet.from_ids(a_ids), SparseSet.from_ids(b_ids)
    model_a, model_b = set(a_ids), set(b_ids)
    _ = a & b  # both keep their bitmaps now
    assert a._engine.member_bits(build=False) is not None
    for _round in range(2):
        assert (a <= b) == (model_a <= model_b)
        assert (b <= a) == (model_b <= model_a)
        assert (a == b) == (model_a == model_b)
        assert a.isdisjoint(b) == model_a.isdisjoint(model_b)
        assert (a <= (a | b)) and (a - b).isdisjoint(b)
        # A change makes the kept bitmap stale: the answers follow the set.
        for x in extra:
            a.add(x)
            model_a.add(x)
        b.discard(extra[0])
        model_b.discard(extra[0])


@given(
    st.lists(st.integers(0, 4_000), min_size=1, max_size=600, unique=True),
    st.lists(st.integers(0, 5_000), min_size=1, max_size=1_500),
    st.lists(st.integers(0, 4_000), max_size=20),
)
def test_contains_through_the_bitmap_follows_every_change(ids, probes, changes):
    s = SparseSet.from_ids(ids)
    model = set(ids)
    q = np.array(probes)
    for k in range(3):
        assert s.contains(q).tolist() == [x in model for x in probes]
        for x in changes[k::3]:
            if x % 2:
                s.discard(x)
                model.discard(x)
            else:
                s.add(x)
                model.add(x)
    with pytest.raises(ValueError, match="-3"):
        s.contains(np.array([*probes, -3]))


def test_contains_keeps_a_bitmap_only_where_it_pays():
    s = SparseSet.from_ids(np.arange(0, 1 << 20, 4))
    s.contains(np.arange(1 << 18))
    assert s._engine.member_bits(build=False) is not None
    few = SparseSet.from_ids([1, 1 << 30])
    assert few.contains([1, 2, 3]).tolist() == [True, False, False]
    assert few._engine.member_bits(build=False) is None


def test_a_rollback_drops_the_kept_bitmap():
    # A rollback brings back an (n, epoch) the set had with other members:
    # after checkpoint, discard(0), rollback and discard(1), n and epoch
    # are as they were after discard(0) alone.
    s = SparseSet(capacity=1_000)
    s.add(np.arange(5))
    token = s.checkpoint()
    s.discard(0)
    probes = np.arange(5).repeat(400)
    assert s.contains(probes)[::400].tolist() == [False, True, True, True, True]
    assert s._engine.member_bits(build=False) is not None
    s.rollback(token)
    s.discard(1)
    assert sorted(s.ids.tolist()) == [0, 2, 3, 4]
    assert s.contains(probes)[::400].tolist() == [True, False, True, True, True]
    assert s == SparseSet.from_ids([0, 2, 3, 4])
