"""``python -m sparseset``: the command line (``demo`` and ``bench``)."""

from .commands import build_parser, main

__all__ = ["build_parser", "main"]
