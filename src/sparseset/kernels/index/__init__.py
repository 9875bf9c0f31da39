"""The index kinds' compiled side: id -> position lookup structures.

:mod:`.flat` (one uint32 slot per id), :mod:`.paged` (a radix tree of
pages) and :mod:`.hashed` (open addressing) each say everything about
their kind; :mod:`.kinds` dispatches every index operation on the index's
type, so a kernel is written once for all three.
"""

from . import flat, hashed, kinds, paged

__all__ = ["flat", "hashed", "kinds", "paged"]
