"""Systems and schedules: declared access, checked order, parallel batches.

- :mod:`.order`: conflicts, batches and ambiguities from what systems declare;
- :mod:`.schedule`: :class:`Schedule`, which runs them on a world.
"""

from .order import Access, conflicts
from .schedule import Changes, Schedule, System, in_spans

__all__ = ["Access", "Changes", "Schedule", "System", "conflicts", "in_spans"]
