"""The command buffer twin (issue 26, item 5): structural changes recorded
in ``@njit`` code through ``cmd.jit`` and applied with the deferred block.

- Random programs of destroy / add (with and without values) / remove /
  discard, recorded from compiled code, give the world a plain model
  gives, and exactly what the same program recorded through the Python
  ``Commands`` gives (errors and their notes included): one path.
- Order with Python's commands, duplicates, growth past the first rows,
  row-shaped and several columns' values, handle arrays.
- Dead and never-created handles raise when applied, with ``Commands``'
  errors; a failing command stops the rest; a block that raises applies
  nothing and empties the twin.
- Hooks and change tracking see the applied commands.
- Compile-time errors for an unknown component or wrong values; the twin's
  type is cached across processes.

Bounds-checked: the NUMBA_BOUNDSCHECK=1 run covers the tests that record
(marked); the compile-time and cache tests need no second compile.
"""

import subprocess
import sys

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from numba import njit
from numba.core.errors import TypingError

from sparseset import DeadHandleError, World
from sparseset.jit.commands import CommandBuffer, make_command_buffer, take_recorded

NAMES = ("hp", "tag")
DESTROY, ADD, ADD_VALUE, REMOVE, DISCARD = range(5)


@njit
def record(buf, ops, comps, handles, values):
    """Record a program: one command per row, component 0 "hp", 1 "tag"."""
    for k in range(ops.shape[0]):
        op, h = ops[k], handles[k]
        if op == DESTROY:
            buf.destroy(h)
        elif op == ADD_VALUE:
            buf.add("hp", h, values[k])
        elif comps[k] == 0:
            if op == ADD:
                buf.add("hp", h)
            elif op == REMOVE:
                buf.remove("hp", h)
            else:
                buf.discard("hp", h)
        elif op == ADD:
            buf.add("tag", h)
        elif op == REMOVE:
            buf.remove("tag", h)
        else:
            buf.discard("tag", h)
    return len(buf)


def record_in_python(cmd, program):
    for op, comp, h, value in program:
        name = NAMES[comp]
        if op == DESTROY:
            cmd.destroy(h)
        elif op == ADD_VALUE:
            cmd.add("hp", h, hp=value)
        elif op == ADD:
            cmd.add(name, h)
        elif op == REMOVE:
            cmd.remove(name, h)
        else:
            cmd.discard(name, h)


def as_arrays(program):
    columns = list(zip(*program, strict=True)) if program else [()] * 4
    return tuple(np.array(c, dtype) for c, dtype in zip(columns, "qqqq", strict=True))


def new_world(track=False):
    """A world with hp (i8) and a tag, 8 live entities, 2 stale handles and
    one never created."""
    w = World()
    w.register("hp", "i8", track=track)
    w.register("tag", track=track)
    e = w.create(10)
    w.add("hp", e[:4], hp=np.arange(4) + 10)
    w.add("tag", e[2:6])
    w.destroy(e[8:])
    pool = [*e.tolist(), (7 << 32) | 123]
    return w, pool


def snapshot(w, pool):
    return (
        w.alive(np.array(pool)).tolist(),
        dict(zip(w["hp"].ids.tolist(), w["hp"]["hp"].tolist(), strict=True)),
        sorted(w["tag"].ids.tolist()),
    )


def apply_njit(w, program):
    with w.deferred() as cmd:
        assert record(cmd.jit, *as_arrays(program)) == len(program)


def apply_python(w, program):
    with w.deferred() as cmd:
        record_in_python(cmd, program)


def outcome(apply, program):
    w, pool = new_world()
    try:
        apply(w, program)
        error = None
    except Exception as caught:  # compared, type and message and notes
        error = (type(caught), str(caught), getattr(caught, "__notes__", []))
    return snapshot(w, pool), error


# -- a plain model: runs of one command on one component, each all or nothing


def runs_of(program):
    """(op, comp, [(handle, value)]) per run, as the buffer batches them."""
    runs = []
    for op, comp, h, value in program:
        key = (op, -1 if op == DESTROY else comp)
        if runs and runs[-1][:2] == key:
            runs[-1][2].append((h, value))
        else:
            runs.append((*key, [(h, value)]))
    return runs


def model_apply(pool, program):
    """The model's world after ``program``, applied up to its first run that
    would fail (and the length of that prefix)."""
    alive = {h for h in pool[:8]}
    comps = {"hp": {h: 10 + k for k, h in enumerate(pool[:4])}, "tag": set(pool[2:6])}
    done = 0
    for op, comp, items in runs_of(program):
        handles = [h for h, _ in items]
        name = NAMES[comp] if comp >= 0 else None
        if not all(h in alive for h in handles):
            break
        if op == REMOVE and not all(h in comps[name] for h in handles):
            break
        for h, value in items:
            if op == DESTROY:
                alive.discard(h)
                comps["hp"].pop(h, None)
                comps["tag"].discard(h)
            elif op == ADD_VALUE:
                comps["hp"][h] = value
            elif op == ADD and name == "hp":
                comps["hp"].setdefault(h, 0)
            elif op == ADD:
                comps["tag"].add(h)
            elif name == "hp":
                comps["hp"].pop(h, None)
            else:
                comps["tag"].discard(h)
        done += len(items)
    state = (
        [h in alive for h in pool],
        comps["hp"],
        sorted(comps["tag"]),
    )
    return state, done


commands = st.tuples(
    st.sampled_from([DESTROY, ADD, ADD_VALUE, REMOVE, DISCARD]),
    st.integers(0, 1),
    st.integers(0, 10),  # an index into the pool
    st.integers(-(2**40), 2**40),
)


@pytest.mark.boundscheck
@settings(max_examples=60)
@given(st.lists(commands, max_size=40))
def test_programs_recorded_in_njit_match_the_model_and_python_commands(raw):
    _, pool = new_world()
    program = [(op, comp, pool[i], value) for op, comp, i, value in raw]
    # The same program through Python's Commands: same world, same error.
    assert outcome(apply_njit, program) == outcome(apply_python, program)
    # Up to its first failing run, it is what the model says.
    expected, done = model_apply(pool, program)
    w, _ = new_world()
    apply_njit(w, program[:done])
    assert snapshot(w, pool) == expected


@pytest.mark.boundscheck
def test_commands_apply_in_recorded_order_with_pythons():
    w, pool = new_world()
    calls = []
    w.on_add("tag", lambda h: calls.append(("add tag", h.tolist())))
    w.on_remove("tag", lambda h: calls.append(("remove tag", h.tolist())))
    with w.deferred() as cmd:
        cmd.add("tag", pool[0])  # python
        record(cmd.jit, *as_arrays([(ADD, 1, pool[1], 0), (REMOVE, 1, pool[2], 0)]))
        cmd.remove("tag", pool[3])  # python, after compiled code's
        record(cmd.jit, *as_arrays([(ADD, 1, pool[2], 0)]))
        assert len(cmd) == 5  # a run recorded in njit code is one command
        assert calls == []  # nothing applied yet
    # Runs join across the two sides: one batch, one hook call each.
    assert calls == [
        ("add tag", [pool[0], pool[1]]),
        ("remove tag", [pool[2], pool[3]]),
        ("add tag", [pool[2]]),  # after its removal: pool[2] ends tagged
    ]
    assert sorted(w["tag"].ids.tolist()) == sorted([*pool[:3], *pool[4:6]])


@pytest.mark.boundscheck
def test_duplicates_count_once_in_a_run_and_the_last_value_wins():
    w, pool = new_world()
    program = [
        (DESTROY, 0, pool[6], 0),
        (DESTROY, 0, pool[6], 0),  # the same handle twice in one run: no error
        (ADD_VALUE, 0, pool[7], 1),
        (ADD_VALUE, 0, pool[7], 2),
        (ADD, 0, pool[0], 0),  # present: left as it was
        (ADD, 0, pool[5], 0),  # new: zero-filled
    ]
    apply_njit(w, program)
    assert not w.alive(pool[6]) and len(w) == 7
    assert w.get("hp", np.array([pool[7], pool[0], pool[5]]))["hp"].tolist() == [
        2,
        10,
        0,
    ]


@njit
def despawn_all(buf, handles, twice):
    for _ in range(twice):
        buf.destroy(handles)  # an array of handles
    return len(buf)


@pytest.mark.boundscheck
def test_many_commands_grow_the_twin_and_arrays_of_handles_record_each():
    w = World()
    w.register("hp", "i8")
    e = w.create(5000)
    with w.deferred() as cmd:
        assert despawn_all(cmd.jit, e, 2) == 10_000
    assert len(w) == 0
    # Values past the first rows, in order.
    w.register("pos", "f8", shape=(3,))
    w.register("body", {"mass": "f4", "kind": "i2"})
    e = w.create(100)

    @njit
    def spawn(buf, handles):
        for k in range(handles.shape[0]):
            buf.add("pos", handles[k], np.array([k, 2.0 * k, 3.0]))
            buf.add("body", handles[k], 0.5 * k, -k)
            buf.add("hp", handles[k], 1.5)  # cast as numba assigns: 1

    with w.deferred() as cmd:
        spawn(cmd.jit, e[::-1])
    assert w["pos"].ids.tolist() == e[::-1].tolist()
    got = w.get("pos", e)["pos"]
    assert got.tolist() == [[99 - k, 2.0 * (99 - k), 3.0] for k in range(100)]
    body = w.get("body", e)
    assert body["mass"].tolist() == [0.5 * (99 - k) for k in range(100)]
    assert body["kind"].tolist() == [-(99 - k) for k in range(100)]
    assert w.get("hp", e)["hp"].tolist() == [1] * 100


@pytest.mark.boundscheck
@pytest.mark.parametrize(
    ("program", "error", "match", "note"),
    [
        ([(DESTROY, 0, 8, 0)], ValueError, "dead", "destroy(...)"),
        ([(DESTROY, 0, 10, 0)], ValueError, None, "destroy(...)"),
        ([(ADD, 1, 9, 0)], DeadHandleError, None, "add('tag', ...)"),
        ([(ADD_VALUE, 0, 8, 5)], DeadHandleError, None, "add('hp', ...)"),
        ([(REMOVE, 0, 7, 0)], KeyError, None, "remove('hp', ...)"),
        ([(DISCARD, 1, 8, 0)], DeadHandleError, None, "discard('tag', ...)"),
    ],
)
def test_bad_handles_raise_when_applied_as_commands_do(program, error, match, note):
    w, pool = new_world()
    before = snapshot(w, pool)
    good = [(REMOVE, 1, pool[2], 0)]  # a run of its own before the bad one
    after_it = [(DESTROY, 0, pool[1], 0)]
    program = [(op, c, pool[i], v) for op, c, i, v in program]
    with pytest.raises(error, match=match) as info:
        apply_njit(w, good + program + after_it)
    assert any(note in n for n in info.value.__notes__)
    # The command before stays applied, the failing one and later ones not.
    state = snapshot(w, pool)
    assert state[2] == sorted(set(before[2]) - {pool[2]})
    assert state[0] == before[0] and state[1] == before[1]
    # Exactly the error Python's commands give.
    assert outcome(apply_njit, good + program) == outcome(apply_python, good + program)


def test_a_block_that_raises_applies_nothing_and_empties_the_twin():
    w, pool = new_world()
    before = snapshot(w, pool)
    with pytest.raises(ZeroDivisionError), w.deferred() as cmd:
        record(cmd.jit, *as_arrays([(DESTROY, 0, pool[0], 0), (ADD, 1, pool[1], 0)]))
        new = cmd.create(1)
        raise ZeroDivisionError
    assert snapshot(w, pool) == before and not w.alive(new[0])
    assert len(cmd.jit) == 0 and len(cmd) == 0
    # drop() by hand too, and the twin records again afterwards.
    cmd = w.deferred()
    record(cmd.jit, *as_arrays([(DESTROY, 0, pool[0], 0)]))
    cmd.drop()
    assert len(cmd.jit) == 0 and snapshot(w, pool) == before
    record(cmd.jit, *as_arrays([(DESTROY, 0, pool[0], 0)]))
    cmd.apply()
    assert not w.alive(pool[0])


def test_hooks_and_change_tracking_see_the_applied_commands():
    w, pool = new_world(track=True)
    hp, tag = w.reader("hp"), w.reader("tag")
    calls = []
    for name in NAMES:
        w.on_add(name, lambda h, name=name: calls.append(("add", name, h.tolist())))
        w.on_remove(
            name, lambda h, name=name: calls.append(("remove", name, h.tolist()))
        )
    program = [
        (ADD_VALUE, 0, pool[4], 7),  # new hp
        (ADD_VALUE, 0, pool[0], 8),  # replaced: changed, not added, no hook
        (ADD, 1, pool[7], 0),
        (REMOVE, 0, pool[1], 0),
        (DESTROY, 0, pool[2], 0),  # has hp and tag
    ]
    apply_njit(w, program)
    assert calls == [
        ("add", "hp", [pool[4]]),
        ("add", "tag", [pool[7]]),
        ("remove", "hp", [pool[1]]),
        ("remove", "hp", [pool[2]]),
        ("remove", "tag", [pool[2]]),
    ]
    assert sorted(hp.added().tolist()) == [pool[4]]
    assert sorted(hp.changed().tolist()) == sorted([pool[4], pool[0]])
    assert sorted(hp.removed().tolist()) == sorted([pool[1], pool[2]])
    assert tag.added().tolist() == [pool[7]] and tag.removed().tolist() == [pool[2]]


def test_compile_time_errors_name_the_component_or_the_values():
    w, _ = new_world()
    buf = w.deferred().jit

    @njit
    def unknown(buf):
        buf.add("vel", 1)

    @njit
    def too_many(buf):
        buf.add("hp", 1, 2.0, 3.0)

    @njit
    def tag_values(buf):
        buf.add("tag", 1, 2.0)

    @njit
    def float_handle(buf):
        buf.destroy(1.5)

    @njit
    def values_for_many(buf, handles):
        buf.add("hp", handles, 1)

    with pytest.raises(TypingError, match="no component 'vel'"):
        unknown(buf)
    with pytest.raises(TypingError, match="1 column"):
        too_many(buf)
    with pytest.raises(TypingError, match="0 column"):
        tag_values(buf)
    with pytest.raises(TypingError, match="takes a handle or a 1-D array"):
        float_handle(buf)
    with pytest.raises(TypingError, match="takes one handle"):
        values_for_many(buf, np.arange(2))
    assert len(buf) == 0


def test_the_twin_is_one_per_buffer_and_knows_the_components_of_its_time():
    w, _ = new_world()
    cmd = w.deferred()
    assert cmd.jit is cmd.jit and isinstance(cmd.jit, CommandBuffer)
    assert cmd.jit.components == ("hp", "tag")
    w.register("late")
    assert cmd.jit.components == ("hp", "tag")
    assert w.deferred().jit.components == ("hp", "tag", "late")
    assert "0 recorded" in repr(cmd.jit)


def test_take_recorded_empties_the_buffer_and_copies():
    buf = make_command_buffer([("hp", [(np.dtype("i8"), ())])])
    record_hp = njit(lambda buf, h, v: buf.add("hp", h, v))
    record_hp(buf, 5, 9)
    records, values = take_recorded(buf)
    record_hp(buf, 6, 10)  # overwrites the buffer's first rows
    assert records.tolist() == [[ADD_VALUE, 0, 5, 0]]
    assert values[0][0].tolist() == [9] and len(buf) == 1


def test_a_cached_system_taking_the_twin_loads_in_a_new_process(tmp_path):
    script = tmp_path / "despawns.py"
    script.write_text(
        "import numpy as np\n"
        "from numba import njit\n"
        "from sparseset import World\n"
        "@njit(cache=True)\n"
        "def despawn(hp, handles, buf):\n"
        "    for k in range(hp.shape[0]):\n"
        "        if hp[k] <= 0:\n"
        "            buf.destroy(handles[k])\n"
        "    buf.add('hp', handles[0], 3)\n"
        "    buf.remove('tag', handles[2])\n"
        "w = World(); w.register('hp', 'i4'); w.register('tag')\n"
        "e = w.create(3); w.add('hp', e, hp=[1, 0, 2]); w.add('tag', e)\n"
        "with w.deferred() as cmd:\n"
        "    despawn(w['hp']['hp'], w['hp'].ids, cmd.jit)\n"
        "print(len(w), len(despawn.stats.cache_hits))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["2", "0"]  # compiled and saved
    assert runs[1] == ["2", "1"]  # loaded: one cache hit, nothing compiled
