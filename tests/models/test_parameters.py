"""The models' shared pieces: the shuffled activation order.

``shuffle_order`` must draw every permutation equally often. The test
counts the 24 orders of 4 items over 24,000 seeds and compares with the
uniform by a chi-square statistic (23 degrees of freedom): its 1e-5 tail
is about 62, and an order drawn with the bias of a plain modulo or of
the naive "swap with any index" shuffle (whose 4**4 = 256 equally likely
paths cannot cover 24 orders evenly: chi-square in the thousands here)
fails far above it.
"""

from __future__ import annotations

import itertools

import numpy as np

from sparseset.models.parameters import shuffle_order


def test_every_order_is_equally_likely():
    index = {p: k for k, p in enumerate(itertools.permutations(range(4)))}
    counts = np.zeros(24)
    order = np.empty(4, np.int64)
    for seed in range(24_000):
        shuffle_order(order, seed)
        counts[index[tuple(order.tolist())]] += 1
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < 62.0, chi2


def test_a_seed_gives_one_permutation_of_every_row():
    a = np.empty(1000, np.int64)
    b = np.empty(1000, np.int64)
    shuffle_order(a, 12345)
    shuffle_order(b, 12345)
    assert np.array_equal(a, b)
    assert np.array_equal(np.sort(a), np.arange(1000))
    shuffle_order(b, 12346)
    assert not np.array_equal(a, b)
    for n in (0, 1):
        empty = np.empty(n, np.int64)
        shuffle_order(empty, 1)
        assert empty.tolist() == list(range(n))
