"""``python -m sparseset``: see :mod:`sparseset.cli`."""

from .cli import main

if __name__ == "__main__":  # not when a test runner imports this module
    raise SystemExit(main())
