"""The slot operations of an index kind whose slots hold positions alone.

A flat or paged slot holds a position and nothing to say whose it is, so
garbage looks like a position: such a kind can neither tell a free slot
(:func:`vacant`) nor keep a count in one (:func:`tally`, :func:`tally_from`,
:func:`settle`).
:mod:`.flat` and :mod:`.paged` take these answers as their own; call them
through :mod:`.kinds`, which the hash kind answers otherwise.
"""

import numpy as np
from numba.extending import register_jitable


@register_jitable
def tally(index, slot, x, p):
    """0: slots hold plain positions only (no tallies, see :mod:`.hashed`)."""
    return 0


@register_jitable
def tally_from(index, slot, p):
    """Nothing: no slot tallies (its callers check :func:`tally` first)."""


@register_jitable
def settle(index, slot):
    """``(0, 0)``: no slot tallies."""
    return np.uint64(0), np.uint64(0)


@register_jitable
def slot_count(index):
    """0: no slot tallies."""
    return np.uint64(0)


@register_jitable
def vacant(index, slot):
    """False: a slot holding garbage looks like one holding a position."""
    return False
