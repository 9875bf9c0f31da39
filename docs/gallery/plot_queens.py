"""
N-queens by forward checking
============================

:func:`sparseset.examples.count_queens` counts the solutions of the
n-queens puzzle with a :class:`~sparseset.SetArray`: one set of free
columns per row, narrowed as queens are placed and restored in one
``rollback`` when the search backtracks (the solver is in
:doc:`../guide/njit`). Next to it, the same search in plain Python with a
list of Python sets per row, copied at every level as a Python solver
would; both are timed here, small, when this page is built.
"""

import time

import matplotlib.pyplot as plt

from sparseset.examples import count_queens


def python_queens(n: int, row: int = 0, free: list[set[int]] | None = None) -> int:
    """The same forward checking on Python sets, copied per level."""
    if free is None:
        free = [set(range(n)) for _ in range(n)]
    if row == n:
        return 1
    count = 0
    for column in sorted(free[row]):
        below = [set(s) for s in free]
        alive = True
        for r in range(row + 1, n):
            d = r - row
            below[r] -= {column, column + d, column - d}
            if not below[r]:
                alive = False
                break
        if alive:
            count += python_queens(n, row + 1, below)
    return count


def seconds(solve, n: int) -> float:
    start = time.perf_counter()
    solve(n)
    return time.perf_counter() - start


sizes = list(range(4, 10))
count_queens(4)  # loads the compiled solver before anything is timed
assert [count_queens(n) for n in sizes] == [python_queens(n) for n in sizes]
ours = [seconds(count_queens, n) for n in sizes]
theirs = [seconds(python_queens, n) for n in sizes]

figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.bar([str(n) for n in sizes], [count_queens(n) for n in sizes])
left.set(xlabel="n", ylabel="solutions", title="solutions of the n-queens puzzle")
right.semilogy(sizes, theirs, "o-", label="Python sets, copied per level")
right.semilogy(sizes, ours, "o-", label="SetArray twin, one rollback")
right.set(xlabel="n", ylabel="seconds (log scale)")
right.set_title("time to count them, measured at build time")
right.legend()
figure.tight_layout()
for n, a, b in zip(sizes, ours, theirs, strict=True):
    print(f"n={n}: {count_queens(n)} solutions, {b / a:.0f}x the Python solver")
