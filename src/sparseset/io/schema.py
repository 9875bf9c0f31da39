"""Column schemas: what a store's columns are called and what their rows hold.

A schema is ``{name: (dtype, row_shape)}``. :func:`parse_schema` turns
what users write (a dict of dtypes, of ``(dtype, shape)`` pairs, or a
structured dtype) into that form and refuses what a column cannot be. The
stores, the Arrow/pandas readers and the world loader all check columns
through it.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np

#: ``{column name: (dtype, row shape)}``, in column order.
Schema: TypeAlias = dict[str, tuple[np.dtype[Any], tuple[int, ...]]]

#: Names no column may have, with what they name instead.
RESERVED = {
    "touch": "it declares writes (store.touch, w.touch, a twin's touch)",
}


def parse_schema(schema: Any) -> Schema:
    """Normalise a schema to ``{name: (dtype, row_shape)}``.

    Accepts ``{"pos": ("f8", 3), "mass": "f4"}`` (a dtype, or a dtype with a
    row shape) or a numpy structured dtype (one column per field). Raises
    ``ValueError`` for a name a column cannot have and ``TypeError`` for a
    dtype it cannot hold.

    A column name is any Python identifier that does not start with an
    underscore (names with one are the containers' own) and is not
    ``touch``, reserved for declaring writes (``store.touch``, a twin's
    ``touch``). Other names a jit twin also has as members (``size``,
    ``ids``, ``index``, ``add``, ...) are fine: a twin reaches every column
    as ``twin["name"]``, and as the attribute ``twin.name`` where no member
    of the twin has that name.

    Examples
    --------
    >>> parse_schema({"pos": ("f8", 3), "size": "f4"})
    {'pos': (dtype('float64'), (3,)), 'size': (dtype('float32'), ())}
    >>> parse_schema({"_ids": "i8"})
    Traceback (most recent call last):
    ...
    ValueError: column name '_ids' starts with an underscore, which ...
    >>> parse_schema({"touch": "f8"})
    Traceback (most recent call last):
    ...
    ValueError: column name 'touch' is reserved: it declares writes ...
    """
    if isinstance(schema, np.dtype) or (
        not isinstance(schema, Mapping) and schema is not None
    ):
        dtype = np.dtype(schema)
        if dtype.names is None:
            raise TypeError(
                f"schema must be a dict of columns or a structured dtype, "
                f"got {schema!r}"
            )
        fields: Mapping[str, Any] = dtype.fields or {}
        schema = {name: fields[name][0] for name in dtype.names}
    parsed = {}
    for name, spec in (schema or {}).items():
        if (
            not isinstance(name, str)
            or not name.isidentifier()
            or keyword.iskeyword(name)
        ):
            raise ValueError(f"column name {name!r} is not a Python identifier")
        if name.startswith("_"):
            raise ValueError(
                f"column name {name!r} starts with an underscore, which names "
                "the containers' own fields"
            )
        if name in RESERVED:
            raise ValueError(
                f"column name {name!r} is reserved: {RESERVED[name]}; "
                "name the column otherwise"
            )
        if isinstance(spec, tuple) and len(spec) == 2:
            dtype, shape = np.dtype(spec[0]), spec[1]
            shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
        else:
            dtype, shape = np.dtype(spec), ()
        # A sub-array dtype such as ("f8", (3,)) carries its own row shape,
        # innermost, as numpy nests np.dtype((sub_dtype, shape)).
        shape = tuple(int(s) for s in shape + dtype.shape)
        dtype = dtype.base
        if dtype.hasobject:
            raise TypeError(f"column {name!r}: object dtypes cannot be stored")
        if dtype.itemsize == 0:
            raise ValueError(f"column {name!r}: dtype {dtype} holds no data")
        if any(s <= 0 for s in shape):
            raise ValueError(f"column {name!r}: row shape {shape} holds no data")
        parsed[name] = (dtype, shape)
    return parsed


__all__ = ["RESERVED", "Schema", "parse_schema"]
