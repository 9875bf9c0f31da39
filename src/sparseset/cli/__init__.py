"""``python -m sparseset``: the command line (``demo``, ``bench`` and ``warm``)."""

from .commands import build_parser, main
from .warming import Warmed, kernel_signatures, warm

__all__ = ["Warmed", "build_parser", "kernel_signatures", "main", "warm"]
