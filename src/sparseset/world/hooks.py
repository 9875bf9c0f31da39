"""Batch hooks: functions a world calls with the handles a call changed.

``world.on_add(name, fn)`` calls ``fn(handles)`` once after each call that
gives entities component ``name`` (new members only: a replacement is no
addition); ``world.on_remove(name, fn)`` once before each call that takes
it from entities (``remove``, ``discard``, ``destroy``, ``clear``), while
their rows can still be read. A hook gets an int64 array of handles, never
one entity at a time and never an empty array.

A hook runs inside the call that triggered it, holding the world's lock.
Structural changes it makes (``create``, ``destroy``, ``add``, ``remove``,
``discard``, ``clear``) are deferred: recorded in a
:class:`~.commands.Commands` buffer and applied, in order, once the
triggering call has completed; ``create`` returns its handles at once, the
others return 0. Other calls (reads, ``set``, column writes) run at once.

Errors: a hook that raises stops the call and drops what the hooks of that
call deferred. An ``on_remove`` hook runs before anything is removed, so
the world is unchanged; an ``on_add`` hook runs after the rows are in, so
the addition stays.

Changes made inside ``@njit`` code through a twin (its ``add`` and
``remove``) are not calls of the world's: they run no hook.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .commands import Commands

#: A hook: called with the handles of one call's entities.
Hook = Callable[[np.ndarray], object]
#: The events a hook can follow.
EVENTS = ("add", "remove")


class Subscription:
    """A hook's registration; ``close()`` unsubscribes it.

    Also a context manager that closes it at the end of the block.

    Examples
    --------
    >>> from sparseset import World
    >>> w = World(); w.register("tag"); seen = []
    >>> hook = w.on_add("tag", seen.append)
    >>> w.add("tag", w.create(2)); hook.close(); w.add("tag", w.create(1))
    2
    1
    >>> [h.tolist() for h in seen], hook.closed
    ([[0, 1]], True)
    """

    __slots__ = ("_hook", "_hooks")

    def __init__(self, hooks: list[Hook], hook: Hook) -> None:
        self._hooks: list[Hook] | None = hooks
        self._hook = hook

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called.

        O(1).
        """
        return self._hooks is None

    def close(self) -> None:
        """Stop calling the hook (closing twice is fine).

        Notes
        -----
        O(h) for the h hooks of the same event and component.
        """
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            # By identity: two subscriptions of one function are two hooks.
            for k, hook in enumerate(hooks):
                if hook is self._hook:
                    del hooks[k]
                    break

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<sparseset Subscription {self._hook!r} ({state})>"


class Reactor:
    """A world's hooks, and the buffer where its hooks' structural calls wait.

    Shared by a world and its stores: a store asks :meth:`watching` before
    working out which handles an event concerns, runs its change inside
    :meth:`dispatch`, and defers a structural call while :attr:`deferring`.

    Examples
    --------
    >>> r = Reactor(); seen = []
    >>> sub = r.subscribe("add", "pos", seen.append)
    >>> r.watching("add", "pos"), r.watching("remove", "pos")
    (True, False)
    """

    __slots__ = ("_hooks", "_running", "buffer", "make_buffer")

    def __init__(self, make_buffer: Callable[[], Commands] | None = None) -> None:
        self._hooks: dict[tuple[str, str], list[Hook]] = {}
        #: Hooks running now (nested: a hook's own reads may run hooks).
        self._running = 0
        #: The triggering call's buffer, while one is in progress.
        self.buffer: Commands | None = None
        #: Makes an empty buffer for the world (set by the world).
        self.make_buffer = make_buffer

    def subscribe(self, event: str, name: str, hook: Any) -> Subscription:
        """Call ``hook(handles)`` on ``event`` (``"add"`` or ``"remove"``)
        of component ``name``."""
        if event not in EVENTS:
            raise ValueError(f"event must be one of {EVENTS}, not {event!r}")
        if not callable(hook):
            raise TypeError(f"a hook must be callable, not {hook!r}")
        hooks = self._hooks.setdefault((event, name), [])
        hooks.append(hook)
        return Subscription(hooks, hook)

    def watching(self, event: str, name: str) -> bool:
        """Whether any hook follows ``event`` of ``name``."""
        return bool(self._hooks.get((event, name)))

    @property
    def deferring(self) -> bool:
        """Whether a hook is running: structural calls wait in :attr:`buffer`."""
        return self._running > 0

    def defer(self) -> Commands:
        """The buffer a structural call made inside a hook goes to."""
        assert self.buffer is not None  # a hook runs inside dispatch
        return self.buffer

    @contextmanager
    def dispatch(self) -> Iterator[Callable[[str, str, np.ndarray], None]]:
        """Run a triggering call: the block calls the function it gets,
        ``fire(event, name, handles)``, for each event. The outermost block
        applies what the hooks deferred once it has completed, or drops it
        if the block raised."""
        outer = self.buffer is None
        if self.buffer is None:
            assert self.make_buffer is not None
            self.buffer = self.make_buffer()
        buffer: Commands = self.buffer
        try:
            yield self._fire
        except BaseException:
            if outer:
                self.buffer = None
                buffer.drop()
            raise
        if outer:
            self.buffer = None
            buffer.apply()

    def _fire(self, event: str, name: str, handles: np.ndarray) -> None:
        hooks = self._hooks.get((event, name))
        if not hooks or not handles.shape[0]:
            return
        handles.flags.writeable = False  # one array, shared by every hook
        self._running += 1
        try:
            for hook in list(hooks):  # a hook may close itself or others
                hook(handles)
        finally:
            self._running -= 1


__all__ = ["EVENTS", "Hook", "Reactor", "Subscription"]
