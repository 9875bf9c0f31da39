"""Sparse sets and struct-of-arrays component storage, compiled with numba.

Importing the package compiles nothing: kernels compile (or load from
numba's on-disk cache) the first time they are called.

Examples
--------
>>> import numpy as np
>>> import sparseset
>>> s = sparseset.SparseSet()
>>> s.add(np.arange(10))
10
>>> 5 in s
True
"""

from ._version import __version__
from .io import FormatError
from .recording import Recorder
from .schedule import Schedule
from .sets import Checkpoint, SetArray, SparseSet
from .spaces import Grid
from .stores import ComponentStore, SparseMap, UnknownColumnError
from .world import (
    NO_ROW,
    DeadHandleError,
    EntityStore,
    Group,
    UnknownComponentError,
    View,
    World,
)

# The public exceptions answer to the package's name (as numpy's do):
# tracebacks and pickles say ``sparseset.FormatError``, not the module that
# defines it. (Classes with methods keep their modules: doctest finds a
# method's examples only in the module that defines it.)
for _public in (
    DeadHandleError,
    FormatError,
    UnknownColumnError,
    UnknownComponentError,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "NO_ROW",
    "Checkpoint",
    "ComponentStore",
    "DeadHandleError",
    "EntityStore",
    "FormatError",
    "Grid",
    "Group",
    "Recorder",
    "Schedule",
    "SetArray",
    "SparseMap",
    "SparseSet",
    "UnknownColumnError",
    "UnknownComponentError",
    "View",
    "World",
    "__version__",
]
