"""Ctrl-C never lands in the middle of a container's call.

A ``KeyboardInterrupt`` is how Python delivers Ctrl-C: the operating
system's SIGINT sets a flag, and the main thread's interpreter, at its
next check between two bytecodes, calls the Python-level handler, which
raises. Between two statements of a call that validates, grows arrays,
runs a kernel and then updates its counts, that exception would leave the
container half changed.

So this module's SIGINT handler (:func:`on_sigint`) looks at what the
main thread was running when the signal came: if a *critical* frame is on
its stack (a guarded call of a container, see :mod:`.locking`, or a
function marked with :func:`critical`) with no *open* frame (user code
the library calls: a hook, a system; see :func:`call_outside`) nearer the
top, the interrupt is kept pending and delivered once the critical call
has returned; otherwise it raises at once, as Python's own handler does.
Nothing is paid per call: the frames are looked at only when a signal
comes. The pending interrupt is delivered by asking the interpreter again
(``_thread.interrupt_main``) from a short-lived thread, a millisecond
later and then less and less often, until the main thread is outside
every critical frame; so each call either happens whole, and the
``KeyboardInterrupt`` comes right after it, or not at all.

:func:`install` puts the handler in place, only over Python's default
one (``signal.default_int_handler``) and only from the main thread; it
runs when :mod:`sparseset` is imported. A program that installs its own
SIGINT handler keeps it (and loses the deferral); :func:`uninstall`
gives Python's back. Note that ``asyncio.run`` installs its own
Ctrl-C handling only over Python's default handler, so under sparseset
it does not.

Examples
--------
>>> import signal
>>> previous = signal.signal(signal.SIGINT, signal.default_int_handler)
>>> install(), signal.getsignal(signal.SIGINT) is on_sigint
(True, True)
>>> _ = signal.signal(signal.SIGINT, previous)
>>> @critical
... def commit(): ...
>>> commit.__code__ in CRITICAL
True
"""

from __future__ import annotations

import _thread
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, ParamSpec, TypeVar

import numba

P = ParamSpec("P")
R = TypeVar("R")

#: Code objects of the frames an interrupt must not land in.
CRITICAL: set[Any] = set()
#: Code objects of the frames that run user code on the library's behalf:
#: an interrupt there is the user code's, and raises at once.
OPEN: set[Any] = set()
#: Whether an interrupt is waiting for the critical call to end (a list,
#: so no ``global``: shared by the handler and the delivering threads).
PENDING: list[bool] = [False]
#: Seconds before the first delivery attempt, and the most between two.
FIRST_RETRY = 0.001
LAST_RETRY = 0.05


def critical(function: Callable[P, R]) -> Callable[P, R]:
    """Mark ``function`` critical: an interrupt that comes while it runs
    (on the main thread) waits until no critical frame is left. Returns
    ``function`` itself; marking costs nothing per call.

    Examples
    --------
    >>> @critical
    ... def step(): return 1
    >>> step()
    1
    """
    CRITICAL.add(function.__code__)
    return function


def call_outside(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Call user code (a hook, a system) from inside a critical call: an
    interrupt that comes while it runs raises there at once.

    Examples
    --------
    >>> call_outside(max, 3, 4)
    4
    """
    return function(*args, **kwargs)


OPEN.add(call_outside.__code__)


@critical
def numba_threads() -> int:
    """``numba.get_num_threads()``, which no interrupt splits: numba takes a
    process-wide lock for it, and a ``KeyboardInterrupt`` raised as that
    lock's ``__exit__`` begins would keep it for ever (every other thread's
    next call would wait on it).

    Examples
    --------
    >>> numba_threads() >= 1
    True
    """
    threads: int = numba.get_num_threads()
    return threads


@critical
def set_numba_threads(count: int) -> None:
    """``numba.set_num_threads(count)``, which no interrupt splits (see
    :func:`numba_threads`).

    Examples
    --------
    >>> before = numba_threads(); set_numba_threads(1); numba_threads()
    1
    >>> set_numba_threads(before)
    """
    numba.set_num_threads(count)


def must_wait(frame: FrameType | None) -> bool:
    """Whether an interrupt that comes in ``frame`` must wait: a critical
    frame is on its stack, with no open frame nearer the top.

    Examples
    --------
    >>> import sys; must_wait(sys._getframe())
    False
    """
    while frame is not None:
        code = frame.f_code
        if code in OPEN:
            return False
        if code in CRITICAL:
            return True
        frame = frame.f_back
    return False


def deliver_later(delay: float) -> None:
    """On a thread of its own (no lock of ``threading`` taken, as a signal
    handler may have interrupted code holding one): wait ``delay`` seconds,
    then have the main thread's handler run again if an interrupt is still
    pending."""
    time.sleep(delay)
    if PENDING[0]:
        _thread.interrupt_main(signal.SIGINT)


#: Delay of the next delivery attempt (grows while a call stays critical).
RETRY: list[float] = [FIRST_RETRY]


def on_sigint(signum: int, frame: FrameType | None) -> None:
    """The SIGINT handler: ``KeyboardInterrupt`` now, or once the main
    thread has left its critical frames.

    Examples
    --------
    >>> try:
    ...     on_sigint(signal.SIGINT, None)  # no critical frame: raises now
    ... except KeyboardInterrupt:
    ...     print("interrupted")
    interrupted
    """
    if must_wait(frame):
        delay = RETRY[0] if PENDING[0] else FIRST_RETRY
        PENDING[0] = True
        RETRY[0] = min(delay * 2, LAST_RETRY)
        _thread.start_new_thread(deliver_later, (delay,))
        return
    PENDING[0] = False
    RETRY[0] = FIRST_RETRY
    raise KeyboardInterrupt


def install() -> bool:
    """Put :func:`on_sigint` in place of Python's default SIGINT handler;
    False (and nothing changed) if another handler is installed or this is
    not the main thread.

    Examples
    --------
    >>> install() in (True, False)
    True
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        current = signal.getsignal(signal.SIGINT)
        if current is on_sigint:
            return True
        if current is not signal.default_int_handler:
            return False
        signal.signal(signal.SIGINT, on_sigint)
    except (ValueError, OSError):  # no signals here (a subinterpreter, ...)
        return False
    return True


def uninstall() -> None:
    """Give SIGINT back to Python's default handler, if ours holds it.

    Examples
    --------
    >>> previous = signal.signal(signal.SIGINT, on_sigint)
    >>> uninstall(); signal.getsignal(signal.SIGINT) is signal.default_int_handler
    True
    >>> _ = signal.signal(signal.SIGINT, previous)
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is on_sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)


install()

__all__ = [
    "CRITICAL",
    "OPEN",
    "PENDING",
    "call_outside",
    "critical",
    "install",
    "must_wait",
    "numba_threads",
    "on_sigint",
    "set_numba_threads",
    "uninstall",
]
