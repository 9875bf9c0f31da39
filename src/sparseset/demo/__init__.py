"""A particle simulation on a :class:`~sparseset.World`: ``python -m sparseset demo``.

:mod:`.particles` holds the world, its systems and the timed run
(:func:`run_demo`); see its docstring for the command line.
"""

from .particles import (
    BOX,
    BOX_CELLS,
    CELL,
    DRAG_SHARE,
    DT,
    GRAVITY,
    GRID,
    MORTAL_SHARE,
    DemoSummary,
    ParticleWorld,
    apply_drag,
    despawn_expired,
    integrate,
    plot,
    run_demo,
)

__all__ = [
    "BOX",
    "BOX_CELLS",
    "CELL",
    "DRAG_SHARE",
    "DT",
    "GRAVITY",
    "GRID",
    "MORTAL_SHARE",
    "DemoSummary",
    "ParticleWorld",
    "apply_drag",
    "despawn_expired",
    "integrate",
    "plot",
    "run_demo",
]
