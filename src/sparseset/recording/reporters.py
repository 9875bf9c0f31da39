"""What a Recorder records: reporters resolved and checked once, then run.

A model reporter gives one scalar per recorded step; an agent reporter
one value per agent (a component column, or a callable's array aligned
with the agents' handles). Everything a name or a spec can get wrong is
checked when the Recorder is made, so that a long run does not fail at
its first recorded step; what only a run can show (a callable's length,
dtype, or an exception) is reported naming the reporter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

#: The columns every table carries, in front of the reporters'.
STEP = "step"
HANDLE = "handle"


class Stores(Protocol):
    """A world as reporters read it."""

    @property
    def components(self) -> tuple[str, ...]: ...

    def __getitem__(self, name: str) -> Any: ...


@dataclass(frozen=True)
class ModelReporter:
    """One named scalar per recorded step: ``call(source)`` or an attribute."""

    name: str
    call: Callable[[Any], Any] | None
    attribute: str | None

    def report(self, source: Any) -> Any:
        """The reporter's value for ``source``, checked to be a scalar.

        A string names an attribute of the source; a method is called
        with no arguments. O(1) plus what the reporter costs.

        Raises
        ------
        ValueError
            If the value is not a scalar (a 0-d value).

        Examples
        --------
        >>> ModelReporter("n", len, None).report([1, 2])
        2
        """
        try:
            if self.call is not None:
                value = self.call(source)
            else:
                assert self.attribute is not None
                value = getattr(source, self.attribute)
                if callable(value):
                    value = value()
        except Exception as error:
            error.add_note(f"in model reporter {self.name!r}")
            raise
        if isinstance(value, np.ndarray | np.generic):
            if value.ndim != 0:
                raise ValueError(
                    f"model reporter {self.name!r} returned an array of shape "
                    f"{value.shape}; a model reporter returns one scalar"
                )
            return value.item()
        if isinstance(value, list | tuple | dict | set):
            raise ValueError(
                f"model reporter {self.name!r} returned a {type(value).__name__}; "
                "a model reporter returns one scalar"
            )
        return value


@dataclass(frozen=True)
class AgentReporter:
    """One value per agent: a component's column, or ``call(source, handles)``."""

    name: str
    component: str | None
    column: str | None
    call: Callable[[Any, np.ndarray], Any] | None


def _check_name(name: Any, table: str, reserved: tuple[str, ...]) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a {table} reporter's name is a non-empty str, not {name!r}")
    if name in reserved:
        raise ValueError(
            f"{table} reporter name {name!r} is taken by the table's own "
            f"{name!r} column; choose another"
        )
    return name


def model_reporters(specs: Mapping[str, Any] | None) -> list[ModelReporter]:
    """``model={name: callable or attribute name}`` as reporters, checked.

    O(r) for r reporters.

    Raises
    ------
    TypeError
        If ``specs`` is not a mapping, a name is not a str or a reporter
        neither a callable nor a str.
    ValueError
        If a name is ``"step"``.

    Examples
    --------
    >>> [r.name for r in model_reporters({"n": len, "size": "size"})]
    ['n', 'size']
    """
    if specs is None:
        return []
    if not isinstance(specs, Mapping):
        raise TypeError(
            f"model= takes a dict of name -> reporter, not {type(specs).__name__}"
        )
    found = []
    for name, spec in specs.items():
        name = _check_name(name, "model", (STEP,))
        if isinstance(spec, str):
            found.append(ModelReporter(name, None, spec))
        elif callable(spec):
            found.append(ModelReporter(name, spec, None))
        else:
            raise TypeError(
                f"model reporter {name!r}: give a callable of the model or the "
                f"name of one of its attributes, not {spec!r}"
            )
    return found


def _columns_of(world: Stores) -> dict[str, tuple[str, ...]]:
    return {name: tuple(world[name].columns) for name in world.components}


def _available(columns: dict[str, tuple[str, ...]]) -> str:
    listed = [
        f"{component} ({', '.join(names) or 'a tag: no columns'})"
        for component, names in columns.items()
    ]
    return "; ".join(listed) or "(no components registered)"


def _resolve(
    name: str, spec: str | tuple[Any, ...], columns: dict[str, tuple[str, ...]]
) -> tuple[str, str]:
    """``spec`` -> ``(component, column)``, or ValueError naming what exists."""
    if isinstance(spec, tuple):
        if len(spec) != 2 or not all(isinstance(part, str) for part in spec):
            raise TypeError(
                f"agent reporter {name!r}: a tuple names (component, column), "
                f"not {spec!r}"
            )
        component, column = spec
        if component not in columns:
            raise ValueError(
                f"agent reporter {name!r}: no component {component!r} in this "
                f"world; available: {_available(columns)}"
            )
        if column not in columns[component]:
            raise ValueError(
                f"agent reporter {name!r}: component {component!r} has no column "
                f"{column!r}; its columns: "
                f"{', '.join(columns[component]) or '(none: a tag)'}"
            )
        return component, column
    # A string: a one-column component, else the one component with such
    # a column.
    if spec in columns and len(columns[spec]) == 1:
        return spec, columns[spec][0]
    holders = [component for component, names in columns.items() if spec in names]
    if len(holders) == 1:
        return holders[0], spec
    if len(holders) > 1:
        raise ValueError(
            f"agent reporter {name!r}: column {spec!r} is in components "
            f"{', '.join(map(repr, holders))}; name one as (component, column)"
        )
    # "component.column", as World.to_arrow names a column of a
    # many-column component.
    component, dot, column = spec.rpartition(".")
    if dot and column in columns.get(component, ()):
        return component, column
    if spec in columns:
        raise ValueError(
            f"agent reporter {name!r}: component {spec!r} has "
            f"{len(columns[spec])} columns, not one; name one as "
            f"({spec!r}, column) among: {', '.join(columns[spec]) or '(none: a tag)'}"
        )
    raise ValueError(
        f"agent reporter {name!r}: no component or column {spec!r} in this "
        f"world; available: {_available(columns)}"
    )


def agent_reporters(
    specs: Mapping[str, Any] | None, world: Stores
) -> list[AgentReporter]:
    """``agents={name: spec}`` as reporters, each name resolved in ``world``.

    A spec is a column (a one-column component's name, a column name
    that one component has, or ``"component.column"``), a ``(component,
    column)`` tuple, or a callable ``f(source, handles)`` returning one
    value per handle.
    O(r + c) for r reporters and c components.

    Raises
    ------
    TypeError
        If ``specs`` is not a mapping, a name is not a str or a spec is
        none of the above.
    ValueError
        If a name is ``"step"`` or ``"handle"``, or a spec names a
        component or column the world does not have (the message lists
        those it has).

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("wealth", "i8"); w.register("body", {"mass": "f4"})
    >>> [(r.component, r.column) for r in agent_reporters(
    ...     {"w": "wealth", "m": "mass", "b": ("body", "mass"), "d": "body.mass"}, w)]
    [('wealth', 'wealth'), ('body', 'mass'), ('body', 'mass'), ('body', 'mass')]
    """
    if specs is None:
        return []
    if not isinstance(specs, Mapping):
        raise TypeError(
            f"agents= takes a dict of name -> reporter, not {type(specs).__name__}"
        )
    columns = _columns_of(world)
    found = []
    for name, spec in specs.items():
        name = _check_name(name, "agent", (STEP, HANDLE))
        if isinstance(spec, str | tuple):
            component, column = _resolve(name, spec, columns)
            found.append(AgentReporter(name, component, column, None))
        elif callable(spec):
            found.append(AgentReporter(name, None, None, spec))
        else:
            raise TypeError(
                f"agent reporter {name!r}: give a column name, a (component, "
                f"column) tuple or a callable f(source, handles), not {spec!r}"
            )
    return found


def agent_components(
    of: Any, reporters: list[AgentReporter], world: Stores
) -> tuple[str, ...]:
    """The components whose entities are the agents: ``of``, then the reporters'.

    O(r + c) for r reporters and c components.

    Raises
    ------
    TypeError
        If ``of`` is not a str or a sequence of str.
    ValueError
        If ``of`` names a component the world does not have.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("a", "f8"); w.register("b")
    >>> agent_components("b", agent_reporters({"x": "a"}, w), w)
    ('b', 'a')
    """
    if of is None:
        named: tuple[Any, ...] = ()
    elif isinstance(of, str):
        named = (of,)
    else:
        try:
            named = tuple(of)
        except TypeError:
            raise TypeError(
                f"of= takes a component name or a sequence of them, not {of!r}"
            ) from None
    known = world.components
    for component in named:
        if not isinstance(component, str):
            raise TypeError(f"of= takes component names (str), not {component!r}")
        if component not in known:
            raise ValueError(
                f"of=: no component {component!r} in this world; registered: "
                f"{', '.join(known) or '(none)'}"
            )
    found = list(dict.fromkeys(named))
    for reporter in reporters:
        if reporter.component is not None and reporter.component not in found:
            found.append(reporter.component)
    return tuple(found)


def checked_values(reporter: AgentReporter, value: Any, count: int) -> np.ndarray:
    """A callable reporter's answer as an array of ``count`` rows, a copy.

    O(count) for the copy.

    Raises
    ------
    ValueError
        If the answer is not an array of ``count`` rows.

    Examples
    --------
    >>> r = AgentReporter("twice", None, None, None)
    >>> checked_values(r, [1, 2], 2).tolist()
    [1, 2]
    """
    array = np.array(value, copy=True)
    if array.ndim == 0 or array.shape[0] != count:
        got = "a scalar" if array.ndim == 0 else f"{array.shape[0]} rows"
        raise ValueError(
            f"agent reporter {reporter.name!r} returned {got}; it must return "
            f"one value per agent, {count} rows"
        )
    if array.dtype.kind == "O":
        raise ValueError(
            f"agent reporter {reporter.name!r} returned Python objects (dtype "
            "object); return a numeric, bool or fixed-width string array"
        )
    return array
