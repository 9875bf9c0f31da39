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
from .entities import DeadHandleError
from .entity_store import EntityStore
from .group import Group
from .io import FormatError
from .set_array import SetArray
from .sparse_set import Checkpoint, SparseSet
from .store import ComponentStore, SparseMap, UnknownColumnError
from .view import View
from .world import UnknownComponentError, World

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
