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
from .sets import Checkpoint, SetArray, SparseSet
from .stores import ComponentStore, SparseMap, UnknownColumnError
from .world import (
    DeadHandleError,
    EntityStore,
    Group,
    UnknownComponentError,
    View,
    World,
)

# The public classes answer to the package's name (as numpy's do): reprs,
# tracebacks and pickles name ``sparseset.SparseSet``, not the module that
# defines it, so moving code between modules breaks no saved pickle.
for _public in (
    Checkpoint,
    ComponentStore,
    DeadHandleError,
    EntityStore,
    FormatError,
    Group,
    SetArray,
    SparseMap,
    SparseSet,
    UnknownColumnError,
    UnknownComponentError,
    View,
    World,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "Checkpoint",
    "ComponentStore",
    "DeadHandleError",
    "EntityStore",
    "FormatError",
    "Group",
    "SetArray",
    "SparseMap",
    "SparseSet",
    "UnknownColumnError",
    "UnknownComponentError",
    "View",
    "World",
    "__version__",
]
