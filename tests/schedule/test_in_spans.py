"""``in_spans``: a system's own loop cut into spans over the threads its
kernels may use, each row done once whatever the threads, serial when
small or on one thread, errors re-raised after every span ran."""

import itertools
import threading

import numpy as np
import pytest
from numba import njit

from sparseset import config
from sparseset.schedule import in_spans
from sparseset.schedule.schedule import kernel_threads


@njit(nogil=True)
def _add_one(x):
    for k in range(x.shape[0]):
        x[k] += 1.0


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(config, "PARALLEL_THRESHOLD", 64)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("count", [1, 63, 64, 1000, 4099])
def test_every_row_is_done_once(small_threshold, threads, count):
    x = np.zeros(count)
    spans = []
    lock = threading.Lock()

    def work(start, stop):
        with lock:
            spans.append((start, stop))
        _add_one(x[start:stop])

    with kernel_threads(threads):
        in_spans(count, work)
    assert (x == 1.0).all()
    spans.sort()
    assert spans[0][0] == 0 and spans[-1][1] == count
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    if threads == 1 or count < 64:
        assert spans == [(0, count)]  # serial: one call, on the caller
    else:
        assert len(spans) > 1


def test_nothing_to_do_calls_nothing():
    calls = []
    in_spans(0, lambda start, stop: calls.append((start, stop)))
    assert calls == []


@pytest.mark.parametrize("count", [-1, -100])
def test_a_negative_count_is_refused(count):
    with pytest.raises(ValueError, match=f"count={count}"):
        in_spans(count, lambda start, stop: None)


def test_an_error_in_a_span_is_raised_after_every_span_ran(small_threshold):
    done = []
    lock = threading.Lock()

    def work(start, stop):
        with lock:
            done.append((start, stop))
        if start == 0:
            raise KeyError("first span")

    with kernel_threads(2), pytest.raises(KeyError, match="first span"):
        in_spans(1000, work)
    assert sum(stop - start for start, stop in done) == 1000
