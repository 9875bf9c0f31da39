"""Shared test configuration: hypothesis profiles.

numba compiles a kernel the first time it meets a new combination of argument
types, which can take seconds, so no profile has a deadline.

- ``ci``: bounded, for CI machines (2 cores, a few minutes for the whole run).
  Selected when ``CI`` is set or ``HYPOTHESIS_PROFILE=ci``.
- ``dev``: the default; a few more examples, still quick.
- ``thorough``: opt-in (``HYPOTHESIS_PROFILE=thorough``) for a long soak.
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}

settings.register_profile("ci", max_examples=50, stateful_step_count=30, **_COMMON)
settings.register_profile("dev", max_examples=100, stateful_step_count=40, **_COMMON)
settings.register_profile(
    "thorough", max_examples=2_000, stateful_step_count=100, **_COMMON
)


def _profile_name() -> str:
    explicit = os.environ.get("HYPOTHESIS_PROFILE")
    if explicit:
        return explicit
    if os.environ.get("CI"):
        return "ci"
    return "dev"


settings.load_profile(_profile_name())
