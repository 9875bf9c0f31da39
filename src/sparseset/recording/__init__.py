"""Recording a World as it runs: Mesa's DataCollector, in Arrow and Parquet.

- :mod:`.reporters`: what is recorded, resolved and checked once;
- :mod:`.tables`: recorded steps as Arrow tables, in memory or on disk;
- :mod:`.recorder`: :class:`Recorder`, which records a step per call.
"""

from .recorder import Recorder

__all__ = ["Recorder"]
