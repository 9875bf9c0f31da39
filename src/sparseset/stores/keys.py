"""How the ids a store's user passes become the keys of its index.

A :class:`~sparseset.ComponentStore` keys its rows by the ids it is given:
:class:`IdKeys`, where an id is its own key. A World's component store
takes entity handles and keys its rows by entity index; it hands its store
a key map of the same shape (``sparseset.world.entity_store.HandleKeys``).
The store asks its key map, and nothing else, how to read ids, how to name
a missing one and what its ids are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..sets.ids import as_ids, describe

if TYPE_CHECKING:
    from ..sets.engine import SetState


class KeyMap(Protocol):
    """What a store asks of its key map."""

    def keys_of(self, ids: Any, consequence: str) -> tuple[np.ndarray, bool]:
        """``ids`` as keys, all of which must be valid (else raise, with
        ``consequence`` saying what did not happen); and whether one id."""

    @property
    def index_of(self) -> Callable[[int], int] | None:
        """One non-negative int id's key, -1 where it has none (a dead
        handle; :meth:`key_of` then says why); None where every id is its
        own key. For one-id calls, where :meth:`key_of`'s frame costs."""

    def rows_of(self, ids: Any, state: SetState) -> tuple[np.ndarray, bool] | None:
        """The rows of ``ids`` in the set ``state`` (its index, ``dense`` and
        ``n``), and whether one id, where every id is valid and has a row,
        found in one pass that :meth:`keys_of` and a lookup would make in
        two; None where some id has none or is not valid (the caller then
        takes the path that says why), or where the key map has no such
        pass."""

    def key_of(self, x: int) -> int:
        """One non-negative int id as its key (raising as ``keys_of``)."""

    def lacking(self, ids: Any, k: int, scalar: bool) -> str:
        """The message for ``ids[k]`` not being in the store."""

    def ids_of(self, keys: np.ndarray) -> np.ndarray:
        """What the store's user calls the rows keyed by ``keys``."""

    def twin_entities(self) -> tuple[np.ndarray, ...] | None:
        """What a jit twin needs to take these ids (None: plain ids)."""

    def table_kind(self, ids: np.ndarray, kind: str) -> str:
        """The index kind a store read back from a table of ``ids`` (what
        the user calls the rows) should have; ``kind`` is the store's
        (``"auto"`` for one that adapts)."""


class IdKeys:
    """Plain ids: each id is its own key.

    Examples
    --------
    >>> keys = IdKeys()
    >>> keys.keys_of([3, 1], "nothing changed")[0].tolist(), keys.key_of(7)
    ([3, 1], 7)
    >>> keys.lacking([3, 1], 1, False)
    'ids[1] = 1 is not in the store'
    """

    __slots__ = ()

    #: Every id is its own key.
    index_of = None

    def keys_of(self, ids: Any, consequence: str) -> tuple[np.ndarray, bool]:
        """``ids`` as an id array (see :func:`~sparseset.sets.ids.as_ids`)."""
        return as_ids(ids)

    def rows_of(self, ids: Any, state: SetState) -> None:
        """None: an id is its own key, so :meth:`keys_of` and the store's
        lookup are already one pass over the ids."""
        return None

    def key_of(self, x: int) -> int:
        """The id itself."""
        return x

    def lacking(self, ids: Any, k: int, scalar: bool) -> str:
        """``ids[k] = ... is not in the store``."""
        return f"{describe(as_ids(ids)[0], k, scalar, ids)} is not in the store"

    def ids_of(self, keys: np.ndarray) -> np.ndarray:
        """The keys themselves."""
        return keys

    def twin_entities(self) -> None:
        """None: a plain store's twin takes ids."""
        return None

    def table_kind(self, ids: np.ndarray, kind: str) -> str:
        """The store's own kind."""
        return kind


__all__ = ["IdKeys", "KeyMap"]
