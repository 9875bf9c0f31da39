"""Checkpoint marks: the stack of saved member counts that rollback restores.

A set's state keeps ``marks``, an int64 array of rows ``(n, epoch, stamp)``,
and ``depth``, how many rows are in use. A checkpoint pushes the member
count, the epoch (which every change that invalidates checkpoints moves:
an add of a new member, clear, sort, growth) and a stamp that no other
checkpoint of the set ever gets; its token is ``(owner, serial, stamp)``,
``serial`` being its row. A token is live while its row still holds its
stamp and the epoch has not moved since. Rolling back to a row drops the
rows above it, so tokens nest like a stack.

These run as plain Python from the containers and inline in ``@njit`` code
(the jit twins), on the same arrays, so a checkpoint taken on either side
can be rolled back on the other.
"""

import numpy as np
from numba.extending import register_jitable

#: Columns of a ``marks`` row.
COUNT, EPOCH, STAMP = 0, 1, 2


def empty_marks() -> np.ndarray:
    """A marks array with room for a few checkpoints.

    Examples
    --------
    >>> empty_marks().shape
    (4, 3)
    """
    return np.zeros((4, 3), np.int64)


#: The marks of a state that has never taken a checkpoint, shared by every
#: such state: it has no rows, so nothing is ever written to it, and the
#: first checkpoint grows it into an array of the state's own. A new set
#: then costs no allocation for its checkpoints.
NO_MARKS = np.zeros((0, 3), np.int64)


@register_jitable
def push_mark(marks, depth, n, epoch, stamp):
    """Push a checkpoint of ``n`` members at ``epoch`` with ``stamp``.

    Rows left by an older epoch are stale and dropped first. Returns
    ``(marks, depth)``: ``marks`` is a new, larger array when it was full;
    the new checkpoint's serial is ``depth - 1``.

    Examples
    --------
    >>> marks, depth = push_mark(empty_marks(), 0, 5, 0, 0)
    >>> marks, depth = push_mark(marks, depth, 3, 0, 1)
    >>> depth, marks[:depth].tolist()
    (2, [[5, 0, 0], [3, 0, 1]])
    >>> push_mark(marks, depth, 3, 1, 2)[1]  # the epoch moved: both stale
    1
    """
    if depth == marks.shape[0]:
        marks = grown_marks(marks)
    return marks, put_mark(marks, depth, n, epoch, stamp)


@register_jitable
def grown_marks(marks):
    """A marks array twice as large, holding the rows of ``marks``.

    Examples
    --------
    >>> grown_marks(empty_marks()).shape, grown_marks(NO_MARKS).shape
    ((8, 3), (4, 3))
    """
    grown = np.zeros((max(4, 2 * marks.shape[0]), 3), np.int64)
    grown[: marks.shape[0]] = marks
    return grown


@register_jitable
def put_mark(marks, depth, n, epoch, stamp):
    """:func:`push_mark` into a ``marks`` with room for one more row (the
    caller checked): never allocates. Returns the new depth.

    Examples
    --------
    >>> put_mark(empty_marks(), 0, 5, 0, 0)
    1
    """
    if depth > 0 and marks[depth - 1, EPOCH] != epoch:
        depth = 0
    marks[depth, COUNT] = n
    marks[depth, EPOCH] = epoch
    marks[depth, STAMP] = stamp
    return depth + 1


@register_jitable
def marked_count(marks, depth, epoch, serial, stamp):
    """The member count checkpoint ``(serial, stamp)`` saved, or -1 if it
    is no longer live (dropped by a rollback to an older one, or taken
    before the epoch moved).

    Examples
    --------
    >>> marks, depth = push_mark(empty_marks(), 0, 5, 0, 7)
    >>> int(marked_count(marks, depth, 0, 0, 7)), marked_count(marks, depth, 1, 0, 7)
    (5, -1)
    """
    if serial < 0 or serial >= depth:
        return -1
    if marks[serial, STAMP] != stamp or marks[serial, EPOCH] != epoch:
        return -1
    return marks[serial, COUNT]


@register_jitable
def is_live(marks, depth, epoch):
    """Whether the newest checkpoint is still live (appends past ``n`` must
    then not overwrite the ids it can restore before a batch is validated).

    Examples
    --------
    >>> marks, depth = push_mark(empty_marks(), 0, 5, 0, 0)
    >>> [bool(is_live(marks, depth, epoch)) for epoch in (0, 1)], is_live(marks, 0, 0)
    ([True, False], False)
    """
    return depth > 0 and marks[depth - 1, EPOCH] == epoch
