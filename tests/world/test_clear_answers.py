"""Cases that used to pass silently or misleadingly, each answered clearly.

A command on a closed buffer raises; a handle a deferred ``create`` handed
out says it is waiting to be created; nested ``deferred()`` blocks apply
at their own end (inside a schedule's system, both record into the
system's buffer).
"""

import numpy as np
import pytest

from sparseset import DeadHandleError, Schedule, World


def world_with_hp(n=3):
    w = World()
    w.register("hp", "i4")
    w.register("tag")
    e = w.create(n)
    w.add("hp", e, hp=np.arange(n))
    return w, e


RECORDINGS = {
    "destroy": lambda cmd, e: cmd.destroy(e[0]),
    "create": lambda cmd, e: cmd.create(2),
    "add": lambda cmd, e: cmd.add("tag", e[0]),
    "add_at": lambda cmd, e: cmd.add_at("hp", e[0], hp=1),
    "remove": lambda cmd, e: cmd.remove("hp", e[0]),
    "discard": lambda cmd, e: cmd.discard("hp", e[0]),
    "clear": lambda cmd, e: cmd.clear("hp"),
}


@pytest.mark.parametrize("op", sorted(RECORDINGS))
@pytest.mark.parametrize("how", ["block", "raised", "close"])
def test_a_command_on_a_closed_buffer_raises_and_changes_nothing(op, how):
    w, e = world_with_hp()
    if how == "block":
        with w.deferred() as cmd:
            pass
    elif how == "raised":
        with pytest.raises(RuntimeError), w.deferred() as cmd:
            raise RuntimeError("boom")
    else:
        cmd = w.deferred()
        cmd.destroy(e[1])
        cmd.close()  # drops what it held
    assert cmd.closed
    before = (len(w), len(w["hp"]), len(w["tag"]), w["hp"]["hp"].tolist())
    with pytest.raises(ValueError, match=rf"cmd\.{op}\(\.\.\.\) on a closed"):
        RECORDINGS[op](cmd, e)
    assert len(cmd) == 0
    assert (len(w), len(w["hp"]), len(w["tag"]), w["hp"]["hp"].tolist()) == before


def test_apply_and_drop_by_hand_leave_the_buffer_open_and_its_end_closes_it():
    w, e = world_with_hp()
    with w.deferred() as cmd:
        cmd.destroy(e[0])
        cmd.apply()
        assert not cmd.closed and len(w) == 2
        cmd.destroy(e[1])
        cmd.drop()
        cmd.destroy(e[2])
        assert not cmd.closed and len(w) == 2
    assert cmd.closed and w.alive(e).tolist() == [False, True, False]
    cmd.apply()  # closed: nothing left to apply
    cmd.close()  # closing twice is a no-op
    assert len(w) == 1


def test_a_block_whose_apply_raises_is_closed_too():
    w, e = world_with_hp()
    with pytest.raises(KeyError), w.deferred() as cmd:
        cmd.remove("tag", e[0])  # e[0] has no tag when applied
    assert cmd.closed


def test_a_schedules_buffer_closes_when_its_batch_ends():
    w, e = world_with_hp()
    kept = []
    sch = Schedule()

    @sch.system(reads=("hp",))
    def keep(world, commands):
        kept.append(commands)
        commands.destroy(e[len(kept) - 1])

    sch.run(w)
    assert len(w) == 2 and kept[0].closed
    with pytest.raises(ValueError, match="closed"):
        kept[0].destroy(e[2])
    sch.run(w)
    assert len(w) == 1 and kept[1] is not kept[0]


def test_a_pending_handle_says_it_waits_to_be_created():
    w, _ = world_with_hp()
    with w.deferred() as cmd:
        new = cmd.create(2)
        with pytest.raises(DeadHandleError) as raised:
            w.add("tag", new)
        message = str(raised.value)
        assert "not created yet" in message and "destroyed" not in message
        assert "cmd.add" in message and "with block ends" in message
        with pytest.raises(DeadHandleError, match="not created yet"):
            w["tag"].add(new[1])
        cmd.add("tag", new)  # what the message advises
    assert w.has("tag", new).tolist() == [True, True]


def test_a_released_pending_handle_reads_as_destroyed():
    w, _ = world_with_hp()
    cmd = w.deferred()
    new = cmd.create(1)
    cmd.drop()
    with pytest.raises(DeadHandleError, match="was destroyed"):
        w.add("tag", new)


def test_nested_blocks_apply_at_their_own_end():
    w, e = world_with_hp()
    with w.deferred() as outer:
        outer.destroy(e[0])
        with w.deferred() as inner:
            assert inner is not outer
            inner.destroy(e[1])
            assert w.alive(e).tolist() == [True, True, True]
        # The inner block has ended and applied; the outer has not.
        assert w.alive(e).tolist() == [True, False, True]
        assert inner.closed and not outer.closed
    assert w.alive(e).tolist() == [False, False, True]


def test_nested_blocks_in_a_system_record_into_its_buffer():
    w, e = world_with_hp()
    seen = []
    sch = Schedule()

    @sch.system(reads=("hp",))
    def nest(world):
        with world.deferred() as outer, world.deferred() as inner:
            inner.destroy(e[1])
        seen.append((outer is inner, world.alive(e).tolist()))

    sch.run(w)
    assert seen == [(True, [True, True, True])]
    assert w.alive(e).tolist() == [True, False, True]
