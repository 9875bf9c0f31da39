"""Recorder: what it records equals the world at each step, in memory and on disk.

Checked against a plain model: at every step the test copies the world's
state itself (handles and columns, the scalars) and the recorded tables
must hold exactly that; then ``every``, entities coming and going, a
Parquet round trip equal to the in-memory tables, pandas and polars
agreeing, and the errors (named, raised before anything is recorded).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparseset import Recorder, World


def wealth_world(n: int = 20, seed: int = 0) -> tuple[World, np.ndarray]:
    w = World()
    w.register("wealth", "i8")
    w.register("pos", "f8", shape=(2,))
    w.register("body", {"mass": "f4", "alive_for": "i4"})
    w.register("rich")
    e = w.create(n)
    rng = np.random.default_rng(seed)
    w.add("wealth", e, wealth=1)
    w.add("pos", e, pos=rng.random((n, 2)))
    w.add("body", e[::2], mass=rng.random(len(e[::2])), alive_for=0)
    return w, e


def boltzmann_step(w: World, rng: np.random.Generator) -> None:
    wealth = w["wealth"]["wealth"]
    givers = np.flatnonzero(wealth > 0)
    takers = rng.integers(0, len(wealth), len(givers))
    np.subtract.at(wealth, givers, 1)
    np.add.at(wealth, takers, 1)
    w["pos"]["pos"] += 0.1


def by_step(table: pa.Table) -> dict[int, dict[str, list]]:
    rows: dict[int, dict[str, list]] = {}
    for record in table.to_pylist():
        step = record.pop("step")
        for name, value in record.items():
            rows.setdefault(step, {}).setdefault(name, []).append(value)
    return rows


def test_the_recorded_values_are_the_world_at_each_step():
    w, _ = wealth_world()
    rng = np.random.default_rng(1)
    rec = Recorder(
        w,
        model={"total": lambda w: int(w["wealth"]["wealth"].sum()), "n": len},
        agents={"wealth": "wealth", "x": ("pos", "pos")},
    )
    expected_model, expected_agents = [], {}
    for step in range(6):
        assert rec.collect() is True
        wealth = w["wealth"]
        expected_model.append(
            {"step": step, "total": int(wealth["wealth"].sum()), "n": len(w)}
        )
        expected_agents[step] = {
            "handle": wealth.ids.tolist(),
            "wealth": wealth["wealth"].tolist(),
            "x": w["pos"]["pos"].tolist(),
        }
        boltzmann_step(w, rng)
    assert rec.model_table().to_pylist() == expected_model
    assert by_step(rec.agent_table()) == expected_agents
    assert rec.steps.tolist() == list(range(6))
    assert rec.agent_table().column_names == ["step", "handle", "wealth", "x"]


def test_a_record_is_a_copy_later_writes_do_not_change():
    w, _ = wealth_world(5)
    rec = Recorder(w, agents={"wealth": "wealth"})
    rec.collect()
    w["wealth"]["wealth"][:] = 99
    rec.collect()
    frame = rec.agent_frame()
    assert frame[frame.step == 0].wealth.tolist() == [1] * 5
    assert frame[frame.step == 1].wealth.tolist() == [99] * 5


@pytest.mark.parametrize("every", [1, 2, 3, 7])
def test_every_k_records_steps_0_k_2k(every):
    w, _ = wealth_world(4)
    rec = Recorder(w, every=every, model={"n": len}, agents={"w": "wealth"})
    answers = [rec.collect() for _ in range(15)]
    expected = [s for s in range(15) if s % every == 0]
    assert [s for s, a in enumerate(answers) if a] == expected
    assert rec.model_table().column("step").to_pylist() == expected
    assert sorted(set(rec.agent_table().column("step").to_pylist())) == expected


def test_explicit_steps_honour_every_and_must_increase():
    w, _ = wealth_world(2)
    rec = Recorder(w, every=10, model={"n": len})
    assert [rec.collect(step=s) for s in (0, 5, 10, 30, 31)] == [
        True,
        False,
        True,
        True,
        False,
    ]
    assert rec.steps.tolist() == [0, 10, 30]
    with pytest.raises(ValueError, match="step 31 does not follow"):
        rec.collect(step=31)
    with pytest.raises(TypeError, match="step must be an int"):
        rec.collect(step=40.0)
    assert rec.collect() is False  # the one after 31: 32
    assert rec.collect(step=40) is True
    assert rec.steps.tolist() == [0, 10, 30, 40]


def test_entities_created_and_destroyed_appear_and_disappear():
    w, e = wealth_world(6)
    rec = Recorder(w, agents={"wealth": "wealth"})
    rec.collect()
    w.destroy(e[:2])
    rec.collect()
    new = w.create(3)
    w.add("wealth", new, wealth=7)
    rec.collect()
    rec.collect()  # nothing changed: the same handles again
    steps = by_step(rec.agent_table())
    assert steps[0]["handle"] == e.tolist()
    assert sorted(steps[1]["handle"]) == sorted(e[2:].tolist())
    assert sorted(steps[2]["handle"]) == sorted([*e[2:].tolist(), *new.tolist()])
    assert steps[3] == steps[2]
    assert sorted(steps[2]["wealth"]) == [1, 1, 1, 1, 7, 7, 7]


def test_a_recycled_index_gets_its_new_handle():
    w = World()
    w.register("x", "f8")
    e = w.create(3)
    w.add("x", e, x=1.0)
    rec = Recorder(w, agents={"x": "x"})
    rec.collect()
    w.destroy(e[1])
    (again,) = w.create(1)
    w.add("x", again, x=2.0)  # same index as e[1], a new generation
    rec.collect()
    steps = by_step(rec.agent_table())
    assert again not in steps[0]["handle"]
    assert again in steps[1]["handle"] and e[1] not in steps[1]["handle"]


def test_several_components_record_the_entities_holding_all_of_them():
    w, e = wealth_world(10)
    rec = Recorder(w, agents={"wealth": "wealth", "mass": "mass"})
    rec.collect()
    table = rec.agent_table()
    holders = e[::2]
    assert sorted(table.column("handle").to_pylist()) == sorted(holders.tolist())
    for record in table.to_pylist():
        got = w.get("body", record["handle"])
        assert record["mass"] == pytest.approx(float(got["mass"]))
        assert record["wealth"] == int(w.get("wealth", record["handle"])["wealth"])


def test_of_names_the_agents_and_callables_see_their_handles():
    w, e = wealth_world(6)
    w.add("rich", e[[1, 4]])
    seen = []

    def double(world, handles):
        seen.append(handles.copy())
        return world.get("wealth", handles)["wealth"] * 2

    rec = Recorder(w, agents={"double": double}, of="rich")
    rec.collect()
    assert seen[0].tolist() == e[[1, 4]].tolist()
    assert rec.agent_table().to_pydict() == {
        "step": [0, 0],
        "handle": e[[1, 4]].tolist(),
        "double": [2, 2],
    }


def test_with_no_components_the_agents_are_every_live_entity():
    w, e = wealth_world(4)
    rec = Recorder(w, agents={"one": lambda world, h: np.ones(len(h))})
    w.destroy(e[0])
    rec.collect()
    assert rec.agent_table().column("handle").to_pylist() == e[1:].tolist()


def test_a_model_object_is_what_model_reporters_get():
    class Model:
        def __init__(self):
            self.world, _ = wealth_world(3)
            self.temperature = 2.5

        def gini(self):
            return 0.25

    m = Model()
    rec = Recorder(
        m,
        model={"t": "temperature", "gini": "gini", "n": lambda m: len(m.world)},
        agents={"w": "wealth"},
    )
    assert rec.world is m.world
    rec.collect()
    assert rec.model_table().to_pylist() == [
        {"step": 0, "t": 2.5, "gini": 0.25, "n": 3}
    ]


def test_parquet_round_trip_equals_memory(tmp_path):
    def run(path):
        w, e = wealth_world(12, seed=3)
        rng = np.random.default_rng(4)
        rec = Recorder(
            w,
            every=2,
            model={"total": lambda w: int(w["wealth"]["wealth"].sum())},
            agents={"wealth": "wealth", "pos": "pos", "mass": ("body", "mass")},
            path=path,
            flush_rows=20,  # a file every couple of recorded steps
        )
        for step in range(9):
            rec.collect()
            boltzmann_step(w, rng)
            if step == 4:
                w.destroy(e[:2])
        rec.close()
        return rec

    memory = run(None)
    disk = run(tmp_path / "run")
    assert len(list((tmp_path / "run" / "agents").iterdir())) > 1
    assert disk.model_table().equals(memory.model_table())
    assert disk.agent_table().equals(memory.agent_table())
    pd.testing.assert_frame_equal(disk.agent_frame(), memory.agent_frame())
    # Any Parquet reader reads the dataset.
    import pyarrow.parquet as pq

    read = pq.read_table(tmp_path / "run" / "agents")
    assert read.num_rows == memory.agent_table().num_rows


def test_pandas_and_polars_frames_agree():
    w, _ = wealth_world(8)
    rng = np.random.default_rng(0)
    rec = Recorder(
        w,
        model={"total": lambda w: int(w["wealth"]["wealth"].sum())},
        agents={"w": "wealth"},
    )
    for _ in range(4):
        rec.collect()
        boltzmann_step(w, rng)
    for table, frame in ((rec.model_frame, "model"), (rec.agent_frame, "agent")):
        pandas_frame = table(kind="pandas")
        polars_frame = table(kind="polars")
        assert isinstance(pandas_frame, pd.DataFrame), frame
        assert isinstance(polars_frame, pl.DataFrame), frame
        pd.testing.assert_frame_equal(polars_frame.to_pandas(), pandas_frame)


def test_a_flush_in_memory_and_reads_in_between_keep_every_step():
    w, _ = wealth_world(3)
    rec = Recorder(w, agents={"w": "wealth"})
    rec.collect()
    first = rec.agent_table()
    rec.collect()
    rec.flush()
    rec.collect()
    assert first.num_rows == 3
    assert rec.agent_table().column("step").to_pylist() == [0] * 3 + [1] * 3 + [2] * 3


def test_an_empty_recorder_reads_as_empty_tables(tmp_path):
    w, _ = wealth_world(2)
    for path in (None, tmp_path / "empty"):
        rec = Recorder(w, model={"n": len}, agents={"w": "wealth"}, path=path)
        assert rec.agent_table().column_names == ["step", "handle", "w"]
        assert rec.agent_table().num_rows == 0
        assert rec.model_table().num_rows == 0


# -- errors -------------------------------------------------------------------


def test_unknown_names_raise_naming_them_and_what_exists():
    w, _ = wealth_world(2)
    with pytest.raises(ValueError, match=r"'nope'.*available: wealth \(wealth\)"):
        Recorder(w, agents={"x": "nope"})
    with pytest.raises(ValueError, match=r"no component 'nope'.*pos \(pos\)"):
        Recorder(w, agents={"x": ("nope", "pos")})
    with pytest.raises(ValueError, match=r"'body' has no column 'weight'.*mass"):
        Recorder(w, agents={"x": ("body", "weight")})
    with pytest.raises(ValueError, match=r"'body' has 2 columns.*mass, alive_for"):
        Recorder(w, agents={"x": "body"})
    with pytest.raises(ValueError, match=r"of=: no component 'ghost'.*wealth"):
        Recorder(w, of="ghost")


def test_an_ambiguous_column_name_asks_for_the_component():
    w = World()
    w.register("a", {"v": "f8", "u": "f8"})
    w.register("b", {"v": "f8", "u": "f8"})
    with pytest.raises(ValueError, match=r"column 'v' is in components 'a', 'b'"):
        Recorder(w, agents={"v": "v"})
    rec = Recorder(w, agents={"v": "b.v", "u": ("a", "u")})
    w.add("a", w.create(1), v=1.0, u=2.0)
    rec.collect()
    assert rec.agent_table().num_rows == 0  # no entity holds both a and b


@pytest.mark.parametrize(
    ("every", "error"),
    [
        (0, ValueError),
        (-2, ValueError),
        (1.5, TypeError),
        (True, TypeError),
        ("2", TypeError),
    ],
)
def test_every_must_be_a_positive_int(every, error):
    with pytest.raises(error, match="every must be a positive int"):
        Recorder(World(), every=every)


def test_bad_reporter_forms_and_names_raise():
    w, _ = wealth_world(2)
    with pytest.raises(TypeError, match="model reporter 'x'"):
        Recorder(w, model={"x": 3})
    with pytest.raises(TypeError, match="agent reporter 'x'"):
        Recorder(w, agents={"x": 3})
    with pytest.raises(TypeError, match=r"\(component, column\)"):
        Recorder(w, agents={"x": ("wealth",)})
    with pytest.raises(ValueError, match="'step' is taken"):
        Recorder(w, model={"step": len})
    with pytest.raises(ValueError, match="'handle' is taken"):
        Recorder(w, agents={"handle": "wealth"})
    with pytest.raises(TypeError, match="World or a model"):
        Recorder(object())


def test_wrong_lengths_and_kinds_raise_naming_the_reporter_and_record_nothing():
    w, _ = wealth_world(4)
    answers = {"value": np.zeros(4)}
    rec = Recorder(
        w,
        model={"n": len},
        agents={"w": "wealth", "odd": lambda world, h: answers["value"]},
    )
    rec.collect()
    answers["value"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"agent reporter 'odd' returned 3 rows.*4"):
        rec.collect()
    answers["value"] = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError, match="agent reporter 'odd' returned dtype int32"):
        rec.collect()
    answers["value"] = 1.0
    with pytest.raises(ValueError, match="'odd' returned a scalar"):
        rec.collect()
    assert rec.steps.tolist() == [0]
    assert rec.model_table().num_rows == 1 and rec.agent_table().num_rows == 4
    answers["value"] = np.ones(4)
    assert rec.collect() is True  # the failed calls took no step
    assert rec.steps.tolist() == [0, 1]


def test_a_model_reporter_must_return_a_scalar():
    w, _ = wealth_world(2)
    rec = Recorder(w, model={"all": lambda w: w["wealth"]["wealth"]})
    with pytest.raises(ValueError, match="model reporter 'all' returned an array"):
        rec.collect()
    assert rec.steps.tolist() == []


def test_a_failing_reporter_is_named_in_a_note():
    w, _ = wealth_world(2)
    rec = Recorder(w, model={"boom": lambda w: 1 / 0})
    with pytest.raises(ZeroDivisionError) as caught:
        rec.collect()
    assert any("'boom'" in note for note in caught.value.__notes__)


def test_a_closed_recorder_records_no_more_but_reads(tmp_path):
    w, _ = wealth_world(2)
    with Recorder(w, model={"n": len}, path=tmp_path / "r") as rec:
        rec.collect()
    with pytest.raises(RuntimeError, match="closed"):
        rec.collect()
    assert rec.model_frame(kind="polars")["n"].to_list() == [2]
    with pytest.raises(ValueError, match="kind must be one of"):
        rec.model_frame(kind="excel")


def test_a_path_that_holds_files_is_refused(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "x").write_text("")
    with pytest.raises(FileExistsError, match="not an empty directory"):
        Recorder(World(), path=tmp_path / "old")


# -- a property: random runs against a plain model ------------------------------


@settings(deadline=None, max_examples=30)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["create", "destroy", "write", "step"]), st.integers(0, 5)
        ),
        max_size=25,
    ),
    st.integers(1, 3),
)
def test_random_runs_record_what_a_plain_model_sees(ops, every):
    w = World()
    w.register("v", "f8")
    rec = Recorder(w, every=every, agents={"v": "v"}, model={"n": len})
    expected: dict[int, dict[str, list]] = {}
    model = []
    step = 0
    counter = 0.0
    for op, k in ops:
        members = w["v"].ids
        if op == "create":
            h = w.create(k)
            w.add("v", h, v=np.arange(k) + counter)
            counter += 10
        elif op == "destroy" and len(members):
            w.destroy(members[: min(k, len(members))])
        elif op == "write":
            w["v"]["v"][:] += k
        else:
            if rec.collect():
                if len(w["v"]):
                    expected[step] = {
                        "handle": w["v"].ids.tolist(),
                        "v": w["v"]["v"].tolist(),
                    }
                model.append({"step": step, "n": len(w)})
            step += 1
    assert by_step(rec.agent_table()) == expected
    assert rec.model_table().to_pylist() == model


# -- optional dependencies ------------------------------------------------------


def _run(code: str) -> str:
    import os
    import subprocess
    import sys
    import textwrap

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=os.environ,
        check=True,
    )
    return done.stdout.strip()


def test_recording_imports_no_table_library_and_reading_needs_pyarrow():
    # Recording imports none of them; reading without pyarrow installed
    # is one line naming the extra.
    out = _run(
        """
        import sys
        import sparseset
        w = sparseset.World(); w.register("x", "f8"); w.add("x", w.create(3), x=1.0)
        rec = sparseset.Recorder(w, model={"n": len}, agents={"x": "x"})
        rec.collect(); rec.collect()
        print(sorted(m for m in ("pandas", "pyarrow", "polars") if m in sys.modules))
        sys.modules["pyarrow"] = None  # as if it were not installed
        try:
            rec.agent_frame()
        except ImportError as error:
            print(error)
        """
    )
    assert out.splitlines() == [
        "[]",
        'Recorder tables needs pyarrow: pip install "sparseset[arrow]"',
    ]
