"""The worked examples: N-queens on SetArray, components with a set twin.

Each is checked against an independent answer: OEIS A000170 and a
brute-force count for the queens, a pure-Python union-find for the
components (``tests/naive.py``); and the asv suite's baselines
(``asv_bench/benchmarks/_solver_floor.py``) against the same answers.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import naive
from sparseset.examples import components, count_queens, random_graph

#: OEIS A000170: solutions of the n-queens puzzle, n = 1, 2, ...
A000170 = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200]


@pytest.mark.parametrize("n", range(1, 13))
def test_queens_on_set_array_match_oeis(n):
    assert count_queens(n) == A000170[n - 1]


@pytest.mark.parametrize("n", range(0, 8))
def test_queens_on_set_array_match_brute_force(n):
    assert count_queens(n) == naive.count_queens(n)


def test_queens_of_zero_is_the_empty_placement():
    assert count_queens(0) == naive.count_queens(0) == 1


def _csr(nodes, pairs):
    """An undirected graph in CSR form from a list of edges."""
    tails = np.array([a for a, b in pairs] + [b for a, b in pairs], np.int64)
    heads = np.array([b for a, b in pairs] + [a for a, b in pairs], np.int64)
    order = np.argsort(tails, kind="stable")
    indptr = np.zeros(nodes + 1, np.int64)
    np.cumsum(np.bincount(tails, minlength=nodes), out=indptr[1:])
    return indptr, heads[order]


@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))),
        )
    )
)
def test_components_agree_with_union_find(graph):
    nodes, pairs = graph
    indptr, indices = _csr(nodes, pairs)
    expected_count, expected = naive.components(indptr, indices)
    count, labels = components(indptr, indices)
    assert count == expected_count
    assert labels.tolist() == expected.tolist()
    # Labels are components: an edge never joins two labels.
    for a, b in pairs:
        assert expected[a] == expected[b]


def test_components_of_a_large_random_graph():
    indptr, indices = random_graph(20_000, 15_000, seed=3)
    count, labels = components(indptr, indices)
    expected_count, expected = naive.components(indptr, indices)
    assert count == expected_count and np.array_equal(labels, expected)
    assert 20_000 - 15_000 <= count < 20_000


def test_random_graph_is_symmetric_csr():
    indptr, indices = random_graph(50, 80, seed=1)
    assert indptr[0] == 0 and indptr[-1] == indices.size == 160
    edges = {(u, int(v)) for u in range(50) for v in indices[indptr[u] : indptr[u + 1]]}
    assert all((v, u) in edges for u, v in edges)


# -- the asv suite's baselines ------------------------------------------------


@pytest.fixture(scope="module")
def solver_floor():
    """``asv_bench/benchmarks/_solver_floor.py``, imported as asv imports it."""
    root = Path(__file__).resolve().parents[2] / "asv_bench"
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("benchmarks._solver_floor")
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "benchmarks"]:
            del sys.modules[name]


@pytest.mark.parametrize("n", range(0, 11))
def test_the_queens_baselines_match_oeis(solver_floor, n):
    expected = A000170[n - 1] if n else 1
    assert solver_floor.count_queens_bool(n) == expected
    if n <= 8:
        assert solver_floor.count_queens_python(n) == expected


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))),
        )
    )
)
def test_the_components_baselines_agree_with_union_find(solver_floor, graph):
    nodes, pairs = graph
    indptr, indices = _csr(nodes, pairs)
    expected_count, expected = naive.components(indptr, indices)
    for search in (solver_floor.components_bool, solver_floor.components_union_find):
        count, labels = search(indptr, indices)
        assert count == expected_count
        assert labels.tolist() == expected.tolist()
