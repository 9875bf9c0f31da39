"""The World: generational entity handles over component stores.

- :mod:`.entities`: the entity table (generations, liveness, free list);
- :mod:`.entity_store`: a component store keyed by entity;
- :mod:`.view`: joins over stores; :mod:`.group`: owning groups;
- :mod:`.persistence`: a world's saved state, validated on load;
- :mod:`.world`: :class:`World`, the registry and life cycle.
"""

from .entities import DeadHandleError
from .entity_store import EntityStore
from .group import Group
from .view import NO_ROW, View
from .world import UnknownComponentError, World

__all__ = [
    "NO_ROW",
    "DeadHandleError",
    "EntityStore",
    "Group",
    "UnknownComponentError",
    "View",
    "World",
]
