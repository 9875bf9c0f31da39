"""jit twins: structref objects that share a container's state inside ``@njit`` code.

- :mod:`.structs`: structref plumbing (reading and writing fields by name,
  building a struct from values) shared by every twin type;
- :mod:`.twins`: the twin type of sets, stores and World stores, its
  Python proxy and its compiled methods.
"""

from .twins import Twin, TwinType, make_twin

__all__ = ["Twin", "TwinType", "make_twin"]
