"""Atomic calls on a World: threads that switch every microsecond
(:mod:`stress`) never share a handle, never misalign a row, and
views built meanwhile answer for a state that existed."""

from functools import partial

import numpy as np
import pytest

from sparseset import World
from stress import RUNS, run_threads

pytestmark = pytest.mark.boundscheck


def check_world(w, name):
    """Every row of ``name`` holds its own handle, and every handle lives."""
    store = w[name]
    handles = store.ids
    assert handles.shape[0] == len(set(handles.tolist()))
    assert bool(w.alive(handles).all())
    assert store[name].tolist() == handles.tolist()


@pytest.mark.parametrize("index", ["flat", "hash"])
def test_creates_and_adds_give_distinct_handles_and_aligned_rows(index):
    """4 threads x 200 x (create 100 + add): 80,000 distinct live handles,
    each row holding its own handle (the issue's second row)."""
    workers, rounds = 4, 200
    for _ in range(RUNS):
        w = World(index=index)
        w.register("tag", "i8")

        def work(w):
            made = []
            for _ in range(rounds):
                h = w.create(100)
                w.add("tag", h, tag=h)
                made.append(h)
            return np.concatenate(made)

        made = np.concatenate(run_threads([partial(work, w)] * workers))
        assert made.shape[0] == np.unique(made).shape[0] == workers * rounds * 100
        assert len(w) == len(w["tag"]) == made.shape[0]
        check_world(w, "tag")


def test_creates_destroys_and_component_changes_match_the_serial_counts():
    workers = 4
    for _ in range(RUNS):
        w = World()
        w.register("pos", "i8")
        w.register("vel", "i8")
        wrong = []

        def work(w, wrong):
            alive = []
            for i in range(150):
                h = w.create(12)
                w.add("pos", h, pos=h)
                w.add("vel", h[::2], vel=h[::2])
                alive.extend(h.tolist())
                if i % 2:
                    gone = alive[:10]
                    del alive[:10]
                    w.destroy(gone)
                    w.discard("vel", alive[:3])
                x = alive[-1]
                if not w.has("pos", x) or int(w.get("pos", x)["pos"]) != x:
                    wrong.append(x)
            return alive

        alive = run_threads([partial(work, w, wrong)] * workers)
        assert wrong == []
        expected = sorted(h for part in alive for h in part)
        assert sorted(w.entities.tolist()) == expected
        assert sorted(w["pos"].ids.tolist()) == expected
        check_world(w, "pos")
        check_world(w, "vel")


def test_views_and_groups_built_while_another_thread_writes_answer_for_a_real_state():
    """A writer replaces every row of "a" in one call (row = k * 10**6 +
    handle, k changing per call) and moves entities in and out of "b"; a
    view's rows never mix two calls' values, and under ``w.lock`` several
    calls see one state."""
    w = World()
    w.register("a", "i8")
    w.register("b", "i8")
    w.register("c", "i8")
    h = w.create(400)
    w.add("a", h, a=h)
    w.add("c", h, c=h)
    group = w.group("b", "c")
    mixed = []

    def write():
        for k in range(1, 200):
            w.add("a", h, a=k * 10**6 + h)
            w.add("b", h[k % 3 :: 3], b=h[k % 3 :: 3])
            w.discard("b", h[(k + 1) % 3 :: 3])

    def read():
        for i in range(150):
            view = w.view("a", "b")
            if len(set((view.rows("a") // 10**6).tolist())) > 1:
                mixed.append(i)
            with w.lock:
                rows, handles = view.rows("a"), view.ids
                assert (rows % 10**6).tolist() == handles.tolist()
                assert bool(w["b"].contains(group.ids).all())
                assert group["c"].tolist() == group.ids.tolist()

    run_threads([write, read])
    assert mixed == []
