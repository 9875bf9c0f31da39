"""SetArray: many small sets with one trail, from Python and from @njit code.

A state machine drives a SetArray against a model (a list of Python sets and
a stack of snapshots), removing, assigning, checkpointing and rolling back
from Python and from compiled code in turn; after every step each set must
equal its model and every row must still be a permutation of the universe
with its index pointing at it (removals only swap).
"""

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from numba import njit

from sparseset import Checkpoint, SetArray, SparseSet
from sparseset.jit import SetArrayState


@njit
def remove_pairs(sa, sets, values):
    removed = 0
    for j in range(sets.shape[0]):
        removed += sa.remove(sets[j], values[j])
    return removed


@njit
def assign(sa, k, v):
    return sa.assign(k, v)


@njit
def checkpoint(sa):
    return sa.checkpoint()


@njit
def rollback(sa, token):
    return sa.rollback(token)


@njit
def contains(sa, k, v):
    return sa.contains(k, v)


@njit
def size_and_values(sa, k):
    return sa.size(k), sa.values(k).copy()


COUNT, UNIVERSE = 5, 7


class SetArrayMachine(RuleBasedStateMachine):
    """Tokens are live until a rollback to an older one or a fill; rolling
    back to a live one restores every set it saw, to a dead one raises."""

    def __init__(self):
        super().__init__()
        self.sa = SetArray(COUNT, UNIVERSE)
        self.model = [set(range(UNIVERSE)) for _ in range(COUNT)]
        self.tokens: list[tuple[object, list[set[int]], bool]] = []

    pairs = st.lists(
        st.tuples(st.integers(0, COUNT - 1), st.integers(0, UNIVERSE - 1)),
        max_size=10,
    )

    def _snapshot(self):
        return [set(m) for m in self.model]

    @rule(pairs=pairs, compiled=st.booleans())
    def remove(self, pairs, compiled):
        sets = np.array([k for k, _ in pairs], np.int64)
        values = np.array([v for _, v in pairs], np.int64)
        expected = 0
        for k, v in pairs:
            if v in self.model[k]:
                self.model[k].remove(v)
                expected += 1
        if compiled:
            assert remove_pairs(self.sa.jit, sets, values) == expected
        else:
            assert self.sa.remove(sets, values) == expected

    @rule(k=st.integers(0, COUNT - 1), v=st.integers(0, UNIVERSE - 1))
    def assign(self, k, v):
        before = self.model[k]
        self.model[k] = {v} & before
        assert assign(self.sa.jit, k, v) == len(before) - len(self.model[k])

    @rule(compiled=st.booleans())
    def checkpoint(self, compiled):
        token = checkpoint(self.sa.jit) if compiled else self.sa.checkpoint()
        self.tokens.append((token, self._snapshot(), True))

    @precondition(lambda self: self.tokens)
    @rule(data=st.data(), compiled=st.booleans())
    def rollback(self, data, compiled):
        k = data.draw(st.integers(0, len(self.tokens) - 1))
        token, snapshot, live = self.tokens[k]
        if live:
            if compiled:
                assert rollback(self.sa.jit, token) is True
            else:
                self.sa.rollback(token)
            self.model = [set(m) for m in snapshot]
            self.tokens = [
                (t, m, alive and j <= k) for j, (t, m, alive) in enumerate(self.tokens)
            ]
        elif compiled:
            # In @njit code a dead token restores nothing and says so.
            assert rollback(self.sa.jit, token) is False
        else:
            with pytest.raises(ValueError):
                self.sa.rollback(token)

    @rule()
    def fill(self):
        self.sa.fill()
        self.model = [set(range(UNIVERSE)) for _ in range(COUNT)]
        self.tokens = [(t, m, False) for t, m, _ in self.tokens]

    @invariant()
    def matches_the_model(self):
        sa = self.sa
        assert sa.sizes.tolist() == [len(m) for m in self.model]
        for k, members in enumerate(self.model):
            assert set(sa.members(k).tolist()) == members
            size, values = size_and_values(sa.jit, k)
            assert size == len(members) and set(values.tolist()) == members
        everything = np.repeat(np.arange(COUNT), UNIVERSE)
        values = np.tile(np.arange(UNIVERSE), COUNT)
        expected = [v in self.model[k] for k, v in zip(everything, values, strict=True)]
        assert sa.contains(everything, values).tolist() == expected
        # Removals only swap: each row stays a permutation its index follows.
        dense, sparse = sa._dense, sa._sparse
        for k in range(COUNT):
            assert sorted(dense[k].tolist()) == list(range(UNIVERSE))
            assert np.array_equal(sparse[k, dense[k]], np.arange(UNIVERSE))


def test_set_array_state_machine():
    run_state_machine_as_test(SetArrayMachine)


def test_rollback_restores_all_sets_in_one_step():
    sa = SetArray(3, 5)
    outer = sa.checkpoint()
    sa.remove([0, 1, 2], [4, 4, 4])
    inner = sa.checkpoint()
    sa.remove([0, 0, 2], [0, 1, 3])
    assert sa.sizes.tolist() == [2, 4, 3]
    assert sa.trail_length == 6
    sa.rollback(inner)
    assert sa.sizes.tolist() == [4, 4, 4] and sa.trail_length == 3
    sa.rollback(outer)
    assert sa.sizes.tolist() == [5, 5, 5] and sa.trail_length == 0
    with pytest.raises(ValueError, match="not a live checkpoint"):
        sa.rollback(inner)  # dropped by the rollback to the older one


def test_a_token_of_another_set_array_is_refused():
    a, b = SetArray(2, 3), SetArray(2, 3)
    token = a.checkpoint()
    with pytest.raises(ValueError, match="not a live checkpoint"):
        b.rollback(token)
    assert rollback(b.jit, tuple(token)) is False
    for bad in (None, (1, 2), "token"):
        with pytest.raises(ValueError):
            b.rollback(bad)


def test_tokens_are_checkpoints_with_owners_from_the_one_counter():
    sa, s = SetArray(2, 3), SparseSet.from_ids([1])
    token, set_token = sa.checkpoint(), s.checkpoint()
    assert type(token) is Checkpoint and token.serial == 0
    assert token.owner != set_token.owner
    with pytest.raises(ValueError, match="not a live checkpoint"):
        sa.rollback(set_token)
    with pytest.raises(ValueError, match="not a live checkpoint"):
        s.rollback(token)
    sa.rollback(tuple(np.int64(v) for v in token))  # numpy integers too


def test_the_state_answers_from_python_as_in_njit_code():
    sa = SetArray(2, 3)
    state = sa.jit
    assert isinstance(state, SetArrayState) and state is sa.jit
    token = state.checkpoint()
    assert state.remove(0, 1) and not state.remove(0, 1)
    assert not state.contains(0, 1) and state.contains(1, 1)
    assert state.size(0) == 2 and sorted(state.values(0).tolist()) == [0, 2]
    assert state.assign(1, 2) == 2 and sa.sizes.tolist() == [2, 1]
    assert state.rollback(token) and sa.sizes.tolist() == [3, 3]
    assert state.rollback((token[0] + 1, token[1], token[2])) is False


def test_fill_drops_every_checkpoint():
    sa = SetArray(2, 3)
    token = sa.checkpoint()
    sa.remove(0, 1)
    sa.fill()
    assert sa.sizes.tolist() == [3, 3] and sa.trail_length == 0
    with pytest.raises(ValueError):
        sa.rollback(token)


@pytest.mark.parametrize(
    ("sets", "values", "error", "match"),
    [
        ([0, 3], [1, 1], ValueError, r"sets\[1\] = 3 is outside \[0, 3\)"),
        ([0, 1], [1, 4], ValueError, r"values\[1\] = 4 is outside \[0, 4\)"),
        ([0, -1], [1, 1], ValueError, r"sets\[1\] = -1"),
        ([0], [1.5], TypeError, "integers"),
        ([0, 1], [True, 1], TypeError, "bool"),
        ([0, 1, 2], [1, 1], ValueError, "broadcast"),
    ],
)
def test_bad_batches_raise_and_change_nothing(sets, values, error, match):
    sa = SetArray(3, 4)
    sa.remove([2], [3])
    token = sa.checkpoint()
    for method in (sa.remove, sa.contains):
        with pytest.raises(error, match=match):
            method(sets, values)
    assert sa.sizes.tolist() == [4, 4, 3] and sa.trail_length == 1
    sa.rollback(token)


def test_values_broadcast_against_sets():
    sa = SetArray(4, 6)
    assert sa.remove(np.arange(4), 5) == 4
    assert sa.contains(2, np.arange(6)).tolist() == [True] * 5 + [False]
    assert sa.remove([], []) == 0


@pytest.mark.parametrize(("count", "universe"), [(-1, 3), (3, 2**31), (2, -5)])
def test_sizes_outside_the_range_are_refused(count, universe):
    with pytest.raises(ValueError, match="outside"):
        SetArray(count, universe)


@pytest.mark.parametrize(("count", "universe"), [(2.0, 3), (2, "3"), (True, 3)])
def test_sizes_must_be_integers(count, universe):
    with pytest.raises(TypeError, match="must be an integer"):
        SetArray(count, universe)


def test_empty_set_array():
    sa = SetArray(0, 0)
    assert sa.count == 0 and len(sa) == 0 and sa.universe == 0
    assert sa.remove([], []) == 0
    sa.rollback(sa.checkpoint())


def test_members_and_sizes_are_read_only_views():
    sa = SetArray(2, 3)
    for view in (sa.sizes, sa.members(0)):
        with pytest.raises(ValueError):
            view[0] = 9
    with pytest.raises(IndexError, match="set 2 is outside"):
        sa.members(2)
    with pytest.raises(TypeError):
        sa.members(1.0)


@njit
def size_of(sa, k):
    return sa.size(k), sa.values(k).shape[0], sa.assign(k, 0)


def test_compiled_code_reads_bad_numbers_as_absent():
    """In @njit code a value outside [0, universe) or a set number outside
    [0, count) is simply not there: never a read or write past the arrays,
    and no raise (which would slow every call)."""
    sa = SetArray(2, 3)
    assert not contains(sa.jit, 0, 3) and not contains(sa.jit, 1, -1)
    assert remove_pairs(sa.jit, np.array([0, 1]), np.array([3, 10**9])) == 0
    for k in (2, -1, 2**40):
        assert not contains(sa.jit, k, 0)
        assert remove_pairs(sa.jit, np.array([k]), np.array([0])) == 0
        assert size_of(sa.jit, k) == (0, 0, 0)
    assert sa.sizes.tolist() == [3, 3] and sa.trail_length == 0
    empty = SetArray(0, 4)
    assert size_of(empty.jit, 0) == (0, 0, 0)


def test_the_trail_holds_every_value_of_every_set():
    sa = SetArray(50, 50)
    token = sa.checkpoint()
    sets = np.repeat(np.arange(50), 49)
    values = np.tile(np.arange(49), 50)
    assert sa.remove(sets, values) == 50 * 49
    inner = sa.checkpoint()
    assert sa.remove(np.arange(50), 49) == 50  # now every value is trailed
    assert sa.sizes.tolist() == [0] * 50 and sa.trail_length == 2500
    sa.rollback(inner)
    assert sa.sizes.tolist() == [1] * 50
    sa.rollback(token)
    assert sa.sizes.tolist() == [50] * 50
