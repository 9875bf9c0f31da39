"""A particle simulation on a :class:`~sparseset.World`: ``python -m sparseset demo``.

:mod:`.particles` holds the world, its systems and the timed run
(:func:`run_demo`); see its docstring for the command line.
"""

from .particles import (
    BOX,
    DRAG_SHARE,
    DT,
    GRAVITY,
    GRID,
    MORTAL_SHARE,
    DemoSummary,
    ParticleWorld,
    apply_drag,
    cells_of,
    despawn_expired,
    integrate,
    plot,
    rebucket,
    run_demo,
)

__all__ = [
    "BOX",
    "DRAG_SHARE",
    "DT",
    "GRAVITY",
    "GRID",
    "MORTAL_SHARE",
    "DemoSummary",
    "ParticleWorld",
    "apply_drag",
    "cells_of",
    "despawn_expired",
    "integrate",
    "plot",
    "rebucket",
    "run_demo",
]
