"""jit: the one structref type of the states compiled code shares.

A set's, a store's and a World store's jit twin and a SetArray's state are
values of one numba ``structref`` type, :class:`TwinType`, declared once at
module level and parametrised only by its fields, so user
``@njit(cache=True)`` functions that take any of them cache. Split as
numba's typed dict is:

- :mod:`.types`: the type, its data model, attribute typing and lowering,
  and the plumbing that builds a struct from values and reads it back;
- :mod:`.methods`: the compiled methods ``@njit`` code calls on a state;
- :mod:`.proxy`: the Python side, :class:`Twin` and :class:`SetArrayState`;
- :mod:`.twins`: building a state from a container's arrays.

:mod:`.commands` is a second structref type, :class:`CommandBufferType`:
the command buffer ``@njit`` systems record structural changes into
(``cmd.jit`` of a ``w.deferred()`` block).
"""

from .commands import CommandBuffer, CommandBufferType, make_command_buffer
from .proxy import SetArrayState, Twin
from .twins import make_set_array_state, make_twin
from .types import TwinType

__all__ = [
    "CommandBuffer",
    "CommandBufferType",
    "SetArrayState",
    "Twin",
    "TwinType",
    "make_command_buffer",
    "make_set_array_state",
    "make_twin",
]
