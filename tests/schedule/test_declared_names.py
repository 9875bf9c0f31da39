"""A system's declared components must be the world's: a typo raises
``ValueError`` naming it when the schedule first runs against a world, and
nothing runs; names in ``after``/``before`` must be systems."""

import pytest

from sparseset import Schedule, World


def world_of(*names):
    w = World()
    for name in names:
        w.register(name, "f8")
    return w


@pytest.mark.parametrize("threads", [1, 2])
def test_unknown_components_raise_naming_each_and_nothing_runs(threads):
    ran = []
    sch = Schedule()
    sch.add(lambda world: ran.append("a"), reads=("pos",), name="a")
    sch.add(lambda world: ran.append("b"), writes=("nope",), name="b")
    sch.add(lambda world: ran.append("c"), reads=("vel", "pso"), name="c")
    with pytest.raises(ValueError) as raised:
        sch.run(world_of("pos", "vel"), threads=threads)
    message = str(raised.value)
    assert "system 'b' writes 'nope'" in message
    assert "system 'c' reads 'pso'" in message
    assert "'a'" not in message and "'vel'" not in message.split("components")[0]
    assert "['pos', 'vel']" in message and "nothing ran" in message
    assert ran == []


def test_the_check_is_per_world_and_sees_components_registered_since():
    sch = Schedule()
    sch.add(lambda world: None, writes=("hp",), name="hurt")
    good, bad = world_of("hp"), world_of()
    sch.run(good)
    with pytest.raises(ValueError, match="'hp'"):
        sch.run(bad)
    bad.register("hp", "f8")
    sch.run(bad)
    # A system added later is checked on the next run, on each world.
    sch.add(lambda world: None, reads=("mana",), name="cast")
    with pytest.raises(ValueError, match="system 'cast' reads 'mana'"):
        sch.run(good)


def test_unknown_systems_in_after_and_before_raise():
    for role in ("after", "before"):
        sch = Schedule()
        sch.add(lambda world: None, name="a", **{role: "zz"})
        with pytest.raises(ValueError, match="'zz'"):
            sch.batches  # noqa: B018
        with pytest.raises(ValueError, match="'zz'"):
            sch.run(World())
