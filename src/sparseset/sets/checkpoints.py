"""Checkpoint tokens: the one token type of every container that backtracks.

A :class:`~sparseset.SparseSet` and a :class:`~sparseset.SetArray` (and
their jit twins) undo removals back to a checkpoint. Each container has an
``owner`` number drawn from one counter (:func:`next_owner`), so a token
names the container it came from, and a token from another container is
refused rather than misread. ``serial`` is the checkpoint's place in its
container's stack and ``stamp`` the checkpoint itself (see
:mod:`sparseset.kernels.marks`).
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

_owners = itertools.count(1)


class Checkpoint(NamedTuple):
    """A token from ``checkpoint()``; pass it to ``rollback``.

    ``owner`` names the container, ``serial`` the checkpoint's place in its
    stack and ``stamp`` the checkpoint itself. A jit twin's ``checkpoint()``
    returns the same three numbers as a plain tuple, and either side rolls
    back to either's tokens.

    Examples
    --------
    >>> from sparseset import SparseSet
    >>> s = SparseSet.from_ids([1, 2]); token = s.checkpoint()
    >>> type(token).__name__, token.serial
    ('Checkpoint', 0)
    """

    owner: int
    serial: int
    stamp: int


def next_owner() -> int:
    """A number no other container of this process has.

    Examples
    --------
    >>> next_owner() != next_owner()
    True
    """
    return next(_owners)


def is_token(token: Any) -> bool:
    """Whether ``token`` has a checkpoint's shape: three integers (a
    :class:`Checkpoint`, or the plain tuple a jit twin returns).

    Examples
    --------
    >>> is_token(Checkpoint(1, 0, 0)), is_token((1, 0, 0)), is_token((1, 0))
    (True, True, False)
    """
    return (
        isinstance(token, tuple)
        and len(token) == 3
        and all(isinstance(v, int | np.integer) for v in token)
    )


__all__ = ["Checkpoint", "is_token", "next_owner"]
